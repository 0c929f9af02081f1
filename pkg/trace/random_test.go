package trace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/nbtest"
)

// randomZone builds a zone from a seed: routers each serving pod switches, joined in a
// chain either by peer ports or by one join switch; routes between them that are
// sometimes missing, discarding, source-based or more specific than needed; policies
// that drop, reroute and allow; and a gateway router with a default route out of a
// localnet port and an SNAT. Everything is IPv4, and every address is unique.
type randomZone struct {
	set  rows.Set
	rng  *rand.Rand
	vifs []string
}

func newRandomZone(seed uint64) *randomZone {
	z := &randomZone{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	routers := 2 + z.rng.IntN(3)
	peerChain := z.rng.IntN(2) == 0
	var lrs []*nbdb.LogicalRouter
	subnets := map[int][]netip.Prefix{}
	for i := range routers {
		lr := z.router(fmt.Sprintf("lr%d", i), nil)
		lrs = append(lrs, lr)
		for j := range 1 + z.rng.IntN(2) {
			subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), byte(j), 0}), 24)
			subnets[i] = append(subnets[i], subnet)
			ls := z.switchNamed(fmt.Sprintf("ls%d_%d", i, j))
			z.link(lr, ls, fmt.Sprintf("lr%d-ls%d_%d", i, i, j), hostIn(subnet, 1))
			for k := range 1 + z.rng.IntN(3) {
				ip := hostIn(subnet, 10+k)
				name := fmt.Sprintf("vif%d_%d_%d", i, j, k)
				z.port(ls, &nbdb.LogicalSwitchPort{UUID: "LSP:" + name, Name: name, Addresses: []string{macOf(ip) + " " + ip.Addr().String()}})
				z.vifs = append(z.vifs, name)
			}
		}
	}
	// Links between neighbours: router i's address on link i is .1, router i+1's is .2.
	linkIP := func(i, side int) netip.Prefix {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 64, byte(i), byte(side)}), 24)
	}
	var join *nbdb.LogicalSwitch
	if !peerChain {
		join = z.switchNamed("join")
	}
	for i := 0; i+1 < routers; i++ {
		a, b := linkIP(i, 1), linkIP(i, 2)
		if peerChain {
			z.peers(lrs[i], lrs[i+1], fmt.Sprintf("lr%d-to-lr%d", i, i+1), fmt.Sprintf("lr%d-to-lr%d", i+1, i), a, b)
		} else {
			z.link(lrs[i], join, fmt.Sprintf("lr%d-join%d", i, i), a)
			z.link(lrs[i+1], join, fmt.Sprintf("lr%d-join%d", i+1, i), b)
		}
	}
	// Routes to every other router's subnets, through the neighbour on the way.
	for i := range routers {
		for j := range routers {
			if i == j {
				continue
			}
			via := linkIP(i, 2).Addr()
			if j < i {
				via = linkIP(i-1, 1).Addr()
			}
			for _, subnet := range subnets[j] {
				switch r := z.rng.IntN(10); {
				case r == 0: // missing: no route
				case r == 1:
					z.route(lrs[i], subnet.String(), "discard", "")
				case r == 2: // a more specific route to one host, and the subnet route
					z.route(lrs[i], hostIn(subnet, 10).Addr().String(), via.String(), "")
					z.route(lrs[i], subnet.String(), via.String(), "")
				default:
					z.route(lrs[i], subnet.String(), via.String(), "")
				}
			}
			if z.rng.IntN(4) == 0 && len(subnets[i]) > 0 { // source routing competes
				z.route(lrs[i], subnets[i][0].String(), via.String(), nbdb.LogicalRouterStaticRoutePolicySrcIP)
			}
		}
		for range z.rng.IntN(3) {
			z.randomPolicy(lrs[i], subnets)
		}
	}
	// Sometimes the first router's first switch port uses a route table of its own,
	// with a route to one subnet; the main table's destination routes no longer apply
	// to packets coming in there.
	if z.rng.IntN(2) == 0 && routers > 1 {
		for _, lrp := range z.set.RouterPorts {
			if lrp.Name == "rp-lr0-ls0_0" {
				lrp.Options = map[string]string{"route_table": "rtb1"}
			}
		}
		via := linkIP(0, 2).Addr().String()
		z.routeInTable(lrs[0], subnets[routers-1][0].String(), via, "rtb1")
	}
	// The last router is a gateway router with a way out and an SNAT.
	gw := lrs[routers-1]
	gw.Options = map[string]string{"chassis": "chassis-1"}
	ext := z.switchNamed("ext")
	z.link(gw, ext, "gw-ext", netip.MustParsePrefix("172.16.0.10/24"))
	z.port(ext, &nbdb.LogicalSwitchPort{UUID: "LSP:physnet", Name: "physnet", Type: "localnet", Addresses: []string{"unknown"}, Options: map[string]string{"network_name": "physnet"}})
	z.route(gw, "0.0.0.0/0", "172.16.0.254", "")
	z.nat(gw, "172.16.0.10", "10.0.0.0/8")
	return z
}

