package trace

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// routerIngress is a packet arriving on a router through the port named inport.
func (w *walker) routerIngress(z *Zone, inport string) {
	lrp := z.routerPorts[inport]
	lr := z.routerOf[inport]
	if lrp == nil || lr == nil {
		w.end(Verdict{Kind: Stuck, Zone: z.Node, Reason: fmt.Sprintf("router port %s is on no router in node %s's zone", inport, z.Node)})
		return
	}
	if !w.enter(z, lr.Name) {
		return
	}
	w.p.InPort, w.p.OutPort = inport, ""
	mac, _, ok := routerPortAddrs(lrp)
	if !ok || (mac != w.p.EthDst && w.p.EthDst[0]&1 == 0) {
		row := &Row{Table: "Logical_Router_Port", UUID: lrp.UUID, Owner: ownerOf(lrp.ExternalIDs)}
		reason := fmt.Sprintf("router port %s (MAC %s) refused a frame for MAC %s", inport, lrp.MAC, macString(w.p.EthDst))
		w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageAdmit, InPort: inport, Row: row, Note: reason})
		w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: lr.Name, Row: row, Reason: reason})
		return
	}
	if port, own := z.ownAddress(lr, w.p.IPSrc); own && !w.p.IPSrc.IsLinkLocalUnicast() {
		w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: lr.Name, Port: port,
			Reason: fmt.Sprintf("source %s is router %s's own address (on port %s): OVN drops such packets on entry, as it does a loop back through an SNAT", w.p.IPSrc, lr.Name, port)})
		return
	}
	if w.reply {
		w.unSNAT(z, lr)
	}
	w.dnat(z, lr, lrp)
	if port, ok := z.ownAddress(lr, w.p.IPDst); ok {
		w.end(Verdict{Kind: ToRouter, Zone: z.Node, Datapath: lr.Name, Port: port,
			Reason: fmt.Sprintf("addressed to router %s itself (%s on port %s)", lr.Name, w.p.IPDst, port)})
		return
	}
	if w.p.TTL <= 1 {
		w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: lr.Name,
			Reason: fmt.Sprintf("TTL expired on router %s (OVN answers with ICMP time exceeded)", lr.Name)})
		return
	}
	choice, ok := w.route(z, lr, lrp)
	if !ok {
		return
	}
	choice, ok = w.policies(z, lr, choice)
	if !ok {
		return
	}
	w.p.TTL--
	outMAC, _, _ := routerPortAddrs(choice.port)
	w.p.EthSrc = outMAC
	w.p.OutPort = choice.port.Name
	if owner, remote := w.remoteRouterPort(z, choice.port); remote {
		// This zone's pipeline resolves the next hop before the tunnel, and the port that
		// has its address lives only in the other zone's NB: northd has no static
		// binding for it, so OVN asks by ARP/ND through the tunnel (ovn-trace stops at
		// that request) and forwards once it has learned the MAC.
		if owner != "" {
			w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageResolve, OutPort: choice.port.Name,
				Note: fmt.Sprintf("next hop %s is behind remote port %s on node %s: this zone has no MAC for it, so it asks by ARP/ND through the tunnel and forwards once answered",
					choice.nexthop, choice.port.Name, owner)})
		}
		chassis := choice.port.Options["requested-chassis"]
		next, ok := w.handoff(z, lr.Name, "router", choice.port.Name, chassis, owner)
		if !ok {
			return
		}
		nlr := next.routerOf[choice.port.Name]
		nport := next.routerPorts[choice.port.Name]
		if nlr == nil || nport == nil || nlr.Name != lr.Name {
			w.end(Verdict{Kind: Stuck, Zone: owner, Datapath: lr.Name, Port: choice.port.Name,
				Reason: fmt.Sprintf("node %s's zone has no port %s on router %s", owner, choice.port.Name, lr.Name)})
			return
		}
		if _, still := w.remoteRouterPort(next, nport); still {
			w.end(Verdict{Kind: Stuck, Zone: owner, Datapath: lr.Name, Port: choice.port.Name,
				Reason: fmt.Sprintf("port %s is remote in node %s's zone too", choice.port.Name, owner)})
			return
		}
		if !w.enter(next, lr.Name) {
			return
		}
		z, lr, choice.port = next, nlr, nport
	}
	w.routerEgress(z, lr, choice)
}

// remoteRouterPort reports whether a router port lives on another node's chassis: a
// transit router's port with requested-chassis naming another node.
func (w *walker) remoteRouterPort(z *Zone, p *nbdb.LogicalRouterPort) (string, bool) {
	chassis := p.Options["requested-chassis"]
	if chassis == "" {
		return "", false
	}
	node, known := w.t.nodeOfChassis(chassis)
	if known && node == z.Node {
		return "", false
	}
	return node, true
}

