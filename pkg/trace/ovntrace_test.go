package trace_test

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// The simulator is checked against the real thing: a zone is written into a real NB,
// ovn-northd compiles it, and for each packet ovn-trace's outcome — the port the packet
// leaves through, whether it left as an ARP/ND request for an unknown next hop, and
// its final Ethernet and IP addresses and TTL — must equal the simulator's, which reads
// the same zone back from the NB as `ovnk-agent dump` would.

// loadZone writes s into a fresh NB with northd on it, and reads it back as a Zone.
func loadZone(t *testing.T, node string, s *rows.Set) (*testenv.Northd, *trace.Zone) {
	t.Helper()
	northd := nbtest.WithNorthd(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := northd.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	z, err := trace.NewZone(node, nbtest.Dump(t, northd.NB, node))
	if err != nil {
		t.Fatal(err)
	}
	return northd, z
}

// outcome is what a trace comes to, in terms both tracers can state.
type outcome struct {
	// kind is "output" (left through port), "arp" (its next hop is unknown, so OVN
	// sends an ARP/ND request, through port when the request has one way out),
	// "answered" (a router answered it) or "dropped".
	kind           string
	port           string
	ethSrc, ethDst string
	ipSrc, ipDst   string
	ttl            int
	// flood marks an ARP/ND request broadcast on a switch: which of its ports ovn-trace
	// lists last is an accident of the flood order, so the port is not compared.
	flood bool
}

func (o outcome) String() string {
	switch o.kind {
	case "output":
		return fmt.Sprintf("out of %s: eth %s→%s ip %s→%s ttl %d", o.port, o.ethSrc, o.ethDst, o.ipSrc, o.ipDst, o.ttl)
	case "arp":
		return fmt.Sprintf("ARP/ND request for its next hop (out of %q, eth.src %s, ttl %d)", o.port, o.ethSrc, o.ttl)
	}
	return o.kind
}

// ours reduces the simulator's forward path to an outcome.
func ours(p *trace.Path) outcome {
	v := p.Verdict
	o := outcome{kind: "output", port: v.Port, ethSrc: v.Packet.EthSrc, ethDst: v.Packet.EthDst, ipSrc: v.Packet.IPSrc, ipDst: v.Packet.IPDst, ttl: v.Packet.TTL}
	for _, h := range p.Hops {
		if h.Stage == trace.StageResolve && (strings.Contains(h.Note, "resolved by ARP/ND") || strings.Contains(h.Note, "behind remote port")) {
			// OVN asks before it routes on: the request leaves, before any SNAT, and
			// ovn-trace stops there. The simulator follows the held packet further (an
			// ACL may still drop it), but up to the request both say the same.
			switch {
			case strings.Contains(h.Note, "behind remote port"):
				// The request goes through the tunnel, out of that port alone.
				return outcome{kind: "arp", port: h.OutPort, ethSrc: o.ethSrc, ttl: o.ttl}
			case v.Kind == trace.LeftCluster:
				return outcome{kind: "arp", port: v.Port, ethSrc: o.ethSrc, ttl: o.ttl}
			}
			return outcome{kind: "arp", ethSrc: o.ethSrc, ttl: o.ttl, flood: true}
		}
	}
	switch {
	case v.Kind == trace.ToRouter:
		return outcome{kind: "answered"}
	case v.Kind == trace.Dropped && strings.Contains(v.Reason, "has no known MAC"):
		// OVN floods an ARP/ND request on the switch and holds the packet.
		return outcome{kind: "arp", ethSrc: v.Packet.EthSrc, ttl: v.Packet.TTL, flood: true}
	case v.Kind == trace.Dropped && v.Pod != "":
		// Dropped by the host, not by OVN: in OVN it leaves through the gateway, which
		// is what ovn-trace can confirm (classOf names these cases).
	case v.Kind == trace.Delivered, v.Kind == trace.LeftCluster:
	case v.Kind == trace.Stuck && strings.Contains(v.Reason, "whose zone could not be read"):
		// In a single zone, a port on another node's chassis is where the packet leaves.
	default:
		return outcome{kind: "dropped"}
	}
	return o
}

var (
	outputRe = regexp.MustCompile(`^output\("([^"]+)"\);$`)
	setRe    = regexp.MustCompile(`^(eth\.src|eth\.dst|ip4\.src|ip4\.dst|ip6\.src|ip6\.dst|ip\.ttl) = ([^;]+);$`)
	natRe    = regexp.MustCompile(`\((ip[46]\.(?:src|dst))=([0-9a-fA-F.:]+)\)`)
)

// theirs runs ovn-trace --minimal on the packet our path started with and reduces its
// answer: rewrites and outputs in order, conntrack NAT blocks (ct_snat…(ip4.src=X)
// { … }) followed into, ARP/ND requests noted, ICMP errors it generates skipped.
func theirs(t *testing.T, ctx context.Context, northd *testenv.Northd, datapath string, start trace.Header) (outcome, string) {
	t.Helper()
	// Every connection the simulator starts is new; ovn-trace assumes established
	// unless told, which skips NAT on the way out.
	minimal, err := northd.TraceRaw(ctx, datapath, microflow(start), "--minimal", "--ct=new")
	if err != nil {
		t.Fatal(err)
	}
	o := outcome{kind: "dropped", ethSrc: start.EthSrc, ethDst: start.EthDst, ipSrc: start.IPSrc, ipDst: start.IPDst, ttl: start.TTL}
	set := func(field, value string) {
		switch field {
		case "eth.src":
			o.ethSrc = value
		case "eth.dst":
			o.ethDst = value
		case "ip4.src", "ip6.src":
			o.ipSrc = value
		case "ip4.dst", "ip6.dst":
			o.ipDst = value
		case "ip.ttl":
			o.ttl, _ = strconv.Atoi(value)
		}
	}
	var skipping []bool // per open block: is it a generated packet we do not follow?
	skip := func() bool { return slices.Contains(skipping, true) }
	answered, arp := false, false
	for _, line := range strings.Split(minimal, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasSuffix(line, "{"):
			generated := strings.HasPrefix(line, "icmp") || strings.HasPrefix(line, "tcp_reset") || strings.HasPrefix(line, "put_")
			if !skip() && !generated {
				if strings.HasPrefix(line, "arp") || strings.HasPrefix(line, "nd_ns") {
					arp = true
				}
				for _, m := range natRe.FindAllStringSubmatch(line, -1) {
					set(m[1], m[2])
				}
			}
			skipping = append(skipping, generated)
		case line == "};" || line == "}":
			if len(skipping) > 0 {
				skipping = skipping[:len(skipping)-1]
			}
		case skip() || arp && !outputRe.MatchString(line):
			// inside an ICMP error, or the ARP request's own fields
		case outputRe.MatchString(line):
			o.port = outputRe.FindStringSubmatch(line)[1]
			o.kind = "output"
		case line == "icmp4.type = 0;" || line == "icmp6.type = 129;":
			answered = true // an echo reply: a router answered our echo request
		case line == "ip.ttl--;":
			o.ttl--
		case setRe.MatchString(line):
			m := setRe.FindStringSubmatch(line)
			set(m[1], m[2])
		}
	}
	switch {
	case answered:
		return outcome{kind: "answered"}, minimal
	case arp:
		return outcome{kind: "arp", port: o.port, ethSrc: o.ethSrc, ttl: o.ttl}, minimal
	case o.kind == "dropped":
		return outcome{kind: "dropped"}, minimal
	}
	return o, minimal
}

