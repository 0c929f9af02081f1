package match

import (
	"strings"
	"unicode"
)

// MaxDepth is how deeply parentheses may nest. Parsing recurses once per level, and so
// do negation and evaluation, so the limit bounds every stack the package uses. OVN
// allows 100 levels: an expression nested deeper than MaxDepth is reported as not
// supported (ErrUnsupported).
const MaxDepth = 64

// parser is a recursive-descent parser for the grammar
//
//	expr    = unary { "&&" unary } | unary { "||" unary }
//	unary   = "!" primary | primary        (the operand of "!" must be atomic)
//	primary = "(" expr ")"                 (atomic)
//	        | "is_chassis_resident" "(" string ")"  (atomic)
//	        | field                        (atomic: field != 0, for a 1-bit field)
//	        | field relop set
//	        | set relop field [relop set]  (constant first, or a range a < x < b)
//	        | "0" | "1"                    (atomic)
//	field   = symbol [ "[" bit [ ".." bit ] "]" ]   (bits of a field, bit 0 the lowest)
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
			unsupportedf(p.src, p.tok.off, "parentheses nested more than %d deep", MaxDepth)
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
		if p.lx.peekIs('(') {
			return p.parseFunction(), true
		}
		return p.parseSymbolFirst()
	case tNumber, tString, tAddrSet, tPortGroup, tLCurly:
		return p.parseConstantFirst()
	}
	p.fail(p.tok.off, `expecting field name, constant or "("`)
	return nil, false
}

// parseFunction parses is_chassis_resident("port"), OVN's only function.
func (p *parser) parseFunction() node {
	name := p.tok
	if name.text != "is_chassis_resident" {
		p.fail(name.off, "unknown function %s() (OVN's only function is is_chassis_resident)", name.text)
	}
	p.advance() // to "("
	p.advance()
	if p.tok.kind != tString {
		p.fail(p.tok.off, "is_chassis_resident() takes one port name, in quotes")
	}
	n := &resident{port: p.tok.text}
	p.advance()
	if p.tok.kind != tRParen {
		p.fail(p.tok.off, `expecting ")" to close is_chassis_resident( at column %d`, name.off+1)
	}
	p.advance()
	return n
}

// ref is a field as an expression names it: a symbol, and the bits of its field that
// the expression selects, ofs up to ofs+n, counting from the field's lowest bit. A
// symbol named without a subfield selects all of its own bits.
type ref struct {
	sym    *symbol
	off    int // where the symbol stands in the input
	ofs, n int
}

// whole reports whether the reference selects every bit of the symbol.
func (r ref) whole() bool { return r.ofs == r.sym.ofs && r.n == r.sym.width }

// field parses the symbol at the current token, and its subfield if one follows.
func (p *parser) field() ref {
	t := p.tok
	if t.kind != tID {
		p.fail(t.off, "expecting field name")
	}
	sym := symbols[t.text]
	if sym == nil {
		if what, ok := unmodelled[t.text]; ok {
			unsupportedf(p.src, t.off, "%s is not supported: a simulated packet has no %s", t.text, what)
		}
		p.fail(t.off, "unknown field %q", t.text)
	}
	sym.build() // a no-op once the package is initialized
	p.advance()
	r := ref{sym: sym, off: t.off, ofs: sym.ofs, n: sym.width}
	if p.tok.kind == tLSquare {
		lo, hi := p.bitRange(sym)
		r.ofs, r.n = sym.ofs+lo, hi-lo+1
	}
	return r
}

// bitRange parses "[lo]" or "[lo..hi]" after sym, and checks it as OVN does.
func (p *parser) bitRange(sym *symbol) (lo, hi int) {
	open := p.tok.off
	if sym.width == 0 {
		p.fail(open, "cannot select a subfield of string field %s", sym.name)
	}
	p.advance()
	lo = p.bitNumber()
	hi = lo
	if p.tok.kind == tEllipsis {
		p.advance()
		hi = p.bitNumber()
	}
	if p.tok.kind != tRSquare {
		p.fail(p.tok.off, `expecting "]" to close "[" at column %d`, open+1)
	}
	p.advance()
	switch {
	case lo > hi:
		p.fail(open, "invalid bit range %d to %d: the lower bit comes first", lo, hi)
	case hi >= sym.width:
		p.fail(open, "cannot select bits %d to %d of %d-bit %s %s", lo, hi, sym.width, sym.kind(), sym.name)
	case sym.level == nominal && (lo != 0 || hi != sym.width-1):
		p.fail(open, "cannot select a subfield of nominal %s %s", sym.kind(), sym.name)
	}
	return lo, hi
}

// bitNumber parses a bit's number: a plain decimal integer.
func (p *parser) bitNumber() int {
	t := p.tok
	if t.kind != tNumber || t.num.format != fmtDecimal || t.num.masked {
		p.fail(t.off, "expecting a bit number (a decimal integer)")
	}
	p.advance()
	return int(min(t.num.val.lo, 1<<16)) // beyond any field's width either way
}

func (p *parser) parseSymbolFirst() (node, bool) {
	f := p.field()
	if p.tok.isRelop() {
		r, rOff := relopOf(p.tok.kind), p.tok.off
		p.advance()
		return p.compare(f, r, rOff, p.parseSet()), false
	}
	// A field alone tests it against 0, as OVN does: `ct.trk` is `ct.trk != 0`.
	switch {
	case p.tok.kind == tAssign:
		p.fail(p.tok.off, `"=" is not a relational operator (did you mean "=="?)`)
	case f.sym.width == 0:
		p.fail(p.tok.off, "expecting relational operator after string field %s", f.sym.name)
	case f.n > 1 && !p.not:
		p.fail(f.off, `explicit "!= 0" is required to test multibit field %s against 0`, f.sym.name)
	}
	zero := number{format: fmtHex, text: "0", off: f.off}
	vs := &valueSet{first: token{kind: tNumber, off: f.off, num: zero}, ints: []number{zero}}
	return p.compare(f, opNe, f.off, vs), true
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
	f := p.field()
	if !p.tok.isRelop() {
		return p.compare(f, r1.turn(), r1Off, left), false
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
		p.compare(f, r1.turn(), r1Off, left),
		p.compare(f, r2, r2Off, right),
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
