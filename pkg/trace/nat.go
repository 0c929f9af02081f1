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

// natMatch evaluates a NAT row's own match and its external-IP sets on the packet;
// why says why an unknown outcome is unknown.
func (w *walker) natMatch(z *Zone, n *nbdb.NAT, peer netip.Addr) (o outcome, why string) {
	allowed, exempted := n.AllowedExtIPs != nil && *n.AllowedExtIPs != "", n.ExemptedExtIPs != nil && *n.ExemptedExtIPs != ""
	if allowed && exempted {
		return misses, "" // northd refuses a row that sets both
	}
	if exempted && z.setHas(*n.ExemptedExtIPs, peer) || allowed && !z.setHas(*n.AllowedExtIPs, peer) {
		return misses, ""
	}
	if n.Match == "" {
		return applies, ""
	}
	return w.evalMatch(z, "NAT", n.UUID, n.Match)
}

// natDoubt is the doubt a NAT row the simulator could not evaluate leaves: the hop
// that reports it, at stage, and its effect.
func natDoubt(z *Zone, lr *nbdb.LogicalRouter, stage Stage, n *nbdb.NAT, why, effect string) doubt {
	return doubt{effect: effect, hop: Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: stage, Row: natRow(n),
		Note: fmt.Sprintf("%s not evaluated (%s): OVN may apply it", n.Type, why)}}
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

// dnat rewrites the destination of a packet addressed to one of lr's DNAT external
// IPs, by the first such row that applies. A row before it that the simulator cannot
// evaluate, and that would translate to another address, makes the path uncertain.
func (w *walker) dnat(z *Zone, lr *nbdb.LogicalRouter, in *nbdb.LogicalRouterPort) {
	var doubts []doubt
	for _, n := range z.natRows(lr, nbdb.NATTypeDNAT, nbdb.NATTypeDNATAndSNAT) {
		ext, err := netip.ParseAddr(n.ExternalIP)
		if err != nil || ext != w.p.IPDst || !natApplies(lr, in, n) {
			continue
		}
		to, err := netip.ParseAddr(n.LogicalIP)
		if err != nil {
			continue
		}
		o, why := w.natMatch(z, n, w.p.IPSrc)
		if o == unknown {
			d := natDoubt(z, lr, StageDNAT, n, why, "to "+to.String())
			d.hop.InPort = in.Name
			doubts = append(doubts, d)
		}
		if o != applies {
			continue
		}
		w.settle(doubts, "to "+to.String())
		w.t.conns = append(w.t.conns, translation{zone: z.Node, router: lr.Name, from: ext, to: to})
		w.p.IPDst = to
		w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageDNAT, InPort: in.Name, Row: natRow(n),
			Note: fmt.Sprintf("destination %s translated to %s", ext, to)})
		return
	}
	w.settle(doubts, "untranslated")
}

// snat rewrites the source of a packet leaving lr through out, by the SNAT of highest
// rank whose logical IP holds the source: a row with a match ranks at 300 plus its own
// priority, above every row without one, which rank by the length of their logical
// prefix (northd's lr_out_snat).
//
// On a distributed router each row also has a flow of the same rank for traffic in the
// other direction: a packet that came in through the row's gateway port towards its
// logical IP enters the SNATed network and is committed to conntrack untranslated. A
// packet routed back out of the gateway port it came in through matches both flows at
// one priority, and which one OVS applies is not defined (ovn-trace 25.03 picks either,
// from run to run): the simulator translates, and says so.
func (w *walker) snat(z *Zone, lr *nbdb.LogicalRouter, out *nbdb.LogicalRouterPort) {
	if w.reply {
		return // a reply is translated back by conntrack, never by a new SNAT
	}
	type hit struct {
		n    *nbdb.NAT
		rank int
	}
	// unsure are the rows the simulator could not evaluate, with their rank: an inbound
	// one would leave the packet untranslated, an outbound one translate it.
	type unsure struct {
		hit
		inbound bool
		why     string
	}
	var hits, inbound []hit
	var unsures []unsure
	in := z.routerPorts[w.p.InPort]
	for _, n := range z.natRows(lr, nbdb.NATTypeSNAT, nbdb.NATTypeDNATAndSNAT) {
		logical, ok := parsePrefixOrAddr(n.LogicalIP)
		if !ok || logical.Addr().Is6() != w.p.IPSrc.Is6() {
			continue
		}
		rank := logical.Bits() + 1
		if n.Match != "" {
			rank = 300 + n.Priority
		}
		if !isGatewayRouter(lr) && in != nil && logical.Masked().Contains(w.p.IPDst) && natApplies(lr, in, n) {
			switch o, why := w.natMatch(z, n, w.p.IPSrc); o {
			case applies:
				inbound = append(inbound, hit{n, rank})
			case unknown:
				unsures = append(unsures, unsure{hit{n, rank}, true, why})
			}
		}
		if logical.Masked().Contains(w.p.IPSrc) && natApplies(lr, out, n) {
			switch o, why := w.natMatch(z, n, w.p.IPDst); o {
			case applies:
				hits = append(hits, hit{n, rank})
			case unknown:
				unsures = append(unsures, unsure{hit{n, rank}, false, why})
			}
		}
	}
	byRank := func(a, b hit) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(b.n.UUID, a.n.UUID)) }
	// settle reports the rows the simulator could not evaluate that rank at or above
	// the decision (rank, with its effect) and would have done otherwise.
	settle := func(rank int, effect string) {
		var doubts []doubt
		for _, u := range unsures {
			if u.rank < rank {
				continue
			}
			e := "untranslated"
			if !u.inbound {
				e = "to " + u.n.ExternalIP
			}
			d := natDoubt(z, lr, StageSNAT, u.n, u.why, e)
			d.hop.OutPort = out.Name
			doubts = append(doubts, d)
		}
		w.settle(doubts, effect)
	}
	if len(hits) == 0 {
		settle(-1, "untranslated")
		return
	}
	best := slices.MaxFunc(hits, byRank)
	note := ""
	if len(inbound) > 0 {
		switch rev := slices.MaxFunc(inbound, byRank); {
		case rev.rank > best.rank:
			settle(rev.rank, "untranslated")
			w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageSNAT, OutPort: out.Name, Row: natRow(rev.n),
				Note: fmt.Sprintf("left untranslated: it came in through gateway port %s into %s, and OVN's flow for traffic entering the SNAT's network outranks the SNAT", in.Name, rev.n.LogicalIP)})
			return
		case rev.rank == best.rank:
			note = fmt.Sprintf(" (it also came in through gateway port %s, and OVN's flow for traffic entering the SNAT's network, which leaves it untranslated, has the same priority: OVS may apply either)", in.Name)
		}
	}
	to, err := netip.ParseAddr(best.n.ExternalIP)
	if err != nil {
		return
	}
	settle(best.rank, "to "+best.n.ExternalIP)
	from := w.p.IPSrc
	w.t.conns = append(w.t.conns, translation{zone: z.Node, router: lr.Name, snat: true, from: from, to: to})
	w.p.IPSrc = to
	w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageSNAT, OutPort: out.Name, Row: natRow(best.n),
		Note: fmt.Sprintf("source %s translated to %s%s", from, to, note)})
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
