package match

import (
	"strings"
	"unicode"
)

// MaxDepth is how deeply parentheses may nest. Parsing recurses once per level, and so
// do negation and evaluation, so the limit bounds every stack the package uses.
const MaxDepth = 64

// parser is a recursive-descent parser for the grammar
//
//	expr    = unary { "&&" unary } | unary { "||" unary }
//	unary   = "!" primary | primary        (the operand of "!" must be atomic)
//	primary = "(" expr ")"                 (atomic)
//	        | symbol                       (atomic: symbol != 0)
//	        | symbol relop set
//	        | set relop symbol [relop set] (constant first, or a range a < x < b)
//	        | "0" | "1"                    (atomic)
//	set     = constant | "{" constant { [","] constant } "}"
//
// It builds the compiled tree as it goes; prerequisites are attached afterwards by
// annotate, once every "!" has been pushed down to the comparisons.
type parser struct {
	src   string
	lx    lexer
	tok   token
	not   bool // inside an odd number of "!", for OVN's rules on nominal symbols
	depth int
	// sawNominal records a comparison on a nominal symbol: it makes a predicate whose
	// expansion this is nominal too.
	sawNominal bool
}

// parsed is what parse makes of a source.
type parsed struct {
	tree       node // unannotated
	sawNominal bool
	// text is the source without the white space around it, except the newline that
	// closes a final // comment: dropping that would leave a source that no longer
	// parses.
	text string
}

// parse parses src into an unannotated tree.
func parse(src string) (res parsed, err *SyntaxError) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	p := &parser{src: src, lx: lexer{src: src}}
	p.advance()
	n := p.parseExpr()
	if p.tok.kind != tEOF {
		p.fail(p.tok.off, `expecting "&&", "||" or end of input`)
	}
	start := len(src) - len(strings.TrimLeftFunc(src, unicode.IsSpace))
	end := max(len(strings.TrimRightFunc(src, unicode.IsSpace)), p.lx.commentNewlineEnd)
	return parsed{tree: n, sawNominal: p.sawNominal, text: src[start:end]}, nil
}

func (p *parser) fail(off int, format string, args ...any) { failf(p.src, off, format, args...) }

func (p *parser) advance() { p.tok = p.lx.next() }

func (p *parser) parseExpr() node {
	first := p.parseUnary()
	op := p.tok.kind
	if op != tAnd && op != tOr {
		return first
	}
	kids := []node{first}
	for p.tok.kind == op {
		p.advance()
		kids = append(kids, p.parseUnary())
	}
	if p.tok.kind == tAnd || p.tok.kind == tOr {
		p.fail(p.tok.off, "&& and || must be parenthesized when used together")
	}
	return flatten(op == tAnd, kids)
}

func (p *parser) parseUnary() node {
	if p.tok.kind != tNot {
		n, _ := p.parsePrimary()
		return n
	}
	bang := p.tok.off
	p.advance()
	p.not = !p.not
	n, atomic := p.parsePrimary()
	p.not = !p.not
	if !atomic {
		p.fail(bang, `missing parentheses around operand of "!"`)
	}
	return negate(n)
}

// parsePrimary also reports whether what it parsed is atomic, and so may follow "!"
// without parentheses: `!ct.est` may, `!tcp.dst == 80` may not.
func (p *parser) parsePrimary() (node, bool) {
	switch p.tok.kind {
	case tLParen:
		if p.depth >= MaxDepth {
			p.fail(p.tok.off, "parentheses nested more than %d deep", MaxDepth)
		}
		open := p.tok.off
		p.depth++
		p.advance()
		n := p.parseExpr()
		p.depth--
		if p.tok.kind != tRParen {
			p.fail(p.tok.off, `expecting ")" to close "(" at column %d`, open+1)
		}
		p.advance()
		return n, true
	case tID:
		return p.parseSymbolFirst()
	case tNumber, tString, tAddrSet, tPortGroup, tLCurly:
		return p.parseConstantFirst()
	}
	p.fail(p.tok.off, `expecting field name, constant or "("`)
	return nil, false
}

// symbol returns the symbol the current token names and moves past it.
func (p *parser) symbol() (*symbol, int) {
	t := p.tok
	if t.kind != tID {
		p.fail(t.off, "expecting field name")
	}
	if p.lx.peekIs('(') {
		p.fail(t.off, "function %s() is not supported", t.text)
	}
	sym := symbols[t.text]
	if sym == nil {
		p.fail(t.off, "unknown field %q", t.text)
	}
	sym.build() // a no-op once the package is initialized
	p.advance()
	if p.tok.kind == tLSquare {
		p.fail(p.tok.off, "subfields (%s[...]) are not supported", t.text)
	}
	return sym, t.off
}

