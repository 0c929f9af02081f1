package match

import "fmt"

// valueSet is the right-hand side of a comparison as parsed: one constant, or the
// members of a {...} set. Address sets and port groups stay names until Eval.
type valueSet struct {
	first      token // the first member, for type errors
	addrSetOff int
	curly      bool
	isStr      bool
	ints       []number
	strs       []string
	addrSets   []string
	groups     []string
}

func (vs *valueSet) size() int {
	return len(vs.ints) + len(vs.strs) + len(vs.addrSets) + len(vs.groups)
}

// boolean reports whether the set is a lone decimal 0 or 1, which OVN reads as the
// constant false or true when no comparison follows it.
func (vs *valueSet) boolean() (bool, bool) {
	if vs.curly || vs.size() != 1 || len(vs.ints) != 1 {
		return false, false
	}
	n := vs.ints[0]
	if n.masked || n.format != fmtDecimal || n.val.hi != 0 || n.val.lo > 1 {
		return false, false
	}
	return n.val.lo == 1, true
}

// describe names a member token for error messages.
func describe(t token) string {
	switch t.kind {
	case tNumber:
		return t.num.describe()
	case tString:
		return fmt.Sprintf("string %q", t.text)
	case tAddrSet:
		return "address set $" + t.text
	}
	return "port group @" + t.text
}

// compare builds the comparison "f r vs", checking it as OVN's parser does. rOff
// locates the operator for error messages.
func (p *parser) compare(f ref, r relop, rOff int, vs *valueSet) node {
	sym := f.sym
	p.checkTypes(f, vs)
	if r.ordered() {
		switch {
		case vs.curly:
			p.fail(rOff, "only == and != may be used with value sets")
		case sym.level != ordinal:
			p.fail(rOff, "only == and != may be used with %s %s %s", sym.level, sym.kind(), sym.name)
		case len(vs.addrSets) > 0:
			unsupportedf(p.src, rOff, "only == and != are supported with address sets")
		case vs.ints[0].masked:
			p.fail(rOff, "only == and != may be used with masked constants")
		}
	}
	if sym.level == nominal {
		p.checkNominal(sym, f.off, r, rOff, vs)
	}

	switch {
	case sym.isPred:
		// tcp == 1 tests the predicate, tcp == 0 or tcp != 1 its negation.
		kids := make([]node, len(vs.ints))
		for i, n := range vs.ints {
			kids[i] = &predLeaf{sym, n.val.lo&1 == 1 != (r == opNe)}
		}
		return flatten(r == opNe, kids)
	case sym.width == 0:
		return &strIn{f: sym.field, ne: r == opNe, strs: vs.strs, groups: vs.groups}
	case len(vs.ints) == 1 && len(vs.addrSets) == 0:
		m := f.place(vs.ints[0])
		return &intCmp{f: sym.field, op: r, val: m.val, mask: m.mask}
	}
	vals := make([]masked, len(vs.ints))
	for i, n := range vs.ints {
		vals[i] = f.place(n)
	}
	return &intIn{f: sym.field, width: sym.width, ne: r == opNe, vals: vals, sets: vs.addrSets}
}

// place puts a constant in the bits the reference selects, as OVN does: the constant's
// low f.n bits (an IPv4 address compared with ip4.dst[24..31] is its last byte), and
// likewise its mask.
func (f ref) place(n number) masked {
	mask := ones(f.n)
	if n.masked {
		mask = n.mask.and(mask)
	}
	return masked{n.val.and(mask).shl(f.ofs), mask.shl(f.ofs)}
}

// checkTypes rejects a string for an integer field and the reverse, and constants
// wider than the symbol (the whole symbol, even for a subfield: OVN checks no more), and
// reports address sets compared with anything but a whole IP address field as not
// supported.
func (p *parser) checkTypes(f ref, vs *valueSet) {
	sym := f.sym
	switch {
	case sym.width == 0 && !vs.isStr:
		p.fail(vs.first.off, "string field %s cannot be compared with %s", sym.name, describe(vs.first))
	case sym.width > 0 && vs.isStr:
		p.fail(vs.first.off, "integer %s %s cannot be compared with %s", sym.kind(), sym.name, describe(vs.first))
	}
	for _, n := range vs.ints {
		if n.width() > sym.width {
			p.fail(n.off, "%s does not fit %d-bit %s %s", n.describe(), sym.width, sym.kind(), sym.name)
		}
	}
	if len(vs.addrSets) > 0 {
		switch sym.field {
		case fIP4Src, fIP4Dst, fIP6Src, fIP6Dst:
			if f.whole() {
				return
			}
		}
		unsupportedf(p.src, vs.addrSetOff, "address set $%s is only supported compared with a whole ip4.src, ip4.dst, ip6.src or ip6.dst", vs.addrSets[0])
	}
}

// checkNominal enforces OVN's rules for nominal symbols (see level): a nominal field
// may only be tested for equality, and a nominal predicate only positively, counting
// every enclosing "!".
func (p *parser) checkNominal(sym *symbol, symOff int, r relop, rOff int, vs *valueSet) {
	p.sawNominal = true
	eq := r == opEq != p.not
	if !sym.isPred {
		if !eq {
			p.fail(rOff, `nominal field %s may only be tested for equality, taking enclosing "!" into account`, sym.name)
		}
		return
	}
	for _, n := range vs.ints {
		if n.val.lo&1 == 1 != eq {
			p.fail(symOff, `nominal predicate %[1]s may only be tested positively (%[1]s or %[1]s == 1, not !%[1]s or %[1]s == 0)`, sym.name)
		}
	}
}