func hostIn(p netip.Prefix, n int) netip.Prefix {
	a := p.Masked().Addr().As4()
	a[3] = byte(n)
	return netip.PrefixFrom(netip.AddrFrom4(a), p.Bits())
}

func macOf(p netip.Prefix) string {
	a := p.Addr().As4()
	return fmt.Sprintf("0a:58:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3])
}

func ids(id string) map[string]string {
	return map[string]string{rows.OwnerControllerKey: rows.OwnerController, rows.IDKey: id}
}

func (z *randomZone) router(name string, options map[string]string) *nbdb.LogicalRouter {
	lr := &nbdb.LogicalRouter{UUID: "LR:" + name, Name: name, Options: options, ExternalIDs: ids("LR:" + name)}
	z.set.Routers = append(z.set.Routers, lr)
	return lr
}

func (z *randomZone) switchNamed(name string) *nbdb.LogicalSwitch {
	ls := &nbdb.LogicalSwitch{UUID: "LS:" + name, Name: name, ExternalIDs: ids("LS:" + name)}
	z.set.Switches = append(z.set.Switches, ls)
	return ls
}

func (z *randomZone) port(ls *nbdb.LogicalSwitch, p *nbdb.LogicalSwitchPort) {
	p.ExternalIDs = ids(p.UUID)
	ls.Ports = append(ls.Ports, p.UUID)
	z.set.SwitchPorts = append(z.set.SwitchPorts, p)
}

func (z *randomZone) routerPort(lr *nbdb.LogicalRouter, name string, ip netip.Prefix, peer *string) {
	p := &nbdb.LogicalRouterPort{UUID: "LRP:" + name, Name: name, MAC: macOf(ip), Networks: []string{ip.String()}, Peer: peer, ExternalIDs: ids("LRP:" + name)}
	lr.Ports = append(lr.Ports, p.UUID)
	z.set.RouterPorts = append(z.set.RouterPorts, p)
}

// link attaches lr to ls through a router port and its switch port.
func (z *randomZone) link(lr *nbdb.LogicalRouter, ls *nbdb.LogicalSwitch, name string, ip netip.Prefix) {
	z.routerPort(lr, "rp-"+name, ip, nil)
	z.port(ls, &nbdb.LogicalSwitchPort{UUID: "LSP:sp-" + name, Name: "sp-" + name, Type: "router", Addresses: []string{"router"},
		Options: map[string]string{"router-port": "rp-" + name}})
}

func (z *randomZone) peers(a, b *nbdb.LogicalRouter, aName, bName string, aIP, bIP netip.Prefix) {
	z.routerPort(a, aName, aIP, &bName)
	z.routerPort(b, bName, bIP, &aName)
}

func (z *randomZone) route(lr *nbdb.LogicalRouter, prefix, nexthop string, policy nbdb.LogicalRouterStaticRoutePolicy) {
	id := fmt.Sprintf("route:%s:%s:%s:%s", lr.Name, prefix, nexthop, policy)
	r := &nbdb.LogicalRouterStaticRoute{UUID: id, IPPrefix: prefix, Nexthop: nexthop, ExternalIDs: ids(id)}
	if policy != "" {
		r.Policy = &policy
	}
	lr.StaticRoutes = append(lr.StaticRoutes, id)
	z.set.Routes = append(z.set.Routes, r)
}

func (z *randomZone) routeInTable(lr *nbdb.LogicalRouter, prefix, nexthop, table string) {
	id := fmt.Sprintf("route:%s:%s:%s:table=%s", lr.Name, prefix, nexthop, table)
	lr.StaticRoutes = append(lr.StaticRoutes, id)
	z.set.Routes = append(z.set.Routes, &nbdb.LogicalRouterStaticRoute{UUID: id, IPPrefix: prefix, Nexthop: nexthop, RouteTable: table, ExternalIDs: ids(id)})
}

// aclCommands are ovn-nbctl commands that give the zone a port group of one or two
// ports with ACLs in both directions (a drop, an allow-related that makes the switches
// stateful) and a switch ACL: the row set has no place for them, so they go in after
// the rows, and the simulator reads them back from the NB like everything else.
func (z *randomZone) aclCommands() [][]string {
	pick := func() string { return z.vifs[z.rng.IntN(len(z.vifs))] }
	addr := func(port string) string {
		for _, p := range z.set.SwitchPorts {
			if p.Name == port {
				return strings.Fields(p.Addresses[0])[1]
			}
		}
		return ""
	}
	members := []string{pick(), pick()}
	cmds := [][]string{
		append([]string{"pg-add", "pg_random"}, slices.Compact(slices.Sorted(slices.Values(members)))...),
		{"acl-add", "pg_random", "from-lport", fmt.Sprint(1000 + z.rng.IntN(100)), "ip4.dst == " + addr(pick()), "drop"},
		{"acl-add", "pg_random", "to-lport", "1001", "ip4.src == " + addr(pick()), "allow-related"},
		{"acl-add", "pg_random", "to-lport", "900", "ip4.src == " + addr(pick()), "drop"},
	}
	sw := z.set.Switches[z.rng.IntN(len(z.set.Switches))]
	return append(cmds, []string{"acl-add", sw.Name, "from-lport", "1500", "ip4.dst == 8.8.8.8 && icmp4", "reject"})
}

func (z *randomZone) nat(lr *nbdb.LogicalRouter, external, logical string) {
	id := "nat:" + lr.Name + ":" + logical
	lr.Nat = append(lr.Nat, id)
	z.set.NATs = append(z.set.NATs, &nbdb.NAT{UUID: id, Type: nbdb.NATTypeSNAT, ExternalIP: external, LogicalIP: logical, ExternalIDs: ids(id)})
}

// randomPolicy adds a drop, reroute or allow policy on one of the router's flows.
func (z *randomZone) randomPolicy(lr *nbdb.LogicalRouter, subnets map[int][]netip.Prefix) {
	var all []netip.Prefix
	for i := range len(subnets) {
		all = append(all, subnets[i]...)
	}
	src, dst := all[z.rng.IntN(len(all))], all[z.rng.IntN(len(all))]
	match := fmt.Sprintf("ip4.src == %s && ip4.dst == %s", src, hostIn(dst, 10+z.rng.IntN(3)).Addr())
	prio := 100 + z.rng.IntN(900)
	id := fmt.Sprintf("policy:%s:%d:%s", lr.Name, prio, match)
	p := &nbdb.LogicalRouterPolicy{UUID: id, Priority: prio, Match: match, ExternalIDs: ids(id)}
	switch z.rng.IntN(3) {
	case 0:
		p.Action = nbdb.LogicalRouterPolicyActionDrop
	case 1:
		p.Action = nbdb.LogicalRouterPolicyActionAllow
	default:
		// Reroute to an address on one of the router's own links.
		p.Action = nbdb.LogicalRouterPolicyActionReroute
		for _, lrp := range z.set.RouterPorts {
			for _, port := range lr.Ports {
				if port == lrp.UUID && lrp.Peer != nil {
					peer := *lrp.Peer
					for _, other := range z.set.RouterPorts {
						if other.Name == peer {
							a, _ := netip.ParsePrefix(other.Networks[0])
							p.Nexthops = []string{a.Addr().String()}
							switch z.rng.IntN(3) {
							case 0: // ECMP over the same neighbour's address and a host beside it
								p.Nexthops = append(p.Nexthops, a.Addr().Next().Next().String())
							case 1: // a next hop no port reaches: northd drops the whole policy
								p.Nexthops = append(p.Nexthops, "192.0.2.1")
							}
						}
					}
				}
			}
		}
		if len(p.Nexthops) == 0 {
			p.Action = nbdb.LogicalRouterPolicyActionDrop
		}
	}
	lr.Policies = append(lr.Policies, id)
	z.set.Policies = append(z.set.Policies, p)
}

// TestRandomZonesAgreeWithOVNTrace generates zones from fixed seeds and sends every
// port's packet to every address of the zone and one outside, through both tracers.
func TestRandomZonesAgreeWithOVNTrace(t *testing.T) {
	total := 0
	exercised := map[string]int{} // "stage action" of deciding rows, and verdicts
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 7, 9} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rz := newRandomZone(seed)
			northd, _ := loadZone(t, "node", &rz.set)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, cmd := range rz.aclCommands() {
				if out, err := northd.NB.NBCtl(ctx, cmd...); err != nil {
					t.Fatalf("ovn-nbctl %v: %v\n%s", cmd, err, out)
				}
			}
			z, err := trace.NewZone("node", nbtest.Dump(t, northd.NB, "node"))
			if err != nil {
				t.Fatal(err)
			}
			c := trace.NewCluster(trace.Zones{"node": z}, nil, nil)
			cases := packetsFrom("node", &rz.set, rz.vifs)
			agreed, known := differential(t, c, northd, z, &rz.set, cases, func(p *trace.Path) {
				for _, h := range p.Hops {
					if h.Row != nil {
						action, _, _ := strings.Cut(h.Row.Action, " ")
						exercised[string(h.Stage)+" "+action]++
						if strings.HasPrefix(h.Row.Match, "route_table") {
							exercised["route table"]++
						}
						if len(h.Nexthops) > 1 {
							exercised["ecmp"]++
						}
					}
				}
				exercised["verdict "+string(p.Verdict.Kind)]++
			})
			total += agreed
			if known != 0 {
				t.Errorf("%d differences explained by 23.03 in a zone that uses no 25.03 feature", known)
			}
			t.Logf("seed %d: %d of %d packets agree with ovn-trace", seed, agreed, len(cases))
		})
	}
	t.Logf("%d packets agree in all; decisions exercised: %v", total, exercised)
	for _, want := range []string{"acl drop", "acl allow-related", "acl reject", "policy drop", "policy allow", "policy reroute",
		"route table", "route via", "ecmp",
		"verdict delivered", "verdict dropped", "verdict no-route", "verdict left-cluster", "verdict to-router"} {
		if exercised[want] == 0 {
			t.Errorf("no packet was decided by %q: the seeds no longer exercise it", want)
		}
	}
}
