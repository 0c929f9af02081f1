package match

import (
	"fmt"
	"sort"
)

// Expr is a parsed, type-checked match expression, ready to be evaluated any number of
// times, from any number of goroutines: nothing in it changes after Parse. Only Parse
// makes a usable one; the zero Expr is not.
type Expr struct {
	src        string
	root       node
	fields     []string
	addrSets   []string
	portGroups []string
	resident   bool // the expression calls is_chassis_resident()
}

// Parse parses and type-checks an expression. Errors are *SyntaxError.
//
// Parse accepts and rejects what OVN's own parser does (see the package documentation),
// with these exceptions, all reported as ErrUnsupported: fields a simulated Packet does
// not carry; parentheses nested deeper than MaxDepth, not OVN's 100; an address set
// compared with anything but a whole IP address field, or with a relational operator.
// And a `//` comment must end with a newline, which OVN needs only in the ACL and NAT
// columns (northd wraps their matches in parentheses but copies a
// Logical_Router_Policy's bare, so there a comment may end the match). Address sets
// and port groups are resolved by Eval, so Parse accepts any name, and an address-set
// member of the other IP family than the field's never matches (OVN rejects an IPv6
// member of a set compared with ip4.src, and compares an IPv4 member with ip6.src as
// the integer ::a.b.c.d).
func Parse(s string) (*Expr, error) {
	res, err := parse(s)
	if err != nil {
		return nil, err
	}
	e := &Expr{src: res.text, root: annotate(res.tree)}
	r := refs{fields: map[string]bool{}, addrSets: map[string]bool{}, portGroups: map[string]bool{}, resident: map[string]bool{}}
	r.collect(e.root)
	e.fields, e.addrSets, e.portGroups = sorted(r.fields), sorted(r.addrSets), sorted(r.portGroups)
	e.resident = len(r.resident) > 0
	return e, nil
}

func sorted(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// zeroPacket is what Eval reads when given no packet; it is never written.
var zeroPacket Packet

// Eval reports whether p matches. It returns an error only for names Sets cannot
// resolve (unknown $set or @group) — the caller reports such a row as never matching —
// and for a call of is_chassis_resident() with no Sets to say where ports are bound.
//
// Every name the expression refers to is resolved first, whatever the packet, so a row
// with an unknown name fails the same way for every packet (as OVN rejects such a row
// outright); sets may be nil for an expression that refers to none. A nil p is a packet
// whose fields are all zero. Eval allocates nothing itself; with $sets, @groups or
// is_chassis_resident() it makes as many calls to Sets as the evaluation needs, plus
// one per set or group name to check it.
func (e *Expr) Eval(p *Packet, sets Sets) (bool, error) {
	if len(e.addrSets) > 0 || len(e.portGroups) > 0 || e.resident {
		if err := e.resolve(sets); err != nil {
			return false, err
		}
	}
	if p == nil {
		p = &zeroPacket
	}
	return e.root.eval(p, sets), nil
}

func (e *Expr) resolve(sets Sets) error {
	if e.resident && sets == nil {
		return fmt.Errorf("is_chassis_resident() cannot be answered: no Sets given to say where ports are bound")
	}
	for _, name := range e.addrSets {
		if sets == nil {
			return fmt.Errorf("unknown address set $%s (no sets given)", name)
		}
		if _, ok := sets.AddressSet(name); !ok {
			return fmt.Errorf("unknown address set $%s", name)
		}
	}
	for _, name := range e.portGroups {
		if sets == nil {
			return fmt.Errorf("unknown port group @%s (no sets given)", name)
		}
		if _, ok := sets.PortGroup(name); !ok {
			return fmt.Errorf("unknown port group @%s", name)
		}
	}
	return nil
}

// String is the expression as parsed: the source text without the white space around
// it, except a newline that closes a final // comment, since without it the text would
// no longer parse.
func (e *Expr) String() string { return e.src }

// Fields lists the packet fields the expression reads (e.g. "inport", "ip4.dst"), sorted, without repeats.
//
// They include the fields read through predicates and prerequisites: `tcp.dst == 80`
// reads eth.type, ip.proto and tcp.dst; `ip4.mcast` reads eth.mcast (bit 0 of
// EthDst[0]), eth.type and ip4.dst. Names are those of fields in expressions (ct.est,
// not CT.Est); a named subfield is listed as its field (ct_mark.blocked as ct_mark), a
// register as written (reg0, xreg0). is_chassis_resident() reads no field. An
// expression that reads nothing, such as "1", has none. The slice is a copy the caller
// may keep.
func (e *Expr) Fields() []string { return clone(e.fields) }

// AddressSets lists the address sets the expression refers to, without the "$", sorted.
func (e *Expr) AddressSets() []string { return clone(e.addrSets) }

// PortGroups lists the port groups the expression refers to, without the "@", sorted.
func (e *Expr) PortGroups() []string { return clone(e.portGroups) }

func clone(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}