// agree compares outcomes; an ARP/ND request flooded on a switch is compared without
// its port.
func agree(ours, theirs outcome) bool {
	if ours.flood && theirs.kind == "arp" {
		theirs.port, theirs.flood = "", true
	}
	return ours == theirs
}

// A class names the packets on which ovn-trace 25.03 and the simulator may not be held
// to plain agreement, with the comparison that holds them instead. docs/trace.md quotes
// the real ovn-trace for each. Every other packet is plain and must agree outright.
type class string

const (
	plain class = ""
	// hairpinSNAT: a packet routed back out of the distributed gateway port it came in
	// through, with an SNAT on that port. northd gives it two lr_out_snat flows of one
	// priority, the SNAT and the commit of traffic entering the SNATed network, and OVS
	// (so ovn-trace, from one run to the next) may apply either: the simulator
	// translates and says so; ovn-trace must show the packet either way.
	hairpinSNAT class = "hairpin SNAT"
	// hostIsolation: a packet for a pod of a network its own does not reach. OVN sends
	// it out of the gateway and the host drops it, so ovn-trace must show it leaving
	// through that port with the simulator's addresses.
	hostIsolation class = "host isolation"
	// unSNATStop: a packet addressed to an SNAT address of a gateway router that no
	// port has. Its lr_in_unsnat flow is `ct_snat;`, which ovn-trace takes as having
	// "no visible effect in a gateway router" and follows no further, where OVS goes on
	// to the next stage: ovn-trace must show it ending there, and the simulator routes
	// it on as the datapath does.
	unSNATStop class = "un-SNAT stop"
)

