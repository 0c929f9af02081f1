package match

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF       tokKind = iota
	tID                // field or predicate name
	tString            // quoted string; text is unescaped
	tNumber            // integer, address or MAC, possibly masked
	tAddrSet           // $name; text is the name
	tPortGroup         // @name; text is the name
	tLParen
	tRParen
	tLCurly
	tRCurly
	tLSquare
	tRSquare
	tEllipsis // "..", between the bounds of a subfield
	tComma
	tEq
	tNe
	tLt
	tLe
	tGt
	tGe
	tNot
	tAnd
	tOr
	tAssign // a single "=", only ever an error
)

// token is one lexeme. off and end are byte offsets into the input.
type token struct {
	kind     tokKind
	off, end int
	text     string
	num      number
}

// isRelop reports whether the token is one of == != < <= > >=.
func (t token) isRelop() bool { return t.kind >= tEq && t.kind <= tGe }

// lexer turns the input into tokens one at a time, as the parser asks for them, so
// that errors come out in the order a reader meets them: a bad constant late in the
// input does not hide a misspelled field before it. Lexical errors panic via failf.
type lexer struct {
	src string
	pos int
	// commentNewlineEnd is the offset just past the newline that closes the last //
	// comment skipped, so that Expr.String can keep it.
	commentNewlineEnd int
}

// skipSpace returns the offset of the next token at or after pos, skipping white space
// and comments. As in OVN, `//` runs to the end of the line and `/* */` may not span
// lines. A comment that is never closed, or a lone '/', is reported as errOff/errMsg.
//
// A `//` comment is closed by its newline, and one that runs to the end of the input
// is an error: OVN's lexer accepts it, but northd 25.03 puts an ACL's match inside
// parentheses, "((match))", and a NAT's inside "(match)" followed by more conditions,
// all on one line, so such a comment hides the closing ")" and the logical flow fails
// to parse (ovn-trace: "Syntax error at end of input expecting `)'."); OVN then
// installs nothing for it and the ACL never matches.
func (lx *lexer) skipSpace(pos int) (next, errOff int, errMsg string) {
	s := lx.src
	for pos < len(s) {
		switch c := s[pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			pos++
		case c == '/' && pos+1 < len(s) && s[pos+1] == '/':
			end := strings.IndexByte(s[pos:], '\n')
			if end < 0 {
				return pos, pos, `"//" comment must end with a newline: northd wraps ACL and NAT matches in parentheses, and a comment running to the end of the match would hide the closing ")"`
			}
			pos += end + 1
			lx.commentNewlineEnd = pos
		case c == '/' && pos+1 < len(s) && s[pos+1] == '*':
			end := strings.Index(s[pos+2:], "*/")
			if end < 0 || strings.IndexByte(s[pos+2:pos+2+end], '\n') >= 0 {
				return pos, pos, `"/*" without matching "*/" on the same line`
			}
			pos += 2 + end + 2
		case c == '/':
			return pos, pos, `"/" is only valid in a comment ("//" or "/*") or after a constant as its mask`
		default:
			return pos, -1, ""
		}
	}
	return pos, -1, ""
}

// peekIs reports whether the token after the current position starts with byte c,
// without consuming anything or reporting errors.
func (lx *lexer) peekIs(c byte) bool {
	pos, errOff, _ := lx.skipSpace(lx.pos)
	return errOff < 0 && pos < len(lx.src) && lx.src[pos] == c
}