// ownAddress finds the port of lr that has ip as one of its own addresses.
func (z *Zone) ownAddress(lr *nbdb.LogicalRouter, ip netip.Addr) (string, bool) {
	for p, nets := range z.addressedPorts(lr) {
		if hasAddr(nets, ip) {
			return p.Name, true
		}
	}
	return "", false
}

// routerEgress resolves the next hop's MAC, applies SNAT and sends the packet out of
// the chosen port: to its peer router, or into the switch it is attached to.
func (w *walker) routerEgress(z *Zone, lr *nbdb.LogicalRouter, c routeChoice) {
	out := c.port
	mac, how, resolved := z.resolve(out, c.nexthop)
	if resolved {
		w.p.EthDst = mac
		w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageResolve, OutPort: out.Name,
			Note: fmt.Sprintf("next hop %s is %s (%s)", c.nexthop, macString(mac), how)})
	} else if attach := z.attachment[out.Name]; attach != nil && z.switchOf[attach.Name] != nil && z.hasUnknownPort(z.switchOf[attach.Name]) {
		// OVN asks with ARP or ND; the answer comes from outside the NB, through the
		// switch's port for unknown addresses.
		w.p.EthDst = [6]byte{}
		w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageResolve, OutPort: out.Name,
			Note: fmt.Sprintf("next hop %s is not in the NB: resolved by ARP/ND on the external network", c.nexthop)})
	} else {
		w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: lr.Name, Port: out.Name,
			Reason: fmt.Sprintf("next hop %s on port %s has no known MAC (OVN would send an ARP/ND request and hold the packet)", c.nexthop, out.Name)})
		return
	}
	if w.reply {
		w.unDNAT(z, lr)
	}
	w.snat(z, lr, out)
	if out.Peer != nil && *out.Peer != "" {
		w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageOutput, OutPort: out.Name,
			Note: "to peer router port " + *out.Peer})
		w.routerIngress(z, *out.Peer)
		return
	}
	attach := z.attachment[out.Name]
	if attach == nil {
		w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: lr.Name, Port: out.Name,
			Reason: fmt.Sprintf("router port %s has no peer and no switch port attaches it", out.Name)})
		return
	}
	w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageOutput, OutPort: out.Name,
		Note: "to switch port " + attach.Name})
	w.switchIngress(z, attach.Name)
}

// resolve finds the MAC of nexthop beyond out: its peer's, or that of the port on the
// attached switch that has the address (a pod, or another router's port).
func (z *Zone) resolve(out *nbdb.LogicalRouterPort, nexthop netip.Addr) ([6]byte, string, bool) {
	if out.Peer != nil && *out.Peer != "" {
		if peer := z.routerPorts[*out.Peer]; peer != nil {
			if mac, nets, ok := routerPortAddrs(peer); ok && hasAddr(nets, nexthop) {
				return mac, "peer port " + peer.Name, true
			}
		}
		return [6]byte{}, "", false
	}
	attach := z.attachment[out.Name]
	if attach == nil {
		return [6]byte{}, "", false
	}
	ls := z.switchOf[attach.Name]
	if ls == nil {
		return [6]byte{}, "", false
	}
	for _, id := range ls.Ports {
		p := z.ix.SwitchPorts[id]
		if p == nil || p == attach {
			continue
		}
		if p.Type == "router" {
			if lrp := z.routerPorts[p.Options["router-port"]]; lrp != nil {
				if mac, nets, ok := routerPortAddrs(lrp); ok && hasAddr(nets, nexthop) {
					return mac, "router port " + lrp.Name, true
				}
			}
		}
		for _, a := range portAddresses(p) {
			if hasAddr(a.ips, nexthop) {
				return a.mac, "port " + p.Name, true
			}
		}
	}
	return [6]byte{}, "", false
}

func hasAddr(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Addr() == a {
			return true
		}
	}
	return false
}

func (z *Zone) hasUnknownPort(ls *nbdb.LogicalSwitch) bool {
	for _, id := range ls.Ports {
		if p := z.ix.SwitchPorts[id]; p != nil {
			for _, a := range p.Addresses {
				if a == "unknown" {
					return true
				}
			}
		}
	}
	return false
}