// classes are the named classes, in the order they are reported.
var classes = []class{hairpinSNAT, hostIsolation, unSNATStop}

// gatewaySNATs maps each SNAT address of a gateway router of s that is no router port's
// own address to that router's name.
func gatewaySNATs(s *rows.Set) map[string]string {
	own := map[string]bool{}
	for _, p := range s.RouterPorts {
		for _, n := range p.Networks {
			if a, ok := addrOf(n); ok {
				own[a.String()] = true
			}
		}
	}
	ix := rows.NewIndex(s)
	out := map[string]string{}
	for _, lr := range s.Routers {
		if lr.Options["chassis"] == "" {
			continue
		}
		for _, id := range lr.Nat {
			n := ix.NATs[id]
			if n == nil || n.Type == nbdb.NATTypeDNAT {
				continue
			}
			if a, ok := addrOf(n.ExternalIP); ok && !own[a.String()] {
				out[a.String()] = lr.Name
			}
		}
	}
	return out
}

// classOf says which class the simulator's path for a packet falls in; gwSNATs is
// gatewaySNATs of the zone.
func classOf(p *trace.Path, gwSNATs map[string]string) class {
	if p.Verdict.Kind == trace.Dropped && p.Verdict.Pod != "" {
		return hostIsolation
	}
	router, toSNAT := gwSNATs[p.Packet.IPDst]
	for _, h := range p.Hops {
		if h.Stage == trace.StageSNAT && strings.Contains(h.Note, "OVS may apply either") {
			return hairpinSNAT
		}
		if toSNAT && h.Kind == "router" && h.Datapath == router {
			return unSNATStop
		}
	}
	return plain
}

// agreeAs compares outcomes the way the packet's class asks.
func agreeAs(c class, p *trace.Path, ours, theirs outcome) bool {
	if agree(ours, theirs) {
		return true
	}
	switch c {
	case hairpinSNAT:
		ours.ipSrc = p.Packet.IPSrc // the other flow: committed untranslated
		return agree(ours, theirs)
	case unSNATStop:
		// ovn-trace ends it (stopsAtUnSNAT checks where); the datapath, and so the
		// simulator, routes it on out of the gateway router's external port.
		return theirs.kind == "dropped" && p.Verdict.Kind == trace.LeftCluster
	}
	return false
}

