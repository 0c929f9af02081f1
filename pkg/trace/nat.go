package trace

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// A router applies NAT where it has a gateway: everywhere on a gateway router (one
// bound to a chassis by options:chassis), and on a distributed router only on its
// distributed gateway ports (those with gateway chassis or an HA chassis group).
func isGatewayRouter(lr *nbdb.LogicalRouter) bool { return lr.Options["chassis"] != "" }

func isGatewayPort(p *nbdb.LogicalRouterPort) bool {
	return len(p.GatewayChassis) > 0 || (p.HaChassisGroup != nil && *p.HaChassisGroup != "")
}

// natApplies reports whether n may act on a packet crossing port of lr.
func natApplies(lr *nbdb.LogicalRouter, port *nbdb.LogicalRouterPort, n *nbdb.NAT) bool {
	if n.GatewayPort != nil && *n.GatewayPort != "" && *n.GatewayPort != port.UUID {
		return false
	}
	return isGatewayRouter(lr) || isGatewayPort(port)
}

// natRows are lr's NAT rows of the given types.
func (z *Zone) natRows(lr *nbdb.LogicalRouter, types ...nbdb.NATType) []*nbdb.NAT {
	var out []*nbdb.NAT
	for _, id := range lr.Nat {
		if n := z.ix.NATs[id]; n != nil && slices.Contains(types, n.Type) {
			out = append(out, n)
		}
	}
	return out
}

// natMatch evaluates a NAT row's own match and its external-IP sets on the packet.
func (w *walker) natMatch(z *Zone, n *nbdb.NAT, peer netip.Addr) bool {
	allowed, exempted := n.AllowedExtIPs != nil && *n.AllowedExtIPs != "", n.ExemptedExtIPs != nil && *n.ExemptedExtIPs != ""
	if allowed && exempted {
		return false // northd refuses a row that sets both
	}
	if n.Match != "" {
		e, ok := w.expr(z, "NAT", n.UUID, n.Match)
		if !ok {
			return false
		}
		if ok, err := e.Eval(&w.p, z); err != nil || !ok {
			return false
		}
	}
	if exempted && z.setHas(*n.ExemptedExtIPs, peer) {
		return false
	}
	if allowed && !z.setHas(*n.AllowedExtIPs, peer) {
		return false
	}
	return true
}

// setHas reports whether the address set with this UUID holds a.
func (z *Zone) setHas(uuid string, a netip.Addr) bool {
	as := z.addrSetByID[uuid]
	if as == nil {
		return false
	}
	return prefixesContainMasked(parsePrefixes(as.Addresses), a)
}

func prefixesContainMasked(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Masked().Contains(a) {
			return true
		}
	}
	return false
}

// dnat rewrites the destination of a packet addressed to one of lr's DNAT external IPs.
func (w *walker) dnat(z *Zone, lr *nbdb.LogicalRouter, in *nbdb.LogicalRouterPort) {
	for _, n := range z.natRows(lr, nbdb.NATTypeDNAT, nbdb.NATTypeDNATAndSNAT) {
		ext, err := netip.ParseAddr(n.ExternalIP)
		if err != nil || ext != w.p.IPDst || !natApplies(lr, in, n) || !w.natMatch(z, n, w.p.IPSrc) {
			continue
		}
		to, err := netip.ParseAddr(n.LogicalIP)
		if err != nil {
			continue
		}
		w.t.conns = append(w.t.conns, translation{zone: z.Node, router: lr.Name, from: ext, to: to})
		w.p.IPDst = to
		w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageDNAT, InPort: in.Name, Row: natRow(n),
			Note: fmt.Sprintf("destination %s translated to %s", ext, to)})
		return
	}
}

// snat rewrites the source of a packet leaving lr through out, by the most specific
// SNAT whose logical IP holds the source.
func (w *walker) snat(z *Zone, lr *nbdb.LogicalRouter, out *nbdb.LogicalRouterPort) {
	if w.reply {
		return // a reply is translated back by conntrack, never by a new SNAT
	}
	type hit struct {
		n    *nbdb.NAT
		bits int
	}
	var hits []hit
	for _, n := range z.natRows(lr, nbdb.NATTypeSNAT, nbdb.NATTypeDNATAndSNAT) {
		logical, ok := parsePrefixOrAddr(n.LogicalIP)
		if !ok || logical.Addr().Is6() != w.p.IPSrc.Is6() || !logical.Masked().Contains(w.p.IPSrc) {
			continue
		}
		if !natApplies(lr, out, n) || !w.natMatch(z, n, w.p.IPDst) {
			continue
		}
		hits = append(hits, hit{n, logical.Bits()})
	}
	if len(hits) == 0 {
		return
	}
	best := slices.MaxFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.bits, b.bits), cmp.Compare(b.n.UUID, a.n.UUID))
	})
	to, err := netip.ParseAddr(best.n.ExternalIP)
	if err != nil {
		return
	}
	from := w.p.IPSrc
	w.t.conns = append(w.t.conns, translation{zone: z.Node, router: lr.Name, snat: true, from: from, to: to})
	w.p.IPSrc = to
	w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageSNAT, OutPort: out.Name, Row: natRow(best.n),
		Note: fmt.Sprintf("source %s translated to %s", from, to)})
}

// unSNAT restores the destination of a reply to a connection lr source-translated.
func (w *walker) unSNAT(z *Zone, lr *nbdb.LogicalRouter) {
	for _, c := range w.t.conns {
		if c.snat && c.zone == z.Node && c.router == lr.Name && c.to == w.p.IPDst {
			w.p.IPDst = c.from
			w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageUnSNAT, InPort: w.p.InPort,
				Note: fmt.Sprintf("reply: destination %s translated back to %s (conntrack)", c.to, c.from)})
			return
		}
	}
}

// unDNAT restores the source of a reply from a destination lr translated.
func (w *walker) unDNAT(z *Zone, lr *nbdb.LogicalRouter) {
	for _, c := range w.t.conns {
		if !c.snat && c.zone == z.Node && c.router == lr.Name && c.to == w.p.IPSrc {
			w.p.IPSrc = c.from
			w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageUnDNAT, OutPort: w.p.OutPort,
				Note: fmt.Sprintf("reply: source %s translated back to %s (conntrack)", c.to, c.from)})
			return
		}
	}
}

func natRow(n *nbdb.NAT) *Row {
	// The arrow shows which way the row rewrites: sources for snat, destinations for
	// dnat, both for dnat_and_snat.
	action := fmt.Sprintf("%s %s → %s", n.Type, n.LogicalIP, n.ExternalIP)
	switch n.Type {
	case nbdb.NATTypeDNAT:
		action = fmt.Sprintf("%s %s → %s", n.Type, n.ExternalIP, n.LogicalIP)
	case nbdb.NATTypeDNATAndSNAT:
		action = fmt.Sprintf("%s %s ↔ %s", n.Type, n.LogicalIP, n.ExternalIP)
	}
	r := &Row{Table: "NAT", UUID: n.UUID, Match: n.Match, Action: action, Owner: ownerOf(n.ExternalIDs)}
	if n.Priority != 0 {
		p := n.Priority
		r.Priority = &p
	}
	return r
}