func (p *parser) parseSymbolFirst() (node, bool) {
	sym, symOff := p.symbol()
	if p.tok.isRelop() {
		r, rOff := relopOf(p.tok.kind), p.tok.off
		p.advance()
		return p.compare(sym, symOff, r, rOff, p.parseSet()), false
	}
	// A symbol alone tests it against 0, as OVN does: `ct.trk` is `ct.trk != 0`.
	switch {
	case p.tok.kind == tAssign:
		p.fail(p.tok.off, `"=" is not a relational operator (did you mean "=="?)`)
	case sym.width == 0:
		p.fail(p.tok.off, "expecting relational operator after string field %s", sym.name)
	case sym.width > 1 && !p.not:
		p.fail(symOff, `explicit "!= 0" is required to test multibit field %s against 0`, sym.name)
	}
	zero := number{format: fmtHex, text: "0", off: symOff}
	vs := &valueSet{first: token{kind: tNumber, off: symOff, num: zero}, ints: []number{zero}}
	return p.compare(sym, symOff, opNe, symOff, vs), true
}

func (p *parser) parseConstantFirst() (node, bool) {
	left := p.parseSet()
	if !p.tok.isRelop() {
		if b, ok := left.boolean(); ok {
			return boolNode(b), true
		}
		p.fail(p.tok.off, "expecting relational operator after constant")
	}
	r1, r1Off := relopOf(p.tok.kind), p.tok.off
	p.advance()
	sym, symOff := p.symbol()
	if !p.tok.isRelop() {
		return p.compare(sym, symOff, r1.turn(), r1Off, left), false
	}
	// A range: a < x < b, or a > x > b, each operator possibly with "=".
	r2, r2Off := relopOf(p.tok.kind), p.tok.off
	p.advance()
	right := p.parseSet()
	lower := func(r relop) bool { return r == opLt || r == opLe }
	upper := func(r relop) bool { return r == opGt || r == opGe }
	if !(lower(r1) && lower(r2) || upper(r1) && upper(r2)) {
		p.fail(r2Off, `a range must read "a < field < b" or "a > field > b" (with "<=" or ">=" allowed for either operator)`)
	}
	return flatten(true, []node{
		p.compare(sym, symOff, r1.turn(), r1Off, left),
		p.compare(sym, symOff, r2, r2Off, right),
	}), false
}

func relopOf(k tokKind) relop {
	return [...]relop{tEq: opEq, tNe: opNe, tLt: opLt, tLe: opLe, tGt: opGt, tGe: opGe}[k]
}

// parseSet parses one constant, or a value set in braces whose members may be
// separated by commas or just white space.
func (p *parser) parseSet() *valueSet {
	vs := &valueSet{}
	if p.tok.kind != tLCurly {
		p.member(vs)
		return vs
	}
	vs.curly = true
	p.advance()
	if p.tok.kind == tRCurly {
		p.fail(p.tok.off, "empty value set")
	}
	for {
		p.member(vs)
		if p.tok.kind == tComma {
			p.advance()
		}
		switch p.tok.kind {
		case tRCurly:
			p.advance()
			return vs
		case tEOF:
			p.fail(p.tok.off, `expecting "}" to close the value set`)
		}
	}
}

// member adds the constant, $set or @group at the current token to vs. The members of
// one set are all integers ($sets included) or all strings (@groups included).
func (p *parser) member(vs *valueSet) {
	t := p.tok
	isStr := t.kind == tString || t.kind == tPortGroup
	if t.kind != tNumber && t.kind != tAddrSet && !isStr {
		p.fail(t.off, "expecting constant")
	}
	if vs.size() > 0 && vs.isStr != isStr {
		p.fail(t.off, "a value set may not mix strings and integers")
	}
	if vs.size() == 0 {
		vs.first, vs.isStr = t, isStr
	}
	switch t.kind {
	case tNumber:
		vs.ints = append(vs.ints, t.num)
	case tAddrSet:
		if len(vs.addrSets) == 0 {
			vs.addrSetOff = t.off
		}
		vs.addrSets = append(vs.addrSets, t.text)
	case tString:
		vs.strs = append(vs.strs, t.text)
	case tPortGroup:
		vs.groups = append(vs.groups, t.text)
	}
	p.advance()
}