// next returns the next token.
func (lx *lexer) next() token {
	start, errOff, errMsg := lx.skipSpace(lx.pos)
	if errOff >= 0 {
		failf(lx.src, errOff, "%s", errMsg)
	}
	t := token{off: start}
	s := lx.src
	if start >= len(s) {
		lx.pos = start
		t.kind, t.end = tEOF, start
		return t
	}
	c := s[start]
	pos := start + 1
	two := func(second byte, one, both tokKind) tokKind {
		if pos < len(s) && s[pos] == second {
			pos++
			return both
		}
		return one
	}
	switch {
	case c == '(':
		t.kind = tLParen
	case c == ')':
		t.kind = tRParen
	case c == '{':
		t.kind = tLCurly
	case c == '}':
		t.kind = tRCurly
	case c == '[':
		t.kind = tLSquare
	case c == ']':
		t.kind = tRSquare
	case c == '.' && pos < len(s) && s[pos] == '.':
		pos++
		t.kind = tEllipsis
	case c == ',':
		t.kind = tComma
	case c == '=':
		t.kind = two('=', tAssign, tEq)
	case c == '!':
		t.kind = two('=', tNot, tNe)
	case c == '<':
		t.kind = two('=', tLt, tLe)
	case c == '>':
		t.kind = two('=', tGt, tGe)
	case c == '&' || c == '|':
		if pos >= len(s) || s[pos] != c {
			failf(s, start, "%q is only valid as part of %q", string(c), string([]byte{c, c}))
		}
		pos++
		t.kind = tAnd
		if c == '|' {
			t.kind = tOr
		}
	case c == '"':
		t.kind = tString
		t.text, pos = lexString(s, start)
	case c == '$' || c == '@':
		if pos >= len(s) || !isIDStart(s[pos]) {
			failf(s, start, "%q must be followed by a name", string(c))
		}
		pos = scanID(s, pos)
		t.kind, t.text = tAddrSet, s[start+1:pos]
		if c == '@' {
			t.kind = tPortGroup
		}
	case isDigit(c) || c == ':' && pos < len(s) && s[pos] == ':' || isHexLetter(c) && hexRunEndsInColon(s, start):
		// Addresses and MACs such as fe80::1 and ab:cd:... start like identifiers; what
		// tells them apart is the colon after their first run of hex digits.
		t.kind = tNumber
		t.num, pos = lexNumber(s, start)
	case isIDStart(c):
		pos = scanID(s, start)
		t.kind, t.text = tID, s[start:pos]
	case c >= 0x20 && c < 0x7f:
		failf(s, start, "unexpected character %q", string(c))
	default:
		failf(s, start, "unexpected byte 0x%02x", c)
	}
	lx.pos, t.end = pos, pos
	return t
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isHexLetter(c byte) bool { return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isHexDigit(c byte) bool  { return isDigit(c) || isHexLetter(c) }
func isIDStart(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIDByte(c byte) bool    { return isIDStart(c) || isDigit(c) || c == '.' }

func hexRunEndsInColon(s string, pos int) bool {
	for pos < len(s) && isHexDigit(s[pos]) {
		pos++
	}
	return pos < len(s) && s[pos] == ':'
}

// scanID returns the end of the identifier starting at pos: letters, digits, '_', '.'.
func scanID(s string, pos int) int {
	for pos < len(s) && isIDByte(s[pos]) {
		pos++
	}
	return pos
}

// lexString reads the quoted string whose opening quote is at start and returns its
// unescaped text and the offset after the closing quote. Escapes are JSON's, as in
// OVN: \" \\ \/ \b \f \n \r \t and \uXXXX (with UTF-16 surrogate pairs).
func lexString(s string, start int) (string, int) {
	var b strings.Builder
	pos := start + 1
	for {
		if pos >= len(s) {
			failf(s, start, "unterminated quoted string")
		}
		c := s[pos]
		switch c {
		case '"':
			return b.String(), pos + 1
		case '\\':
			pos = unescape(s, pos, &b)
		default:
			b.WriteByte(c)
			pos++
		}
	}
}

// unescape decodes the escape sequence at s[pos] (a backslash) into b and returns the
// offset after it.
func unescape(s string, pos int, b *strings.Builder) int {
	if pos+1 >= len(s) {
		failf(s, pos, "unterminated quoted string")
	}
	switch c := s[pos+1]; c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, end := unicodeEscape(s, pos)
		b.WriteRune(r)
		return end
	default:
		failf(s, pos, "invalid escape %q in string", s[pos:pos+2])
	}
	return pos + 2
}

// unicodeEscape decodes \uXXXX at s[pos], or a \uXXXX\uXXXX surrogate pair.
func unicodeEscape(s string, pos int) (rune, int) {
	hex4 := func(at int) (rune, bool) {
		if at+6 > len(s) || s[at] != '\\' || s[at+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[at+2:at+6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(pos)
	if !ok {
		failf(s, pos, `"\u" must be followed by 4 hex digits`)
	}
	end := pos + 6
	if utf16.IsSurrogate(r) {
		lo, ok := hex4(end)
		pair := utf16.DecodeRune(r, lo)
		if !ok || pair == utf8.RuneError {
			failf(s, pos, "invalid UTF-16 surrogate pair in string")
		}
		r, end = pair, end+6
	}
	if r == 0 {
		failf(s, pos, `"\u0000" is not allowed in a string`)
	}
	return r, end
}