// policies applies lr's policies, highest priority first, to the routing decision. A
// policy the simulator cannot evaluate, met before the one that decides (or at its
// priority) and acting otherwise, is reported and makes the path uncertain.
func (w *walker) policies(z *Zone, lr *nbdb.LogicalRouter, c routeChoice) (routeChoice, bool) {
	pols := z.sortedPolicies(lr)
	var doubts []doubt
	// northd copies a policy's match into its flow bare, with nothing after it, so a
	// final // comment ends the flow's match harmlessly there (unlike an ACL's or a
	// NAT's, which northd wraps in parentheses): end it with a newline.
	consider := func(pol *nbdb.LogicalRouterPolicy) outcome {
		o, why := w.evalMatch(z, "Logical_Router_Policy", pol.UUID, pol.Match+"\n")
		if o != misses && pol.Action == nbdb.LogicalRouterPolicyActionReroute {
			if _, ok := z.rerouteTarget(lr, pol.Nexthops, w.p.IPDst.Is6()); !ok {
				return misses // northd installs no flow for a policy it cannot route
			}
		}
		if o == unknown {
			doubts = append(doubts, doubt{effect: policyEffect(pol), hop: Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StagePolicy,
				InPort: w.p.InPort, Row: policyRow(pol),
				Note: fmt.Sprintf("policy %s not evaluated (%s): OVN may apply it", pol.Action, why)}})
		}
		return o
	}
	for i, pol := range pols {
		if consider(pol) != applies {
			continue
		}
		for _, tie := range pols[i+1:] {
			if tie.Priority != pol.Priority {
				break
			}
			consider(tie)
		}
		w.settle(doubts, policyEffect(pol))
		row := policyRow(pol)
		if mark, err := strconv.ParseUint(pol.Options["pkt_mark"], 10, 32); err == nil {
			w.p.PktMark = uint32(mark)
		}
		switch pol.Action {
		case nbdb.LogicalRouterPolicyActionDrop:
			w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StagePolicy, InPort: w.p.InPort, Row: row, Note: "policy drops"})
			w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: lr.Name, Row: row,
				Reason: fmt.Sprintf("dropped by policy %q (priority %d) on router %s", pol.Match, pol.Priority, lr.Name)})
			return c, false
		case nbdb.LogicalRouterPolicyActionReroute:
			first, _ := z.rerouteTarget(lr, pol.Nexthops, w.p.IPDst.Is6())
			hops := pol.Nexthops
			h := Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StagePolicy, InPort: w.p.InPort, OutPort: first.port.Name, Row: row,
				Note: fmt.Sprintf("policy reroutes to %s via %s", first.nexthop, first.port.Name)}
			if len(hops) > 1 {
				h.Nexthops = hops
			}
			w.hop(h)
			return first, true
		default:
			w.hop(Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StagePolicy, InPort: w.p.InPort, OutPort: c.port.Name, Row: row, Note: "policy allows: the route stands"})
			return c, true
		}
	}
	w.settle(doubts, "allow") // no policy matched: the route stands, as an allow would have it
	return c, true
}

// policyEffect is what a policy does to a packet it matches: its action, its next hops
// and the mark it sets.
func policyEffect(p *nbdb.LogicalRouterPolicy) string {
	effect := string(p.Action)
	if p.Action == nbdb.LogicalRouterPolicyActionReroute {
		effect += " " + strings.Join(p.Nexthops, ",")
	}
	if m := p.Options["pkt_mark"]; m != "" {
		effect += " pkt_mark=" + m
	}
	return effect
}

// rerouteTarget is where a reroute policy sends a packet: the first next hop and the
// port towards it. Like northd, it refuses (false) a policy whose next hops are not all
// of the packet's family and reachable through one of lr's ports: such a policy has no
// flow at all.
func (z *Zone) rerouteTarget(lr *nbdb.LogicalRouter, nexthops []string, v6 bool) (routeChoice, bool) {
	var first routeChoice
	for i, nh := range nexthops {
		a, err := netip.ParseAddr(nh)
		if err != nil || a.Is6() != v6 {
			return routeChoice{}, false
		}
		port := z.portTowards(lr, a)
		if port == nil {
			return routeChoice{}, false
		}
		if i == 0 {
			first = routeChoice{port: port, nexthop: a}
		}
	}
	return first, len(nexthops) > 0
}

// sortedPolicies are lr's policies, highest priority first; ties by UUID.
func (z *Zone) sortedPolicies(lr *nbdb.LogicalRouter) []*nbdb.LogicalRouterPolicy {
	out := make([]*nbdb.LogicalRouterPolicy, 0, len(lr.Policies))
	for _, id := range lr.Policies {
		if p := z.ix.Policies[id]; p != nil {
			out = append(out, p)
		}
	}
	sortPolicies(out)
	return out
}

// portTowards is lr's port whose network holds a, the longest such network first.
func (z *Zone) portTowards(lr *nbdb.LogicalRouter, a netip.Addr) *nbdb.LogicalRouterPort {
	var best *nbdb.LogicalRouterPort
	bestBits := -1
	for p, nets := range z.addressedPorts(lr) {
		for _, n := range nets {
			if n.Masked().Contains(a) && n.Bits() > bestBits {
				best, bestBits = p, n.Bits()
			}
		}
	}
	return best
}

func policyRow(p *nbdb.LogicalRouterPolicy) *Row {
	prio := p.Priority
	action := string(p.Action)
	if len(p.Nexthops) > 0 {
		action += " " + strings.Join(p.Nexthops, ",")
	}
	if m := p.Options["pkt_mark"]; m != "" {
		action += " pkt_mark=" + m
	}
	return &Row{Table: "Logical_Router_Policy", UUID: p.UUID, Priority: &prio, Match: p.Match, Action: action, Owner: ownerOf(p.ExternalIDs)}
}
