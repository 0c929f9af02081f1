package match

import "net/netip"

// node is a compiled expression: a small tree evaluated directly against a Packet.
// Evaluating one never allocates; only $set and @group members are looked up, through
// Sets, at evaluation time.
type node interface {
	eval(p *Packet, s Sets) bool
}

// relop is a comparison operator.
type relop uint8

const (
	opEq relop = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

// invert is the operator that is true exactly when r is false.
func (r relop) invert() relop { return [...]relop{opNe, opEq, opGe, opGt, opLe, opLt}[r] }

// turn is the operator for the operands swapped: "80 < tcp.dst" is "tcp.dst > 80".
func (r relop) turn() relop { return [...]relop{opEq, opNe, opGt, opGe, opLt, opLe}[r] }

func (r relop) ordered() bool { return r >= opLt }

type boolNode bool

func (b boolNode) eval(*Packet, Sets) bool { return bool(b) }

// andNode is true when every operand is; it has at least two.
type andNode []node

func (n andNode) eval(p *Packet, s Sets) bool {
	for _, k := range n {
		if !k.eval(p, s) {
			return false
		}
	}
	return true
}

// orNode is true when any operand is; it has at least two.
type orNode []node

func (n orNode) eval(p *Packet, s Sets) bool {
	for _, k := range n {
		if k.eval(p, s) {
			return true
		}
	}
	return false
}

// intCmp compares an integer field with one constant: the field's bits under mask with
// val, which has no bits outside it. For == and != the mask is the constant's own (or
// the bits a subfield selects); for the ordered operators it is the contiguous bits of
// the field or subfield compared, so comparing the masked field with val as numbers
// compares the subfield's value with the constant. pre is the field's prerequisite, nil
// before annotation or when it has none: the comparison is false whenever pre is,
// whatever the operator.
type intCmp struct {
	f         fieldID
	op        relop
	val, mask u128
	pre       node
}

func (c *intCmp) eval(p *Packet, s Sets) bool {
	if c.pre != nil && !c.pre.eval(p, s) {
		return false
	}
	v := c.f.value(p).and(c.mask)
	switch c.op {
	case opEq:
		return v == c.val
	case opNe:
		return v != c.val
	case opLt:
		return v.cmp(c.val) < 0
	case opLe:
		return v.cmp(c.val) <= 0
	case opGt:
		return v.cmp(c.val) > 0
	}
	return v.cmp(c.val) >= 0
}

// masked is a value-set member: value and the mask of the bits that matter.
type masked struct{ val, mask u128 }

// intIn tests an integer field against a set of constants and address sets: with ne
// false it matches if the field equals any member, with ne true if it equals none.
//
// As in OVN, a set with no members at all is a constant with no prerequisite: "== {}"
// is false and "!= {}" true, even for a packet the field does not apply to. Members of
// an address set of the other IP family than the field's are members that never match.
type intIn struct {
	f     fieldID
	width int // of the field: 32 or 128 selects the family of address-set members
	ne    bool
	vals  []masked
	sets  []string
	pre   node
}

func (n *intIn) eval(p *Packet, s Sets) bool {
	if n.pre != nil && !n.pre.eval(p, s) {
		return n.ne && n.empty(s)
	}
	v := n.f.value(p)
	for _, m := range n.vals {
		if v.and(m.mask) == m.val {
			return !n.ne
		}
	}
	for _, name := range n.sets {
		members, _ := s.AddressSet(name)
		for _, m := range members {
			if prefixMatches(n.width, v, m) {
				return !n.ne
			}
		}
	}
	return n.ne
}

// empty reports whether the set has no members at all.
func (n *intIn) empty(s Sets) bool {
	if len(n.vals) > 0 {
		return false
	}
	for _, name := range n.sets {
		if members, _ := s.AddressSet(name); len(members) > 0 {
			return false
		}
	}
	return true
}

// prefixMatches reports whether field value v, of a width-bit address field, lies in
// prefix m of the same family.
func prefixMatches(width int, v u128, m netip.Prefix) bool {
	a, plen := m.Addr(), m.Bits()
	var member u128
	switch {
	case plen < 0:
		return false
	case width == 32 && a.Is4():
		member = ipv4(a)
	case width == 128 && a.Is6():
		member = ipv6(a)
	default:
		return false
	}
	mask := prefixMask(plen, width)
	return v.and(mask) == member.and(mask)
}

// strIn tests a string field (inport, outport) against strings and port groups: with
// ne false it matches if the field equals any of them, with ne true if it equals none.
type strIn struct {
	f      fieldID
	ne     bool
	strs   []string
	groups []string
}

func (n *strIn) eval(p *Packet, s Sets) bool {
	v := n.f.str(p)
	for _, x := range n.strs {
		if v == x {
			return !n.ne
		}
	}
	for _, name := range n.groups {
		ports, _ := s.PortGroup(name)
		for _, x := range ports {
			if v == x {
				return !n.ne
			}
		}
	}
	return n.ne
}

// resident is is_chassis_resident(port), or its negation: whether the port is bound to
// the chassis processing the packet. It has no prerequisite, and negating it negates
// it whole, as in OVN.
type resident struct {
	port string
	not  bool
}

func (n *resident) eval(p *Packet, s Sets) bool {
	chassis, ok := s.Chassis(n.port)
	return (ok && chassis != "" && chassis == p.Chassis) != n.not
}

// predLeaf is a use of a predicate such as tcp or ip4.mcast, positive or negated. It only
// exists between parsing and annotation, which replaces it by the predicate's expansion.
type predLeaf struct {
	sym      *symbol
	positive bool
}

func (*predLeaf) eval(*Packet, Sets) bool { panic("match: predicate evaluated before annotation") }

// negate returns the negation of n as a new tree, leaving n untouched (predicate
// expansions are shared between expressions). Negation is pushed to the leaves.
//
// A prerequisite attached to a leaf is negated with it, !(x && pre) being !x || !pre.
// That is right for predicate expansions, which OVN negates after adding their
// prerequisites. Negation written in an expression ("!") is applied before any
// prerequisite is attached, so the prerequisite of a negated comparison still holds.
func negate(n node) node {
	switch n := n.(type) {
	case boolNode:
		return !n
	case andNode:
		return orNode(negateAll(n))
	case orNode:
		return andNode(negateAll(n))
	case *intCmp:
		c := *n
		c.op, c.pre = c.op.invert(), nil
		return orWithNegated(&c, n.pre)
	case *intIn:
		c := *n
		c.ne, c.pre = !c.ne, nil
		return orWithNegated(&c, n.pre)
	case *strIn:
		c := *n
		c.ne = !c.ne
		return &c
	case *resident:
		return &resident{n.port, !n.not}
	case *predLeaf:
		return &predLeaf{n.sym, !n.positive}
	}
	panic("match: negate: unknown node")
}

func negateAll(kids []node) []node {
	out := make([]node, len(kids))
	for i, k := range kids {
		out[i] = negate(k)
	}
	return out
}

func orWithNegated(n, pre node) node {
	if pre == nil {
		return n
	}
	return flatten(false, []node{n, negate(pre)})
}

// flatten joins operands with && (and true) or || (and false), merging operands that
// are themselves the same operator so the tree stays shallow.
func flatten(and bool, kids []node) node {
	var out []node
	for _, k := range kids {
		switch k := k.(type) {
		case andNode:
			if and {
				out = append(out, k...)
				continue
			}
		case orNode:
			if !and {
				out = append(out, k...)
				continue
			}
		}
		out = append(out, k)
	}
	switch {
	case len(out) == 1:
		return out[0]
	case and:
		return andNode(out)
	}
	return orNode(out)
}

// annotate attaches prerequisites to the comparisons of a freshly parsed tree and
// replaces predicates by their expansions, as OVN's annotation does. It mutates the
// tree it is given, which must not be shared.
func annotate(n node) node {
	switch n := n.(type) {
	case andNode:
		return flatten(true, annotateAll(n))
	case orNode:
		return flatten(false, annotateAll(n))
	case *intCmp:
		n.pre = fieldSyms[n.f].prereq
	case *intIn:
		n.pre = fieldSyms[n.f].prereq
	case *predLeaf:
		if n.positive {
			return n.sym.pred
		}
		return negate(n.sym.pred)
	}
	return n
}

func annotateAll(kids []node) []node {
	for i, k := range kids {
		kids[i] = annotate(k)
	}
	return kids
}

// refs are the names a compiled tree reads: fields, address sets, port groups, and the
// ports is_chassis_resident() asks about. collect accepts a nil node (a comparison
// without prerequisite) and adds nothing for it.
type refs struct{ fields, addrSets, portGroups, resident map[string]bool }

func (r refs) collect(n node) {
	switch n := n.(type) {
	case andNode:
		for _, k := range n {
			r.collect(k)
		}
	case orNode:
		for _, k := range n {
			r.collect(k)
		}
	case *intCmp:
		r.fields[fieldSyms[n.f].name] = true
		r.collect(n.pre)
	case *intIn:
		r.fields[fieldSyms[n.f].name] = true
		for _, name := range n.sets {
			r.addrSets[name] = true
		}
		r.collect(n.pre)
	case *strIn:
		r.fields[fieldSyms[n.f].name] = true
		for _, name := range n.groups {
			r.portGroups[name] = true
		}
	case *resident:
		r.resident[n.port] = true
	}
}