// microflow writes a packet header in ovn-trace's expression syntax.
func microflow(h trace.Header) string {
	ip, icmp, echo := "ip4", "icmp4", 8
	if strings.Contains(h.IPDst, ":") {
		ip, icmp, echo = "ip6", "icmp6", 128
	}
	return fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && %s.src == %s && %s.dst == %s && ip.ttl == %d && %s.type == %d`,
		h.InPort, h.EthSrc, h.EthDst, ip, h.IPSrc, ip, h.IPDst, h.TTL, icmp, echo)
}

// differential traces every packet of cases through both tracers, reports each
// disagreement with both outcomes and ovn-trace's own words, and counts the packets of
// each class. seen, when set, is shown every forward path, for the caller to tally
// what the cases exercised.
func differential(t *testing.T, c *trace.Cluster, northd *testenv.Northd, z *trace.Zone, s *rows.Set, cases []trace.Request, seen func(*trace.Path)) map[class]int {
	t.Helper()
	gwSNATs := gatewaySNATs(s)
	if len(cases) == 0 {
		t.Fatal("no packets to compare: the comparison would prove nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	counts := map[class]int{}
	for _, req := range cases {
		res, err := trace.Trace(ctx, c, req)
		if err != nil {
			t.Fatalf("%s → %s: %v", req.Port, req.Dst, err)
		}
		if seen != nil {
			seen(res.Forward)
		}
		_, ls := z.SwitchPort(req.Port)
		want, raw := theirs(t, ctx, northd, ls.Name, res.Forward.Packet)
		got := ours(res.Forward)
		cl := classOf(res.Forward, gwSNATs)
		counts[cl]++
		if cl == unSNATStop {
			stopsAtUnSNAT(t, ctx, northd, ls.Name, res.Forward.Packet, gwSNATs[res.Forward.Packet.IPDst])
		}
		if agreeAs(cl, res.Forward, got, want) {
			continue
		}
		var b strings.Builder
		_ = trace.WriteText(&b, res)
		what := "plain"
		if cl != plain {
			what = string(cl)
		}
		t.Errorf("%s → %s (%s):\n  ovn-trace: %s\n  ovnk:      %s\novn-trace --minimal:\n%s\novnk:\n%s", req.Port, req.Dst, what, want, got, raw, b.String())
	}
	return counts
}

// tableLineRe finds the stages of ovn-trace --detailed: "  5. lr_in_unsnat (northd.c:…): …".
var tableLineRe = regexp.MustCompile(`(?m)^\s*\d+\. (\S+) `)

// stopsAtUnSNAT fails the test unless ovn-trace follows the packet into router and ends
// it at that router's un-SNAT stage with an argument-less ct_snat, as the class
// "un-SNAT stop" says: the class must not cover a packet ovn-trace drops elsewhere.
func stopsAtUnSNAT(t *testing.T, ctx context.Context, northd *testenv.Northd, datapath string, start trace.Header, router string) {
	t.Helper()
	out, err := northd.TraceRaw(ctx, datapath, microflow(start), "--detailed", "--ct=new")
	if err != nil {
		t.Fatal(err)
	}
	at := strings.LastIndex(out, `ingress(dp="`+router+`"`)
	stages := tableLineRe.FindAllStringSubmatch(out[max(at, 0):], -1)
	if at < 0 || len(stages) == 0 || stages[len(stages)-1][1] != "lr_in_unsnat" || !strings.HasSuffix(strings.TrimSpace(out), "ct_snat;") {
		t.Errorf("%s → %s: ovn-trace does not end at %s's lr_in_unsnat with ct_snat:\n%s", start.InPort, start.IPDst, router, out)
	}
}

// expectClasses fails the test unless the packets fell into the classes as pinned, so
// a named class never silently grows to cover more than the cases it was written for;
// where the plain packets are pinned too, the zone's total is.
func expectClasses(t *testing.T, got map[class]int, pinned map[class]int) {
	t.Helper()
	named := make([]string, 0, len(classes))
	for _, cl := range append([]class{plain}, classes...) {
		if _, counted := pinned[plain]; cl == plain && !counted {
			continue // the random zones pin no total
		}
		if got[cl] != pinned[cl] {
			t.Errorf("%d packets of class %q, pinned at %d: read them, then pin the new count", got[cl], cl, pinned[cl])
		}
		if cl != plain {
			named = append(named, fmt.Sprintf("%d %s", got[cl], cl))
		}
	}
	t.Logf("%d plain packets, each held to agree outright with ovn-trace; %s, each held to its class's comparison", got[plain], strings.Join(named, ", "))
}

// learnRouterNeighbors records, for each router with dynamic_neigh_routers (the
// gateway routers), the MACs of the other routers' ports on its switches, as a running
// cluster learns them by ARP/ND: such routers have no static entries for their
// neighbours, and without these ovn-trace stops at the first ARP request.
func learnRouterNeighbors(t *testing.T, northd *testenv.Northd, s *rows.Set) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ix := rows.NewIndex(s)
	attached := map[string]string{} // router port name → switch name
	onSwitch := map[string][]string{}
	for _, ls := range s.Switches {
		for _, id := range ls.Ports {
			if p := ix.SwitchPorts[id]; p != nil && p.Type == "router" {
				attached[p.Options["router-port"]] = ls.Name
				onSwitch[ls.Name] = append(onSwitch[ls.Name], p.Options["router-port"])
			}
		}
	}
	lrpByName := map[string]string{}
	for id, p := range ix.RouterPorts {
		lrpByName[p.Name] = id
	}
	for _, lr := range s.Routers {
		if lr.Options["dynamic_neigh_routers"] != "true" {
			continue
		}
		for _, id := range lr.Ports {
			own := ix.RouterPorts[id]
			if own == nil || attached[own.Name] == "" {
				continue
			}
			for _, other := range onSwitch[attached[own.Name]] {
				peer := ix.RouterPorts[lrpByName[other]]
				if peer == nil || peer.Name == own.Name {
					continue
				}
				for _, n := range peer.Networks {
					if a, ok := addrOf(n); ok {
						if err := northd.LearnNeighbor(ctx, lr.Name, own.Name, a.String(), peer.MAC); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
	}
}

// packetsFrom lists, for each source port of s, a packet to every address the zone
// knows (switch ports, router ports, NAT addresses, one host in every routed prefix)
// and to an address outside the cluster, in each family the source has.
func packetsFrom(node string, s *rows.Set, sources []string) []trace.Request {
	seen := map[netip.Addr]bool{}
	var dsts []netip.Addr
	add := func(a netip.Addr) {
		if a.IsValid() && !a.IsLinkLocalUnicast() && !seen[a] {
			seen[a] = true
			dsts = append(dsts, a)
		}
	}
	families := map[string]map[bool]bool{}
	for _, p := range s.SwitchPorts {
		families[p.Name] = map[bool]bool{}
		for _, entry := range p.Addresses {
			for _, f := range strings.Fields(entry)[min(1, len(strings.Fields(entry))):] {
				if a, ok := addrOf(f); ok {
					add(a)
					families[p.Name][a.Is6()] = true
				}
			}
		}
	}
	for _, p := range s.RouterPorts {
		for _, n := range p.Networks {
			if a, ok := addrOf(n); ok {
				add(a)
			}
		}
	}
	for _, r := range s.Routes {
		if pf, err := netip.ParsePrefix(r.IPPrefix); err == nil && pf.Bits() > 0 && pf.Bits() < pf.Addr().BitLen()-3 {
			add(pf.Masked().Addr().Next().Next().Next().Next().Next())
		}
	}
	for _, n := range s.NATs {
		if a, ok := addrOf(n.ExternalIP); ok {
			add(a)
		}
	}
	add(netip.MustParseAddr("8.8.8.8"))
	add(netip.MustParseAddr("2001:db8::8"))
	slices.SortFunc(dsts, func(a, b netip.Addr) int { return a.Compare(b) })
	var out []trace.Request
	for _, src := range sources {
		for _, d := range dsts {
			if families[src][d.Is6()] {
				out = append(out, trace.Request{Node: node, Port: src, Dst: d})
			}
		}
	}
	return out
}

// addrOf reads "10.0.0.1" or "10.0.0.1/24" as the address.
func addrOf(s string) (netip.Addr, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Addr(), true
	}
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

// vifs are the ports of s that a packet can start from: pods and management ports.
func vifs(s *rows.Set) []string {
	var out []string
	for _, p := range s.SwitchPorts {
		if p.Type == "" && len(p.Addresses) > 0 && !slices.Contains(p.Addresses, "unknown") {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestCompiledZonesAgreeWithOVNTrace runs every packet from every pod and management
// port of a zone to every address the zone knows and one outside, through both tracers,
// for each topology the compiler makes: Layer3, connected Layer3 (OKEP-5224's connect
// router, a transit router), Layer3 connected to Layer2, every zone of OKEP-5094's
// Layer2 network with its transit router, and both sides of its rolling upgrade.
func TestCompiledZonesAgreeWithOVNTrace(t *testing.T) {
	for _, fx := range []struct {
		name, node string
		state      func() *cluster.State
		classes    map[class]int
	}{
		// Hairpin SNAT: each network's management port to its own address, per family.
		// Host isolation: the CUDN's pod to the default network's pods (client, dns)
		// and the default pod on node1 (client) to the CUDN's pod, each family.
		// Un-SNAT stop: a pod to the management masquerade address its legacy Layer2
		// gateway router SNATs to; every other gateway router SNAT address is also an
		// address of the router's external port (a UDN's masquerade address is a /32
		// there), which ovn-trace follows like the datapath.
		{"layer3", "node1", topologytest.Layer3, map[class]int{plain: 206, hairpinSNAT: 2, hostIsolation: 12}},
		{"okep5224", "ovn-worker", topologytest.OKEP5224, map[class]int{plain: 102, hairpinSNAT: 2}},
		{"mixed", "ovn-worker", topologytest.MixedConnect, map[class]int{plain: 216, hairpinSNAT: 4}},
		{"okep5094", "ovn-worker", topologytest.OKEP5094, map[class]int{plain: 52, hairpinSNAT: 2}},
		{"okep5094-control-plane", "ovn-control-plane", topologytest.OKEP5094, map[class]int{plain: 52, hairpinSNAT: 2}},
		{"okep5094-worker2", "ovn-worker2", topologytest.OKEP5094, map[class]int{plain: 25, hairpinSNAT: 2}},
		// OKEP-5094's rolling upgrade, node1 upgraded: its zone with the upgrade ports
		// (stotr-…-upgrade, trtos-…-upgrade) and the legacy nodes' remote gateway ports,
		// and a legacy zone, whose gateway router holds the management SNAT with its
		// match (a gateway router has no inbound SNAT flow, so no hairpin there).
		{"upgrade-upgraded", "node1", func() *cluster.State { return topologytest.Layer2Upgrade("node1") }, map[class]int{plain: 56, hairpinSNAT: 2}},
		{"upgrade-legacy", "node2", func() *cluster.State { return topologytest.Layer2Upgrade("node1") }, map[class]int{plain: 44, unSNATStop: 2}},
	} {
		t.Run(fx.name, func(t *testing.T) {
			st := fx.state()
			res, err := topology.Compile(st, fx.node)
			if err != nil {
				t.Fatal(err)
			}
			northd, z := loadZone(t, fx.node, res.Rows)
			learnRouterNeighbors(t, northd, res.Rows)
			c := trace.ClusterOf(st, trace.Zones{fx.node: z})
			cases := packetsFrom(fx.node, res.Rows, vifs(res.Rows))
			expectClasses(t, differential(t, c, northd, z, res.Rows, cases, nil), fx.classes)
		})
	}
}
