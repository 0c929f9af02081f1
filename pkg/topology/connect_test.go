package topology

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

func TestGoldenOKEP5224(t *testing.T) {
	for _, node := range []string{"ovn-control-plane", "ovn-worker", "ovn-worker2"} {
		t.Run(node, func(t *testing.T) {
			dump, res := compileDump(t, topologytest.OKEP5224(), node)
			if err := res.Connects["colored-enterprise"]; err != nil {
				t.Errorf("connect not compiled: %v", err)
			}
			goldenZone(t, "okep5224-"+node, dump, res)
		})
	}
}

func TestGoldenMixedConnect(t *testing.T) {
	for _, node := range []string{"ovn-worker", "ovn-worker2"} {
		t.Run(node, func(t *testing.T) {
			dump, res := compileDump(t, topologytest.MixedConnect(), node)
			if err := res.Connects["mixed"]; err != nil {
				t.Errorf("connect not compiled: %v", err)
			}
			goldenZone(t, "mixed-connect-"+node, dump, res)
		})
	}
}

// TestOKEP5224ListingsAppear requires OKEP-5224's lr-policy-list and lr-route-list lines
// in ovn-worker's zone. The green network holds the first block, so its lines are the
// OKEP's exactly; blue's block is the next /24, so its addresses are the OKEP's plus
// 192.168.1.0 − 192.168.0.0 and minus the OKEP's interleaving (docs/connect.md).
func TestOKEP5224ListingsAppear(t *testing.T) {
	dump, _ := compileDump(t, topologytest.OKEP5224(), "ovn-worker")
	requireLines(t, dump,
		// The OKEP's, verbatim.
		"# ovn-nbctl lr-policy-list green_green.network_ovn_cluster_router",
		`9001 inport == "rtos-green_green.network_ovn-worker" && ip4.dst == 100.10.0.0/16 reroute 192.168.0.5`,
		"# ovn-nbctl lr-route-list connect_router_colored-enterprise",
		"200.10.0.0/24 192.168.0.8 dst-ip",
		"200.10.2.0/24 192.168.0.4 dst-ip",
		// The OKEP's blue lines (reroute 192.168.0.3; 100.10.2.0/24 via 192.168.0.2 and
		// 100.10.0.0/24 via 192.168.0.6) from blue's own block.
		"# ovn-nbctl lr-policy-list blue_blue.network_ovn_cluster_router",
		`9001 inport == "rtos-blue_blue.network_ovn-worker" && ip4.dst == 200.10.0.0/16 reroute 192.168.1.5`,
		"100.10.2.0/24 192.168.1.4 dst-ip",
		"100.10.0.0/24 192.168.1.8 dst-ip",
		// ovn-worker2, which the OKEP's listing leaves out.
		"100.10.1.0/24 192.168.1.6 dst-ip",
		"200.10.1.0/24 192.168.0.6 dst-ip",
		// The link on this node: peered ports, the network side first.
		"port crtor-colored-enterprise_green_green.network_ovn-worker",
		`networks: ["192.168.0.5/31"]`,
		"peer: rtocr-green_green.network_ovn-worker_colored-enterprise",
		"port rtocr-green_green.network_ovn-worker_colored-enterprise",
		`mac: "0a:58:c0:a8:00:04"`,
		`networks: ["192.168.0.4/31"]`,
		// Another node's link: a remote port on its chassis, with its derived key.
		"port crtor-colored-enterprise_green_green.network_ovn-control-plane",
		`networks: ["192.168.0.9/31"]`,
		"requested-chassis: chassis-ovn-control-plane",
		"requested-tnl-key: 5",
	)
}

func TestMixedConnectListingsAppear(t *testing.T) {
	dump, _ := compileDump(t, topologytest.MixedConnect(), "ovn-worker2")
	requireLines(t, dump,
		"# ovn-nbctl lr-policy-list blue_blue.network_ovn_cluster_router",
		`9001 inport == "rtos-blue_blue.network_ovn-worker2" && ip4.dst == 105.105.0.0/16 reroute 192.168.0.7`,
		`9001 inport == "rtos-blue_blue.network_ovn-worker2" && ip6.dst == 2010:105::/60 reroute fd00:192:168::7`,
		"# ovn-nbctl lr-policy-list yellow_yellow.network_transit_router",
		`9001 inport == "trtos-yellow_yellow.network_ovn_layer2_switch" && ip4.dst == 103.103.0.0/16 reroute 192.168.1.1`,
		`9001 inport == "trtos-yellow_yellow.network_ovn_layer2_switch" && ip6.dst == 2014:103::/48 reroute fd00:192:168::101`,
		"# ovn-nbctl lr-route-list connect_router_mixed",
		"103.103.0.0/24 192.168.0.8 dst-ip",
		"103.103.1.0/24 192.168.0.6 dst-ip",
		"103.103.2.0/24 192.168.0.4 dst-ip",
		"105.105.0.0/16 192.168.1.0 dst-ip",
		"2014:103:0:1::/64 fd00:192:168::6 dst-ip",
		"2010:105::/60 fd00:192:168::100 dst-ip",
		// The Layer2 link is one pair, peered in every zone.
		"port crtor-mixed_yellow_yellow.network",
		`networks: ["192.168.1.1/31", "fd00:192:168::101/127"]`,
		"peer: rtocr-yellow_yellow.network_mixed",
		"requested-tnl-key: 129",
		"port rtocr-yellow_yellow.network_mixed",
		`networks: ["192.168.1.0/31", "fd00:192:168::100/127"]`,
	)
}

// TestZonesAgreeOnConnectRouter checks what a connect router spanning zones needs:
// the same datapath key everywhere; for every link, the connect router's port has the
// same MAC, networks and key in every zone, is peered with the network's router in its
// own node's zone and bound to that node's chassis everywhere else (a Layer2 link is
// peered everywhere); no two ports of the router share a key; and every zone routes
// every node's subnets the same way.
func TestZonesAgreeOnConnectRouter(t *testing.T) {
	for name, st := range map[string]*cluster.State{"okep5224": topologytest.OKEP5224(), "mixed": topologytest.MixedConnect()} {
		t.Run(name, func(t *testing.T) {
			zones := compileAll(t, st)
			cc := st.Connects[0]
			crName := ConnectRouterName(cc.Name)
			var refRoutes []string
			for zone, ix := range zones {
				cr := ix.Router(crName)
				if cr == nil {
					t.Fatalf("zone %s has no %s", zone, crName)
				}
				if cr.Options["requested-tnl-key"] != "16715779" && cr.Options["requested-tnl-key"] != "16715781" {
					t.Errorf("zone %s: connect router options %v", zone, cr.Options)
				}
				keys := map[string]string{}
				for _, key := range cr.Ports {
					p := ix.RouterPorts[key]
					k := p.Options["requested-tnl-key"]
					if other, dup := keys[k]; dup || k == "" {
						t.Errorf("zone %s: ports %s and %s share key %q", zone, other, p.Name, k)
					}
					keys[k] = p.Name
				}
				routes := routesOf(ix, cr)
				if refRoutes == nil {
					refRoutes = routes
				} else if !slices.Equal(routes, refRoutes) {
					t.Errorf("zone %s routes %v, another zone %v", zone, routes, refRoutes)
				}
			}
			if len(refRoutes) == 0 {
				t.Fatal("no routes on the connect router")
			}
			for _, netName := range cc.Networks {
				n := networkNamed(st, netName)
				owners := st.Nodes
				if n.Topology == cluster.Layer2 {
					owners = []*cluster.Node{nil}
				}
				for _, owner := range owners {
					ownerName := ""
					if owner != nil {
						ownerName = owner.Name
					}
					port, peer := connectPortNames(cc.Name, n, ownerName)
					var want *nbdb.LogicalRouterPort
					for zone, ix := range zones {
						p := ix.RouterPorts["LRP:"+port]
						if p == nil {
							t.Fatalf("zone %s lacks %s", zone, port)
						}
						if want == nil {
							want = p
						}
						if p.MAC != want.MAC || strings.Join(p.Networks, ",") != strings.Join(want.Networks, ",") ||
							p.Options["requested-tnl-key"] != want.Options["requested-tnl-key"] {
							t.Errorf("zone %s: %s = %s %v %v; another zone %s %v %v", zone, port, p.MAC, p.Networks, p.Options, want.MAC, want.Networks, want.Options)
						}
						own := owner == nil || zone == owner.Name
						switch {
						case own && (p.Peer == nil || *p.Peer != peer || p.Options["requested-chassis"] != "" || ix.RouterPorts["LRP:"+peer] == nil):
							t.Errorf("zone %s: %s must be peered with %s and unbound: peer %v options %v", zone, port, peer, p.Peer, p.Options)
						case !own && (p.Peer != nil || p.Options["requested-chassis"] != owner.ChassisID || ix.RouterPorts["LRP:"+peer] != nil):
							t.Errorf("zone %s: %s must be bound to %s, unpeered, without %s: peer %v options %v", zone, port, owner.ChassisID, peer, p.Peer, p.Options)
						}
					}
				}
			}
		})
	}
}

func routesOf(ix *rows.Index, lr *nbdb.LogicalRouter) []string {
	var out []string
	for _, key := range lr.StaticRoutes {
		r := ix.Routes[key]
		out = append(out, r.IPPrefix+" via "+r.Nexthop)
	}
	slices.Sort(out)
	return out
}

func networkNamed(st *cluster.State, name string) *cluster.Network {
	for _, n := range st.Networks {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// connectRows returns the rows of the set that belong to connect cnc.
func connectRows(s *rows.Set, cnc string) []map[string]string {
	var out []map[string]string
	add := func(ids map[string]string) {
		if name, ok := ConnectOf(ids); ok && name == cnc {
			out = append(out, ids)
		}
	}
	for _, r := range s.Routers {
		add(r.ExternalIDs)
	}
	for _, r := range s.RouterPorts {
		add(r.ExternalIDs)
	}
	for _, r := range s.Routes {
		add(r.ExternalIDs)
	}
	for _, r := range s.Policies {
		add(r.ExternalIDs)
	}
	return out
}

// TestConnectRowsAreMarked checks what disconnect and the agent's keep rule rely on:
// every row a connect adds is ovnk's, names the connect, has its own identity, names
// the network it concerns (the connect router itself concerns none), and a policy
// names the network it leads to; every reference resolves.
func TestConnectRowsAreMarked(t *testing.T) {
	res, err := Compile(topologytest.MixedConnect(), "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	marked := connectRows(res.Rows, "mixed")
	// The router, 3 + 1 ports on it, 2 network-side ports, 3 + 1 routes per family,
	// 2 + 2 policies.
	if len(marked) != 1+4+2+8+4 {
		t.Errorf("%d rows marked with the connect, want 19", len(marked))
	}
	seen := map[string]bool{}
	for _, ids := range marked {
		id := ids[rows.IDKey]
		if seen[id] || !rows.Owned(ids) || ids[rows.OwnerTypeKey] != ConnectOwnerType {
			t.Errorf("row %s: external ids %v", id, ids)
		}
		seen[id] = true
		isRouter := strings.HasPrefix(id, "LR:")
		if isRouter != (ids[rows.NetworkKey] == "") {
			t.Errorf("row %s: network %q", id, ids[rows.NetworkKey])
		}
		if strings.HasPrefix(id, "policy:") && ids[DestinationNetworkKey] == "" {
			t.Errorf("policy %s does not name its destination network", id)
		}
	}
	ix := rows.NewIndex(res.Rows)
	for _, lr := range res.Rows.Routers {
		for _, key := range slices.Concat(lr.Ports, lr.StaticRoutes, lr.Policies) {
			if ix.RouterPorts[key] == nil && ix.Routes[key] == nil && ix.Policies[key] == nil {
				t.Errorf("router %s refers to missing row %s", lr.Name, key)
			}
		}
	}
}

// TestConnectLeavesOutWhatItCannotCompile covers each reason a connect, a network of
// it or a node's link is left out: the rest still compiles, and Result.Connects says
// why.
func TestConnectLeavesOutWhatItCannotCompile(t *testing.T) {
	const blue, green = "blue_blue-network", "green_green-network"
	for _, tc := range []struct {
		name   string
		node   string
		change func(st *cluster.State)
		// wantErr are parts of Result.Connects' error; present and absent are router
		// ports that must and must not be compiled.
		wantErr         []string
		present, absent []string
	}{{
		name:    "no tunnel key yet",
		node:    "ovn-worker",
		change:  func(st *cluster.State) { st.Connects[0].TunnelKey = 0 },
		wantErr: []string{"waiting for the leader to allocate the connect router's tunnel key (k8s.ovn.org/connect-router-tunnel-key)"},
		absent:  []string{"crtor-colored-enterprise_green_green.network_ovn-worker", "rtocr-green_green.network_ovn-worker_colored-enterprise"},
	}, {
		name:    "pod connectivity not requested",
		node:    "ovn-worker",
		change:  func(st *cluster.State) { st.Connects[0].PodNetwork, st.Connects[0].ServiceNetwork = false, true },
		wantErr: []string{"does not list PodNetwork", "ClusterIPServiceNetwork"},
		absent:  []string{"crtor-colored-enterprise_green_green.network_ovn-worker"},
	}, {
		name:    "a network without its block yet",
		node:    "ovn-worker",
		change:  func(st *cluster.State) { delete(st.Connects[0].Blocks, blue) },
		wantErr: []string{"network blue_blue-network: no block of the connect subnets yet (k8s.ovn.org/network-connect-subnet)"},
		present: []string{"crtor-colored-enterprise_green_green.network_ovn-worker", "crtor-colored-enterprise_green_green.network_ovn-worker2"},
		absent:  []string{"crtor-colored-enterprise_blue_blue.network_ovn-worker", "rtocr-blue_blue.network_ovn-worker_colored-enterprise"},
	}, {
		name: "a refused network",
		node: "ovn-worker",
		change: func(st *cluster.State) {
			st.Connects[0].Networks = []string{green}
			st.Connects[0].Refused[blue] = "a secondary network cannot be connected"
		},
		present: []string{"crtor-colored-enterprise_green_green.network_ovn-worker"},
		absent:  []string{"crtor-colored-enterprise_blue_blue.network_ovn-worker", "crtor-colored-enterprise_blue_blue.network_ovn-worker2"},
	}, {
		name: "a remote node whose id does not fit the blocks",
		node: "ovn-worker",
		change: func(st *cluster.State) {
			st.Connects[0].Subnets[0].NetworkPrefix = 29 // 4 links: node ids 0–3
			st.Connects[0].Blocks = map[string][]netip.Prefix{green: {netip.MustParsePrefix("192.168.0.0/29")}, blue: {netip.MustParsePrefix("192.168.0.8/29")}}
		},
		wantErr: []string{"network blue_blue-network: node ovn-control-plane (id 4) has no link: connect link 4 does not fit block 192.168.0.8/29",
			"network green_green-network: node ovn-control-plane (id 4) has no link"},
		present: []string{"crtor-colored-enterprise_green_green.network_ovn-worker", "crtor-colored-enterprise_blue_blue.network_ovn-worker2"},
		absent:  []string{"crtor-colored-enterprise_green_green.network_ovn-control-plane", "crtor-colored-enterprise_blue_blue.network_ovn-control-plane"},
	}, {
		name: "the local node's id does not fit the blocks",
		node: "ovn-control-plane",
		change: func(st *cluster.State) {
			st.Connects[0].Subnets[0].NetworkPrefix = 29
			st.Connects[0].Blocks = map[string][]netip.Prefix{green: {netip.MustParsePrefix("192.168.0.0/29")}, blue: {netip.MustParsePrefix("192.168.0.8/29")}}
		},
		wantErr: []string{"node ovn-control-plane (id 4) has no link"},
		present: []string{"crtor-colored-enterprise_green_green.network_ovn-worker"},
		absent:  []string{"crtor-colored-enterprise_green_green.network_ovn-control-plane", "rtocr-green_green.network_ovn-control-plane_colored-enterprise"},
	}, {
		name: "a block past OVN's port key limit",
		node: "ovn-worker",
		change: func(st *cluster.State) {
			st.Connects[0].Blocks[blue] = []netip.Prefix{netip.MustParsePrefix("192.168.255.0/24")}
			st.Nodes[0].ID = 127 // ovn-control-plane: key 255·128 + 127 + 1 = 32768
		},
		wantErr: []string{"network blue_blue-network: node ovn-control-plane (id 127) has no link: connect link 192.168.255.254/31 needs a port tunnel key above 32767"},
		present: []string{"crtor-colored-enterprise_blue_blue.network_ovn-worker"},
		absent:  []string{"crtor-colored-enterprise_blue_blue.network_ovn-control-plane"},
	}, {
		name:    "two networks given the same block",
		node:    "ovn-worker",
		change:  func(st *cluster.State) { st.Connects[0].Blocks[green] = st.Connects[0].Blocks[blue] },
		wantErr: []string{"network green_green-network: its link 192.168.1.8/31 would take port tunnel key 133, which network blue_blue-network's link has"},
		present: []string{"crtor-colored-enterprise_blue_blue.network_ovn-worker"},
		absent:  []string{"crtor-colored-enterprise_green_green.network_ovn-worker", "crtor-colored-enterprise_green_green.network_ovn-worker2"},
	}, {
		name: "a block of a family the connect has no subnet of",
		node: "ovn-worker",
		change: func(st *cluster.State) {
			st.Connects[0].Blocks[blue] = []netip.Prefix{netip.MustParsePrefix("fd00::/120")}
		},
		wantErr: []string{"block fd00::/120 is of an IP family the connect has no connect subnet of"},
		absent:  []string{"crtor-colored-enterprise_blue_blue.network_ovn-worker"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			st := topologytest.OKEP5224()
			tc.change(st)
			res, err := Compile(st, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.NotCompiled) != 0 {
				t.Errorf("networks not compiled: %v", res.NotCompiled)
			}
			got := res.Connects["colored-enterprise"]
			if len(tc.wantErr) == 0 && got != nil {
				t.Errorf("connect error %v, want none", got)
			}
			for _, want := range tc.wantErr {
				if got == nil || !strings.Contains(got.Error(), want) {
					t.Errorf("connect error %v lacks %q", got, want)
				}
			}
			ix := rows.NewIndex(res.Rows)
			for _, p := range tc.present {
				if ix.RouterPorts["LRP:"+p] == nil {
					t.Errorf("port %s is missing", p)
				}
			}
			for _, p := range tc.absent {
				if ix.RouterPorts["LRP:"+p] != nil {
					t.Errorf("port %s was compiled", p)
				}
			}
		})
	}
}

// TestConnectOfANetworkThatDidNotCompile: a network the zone cannot compile keeps its
// link here untouched (the agent keeps its rows), while its links on other nodes and
// the other networks' policies toward it are compiled as usual.
func TestConnectOfANetworkThatDidNotCompile(t *testing.T) {
	st := topologytest.OKEP5224()
	delete(st.Nodes[1].Subnets, "blue_blue-network") // ovn-worker
	res, err := Compile(st, "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	if res.NotCompiled["blue_blue-network"] == nil || res.Connects["colored-enterprise"] != nil {
		t.Fatalf("not compiled %v, connect %v", res.NotCompiled, res.Connects)
	}
	ix := rows.NewIndex(res.Rows)
	if ix.RouterPorts["LRP:crtor-colored-enterprise_blue_blue.network_ovn-worker"] != nil {
		t.Error("the local link of a network that did not compile was compiled")
	}
	if ix.RouterPorts["LRP:crtor-colored-enterprise_blue_blue.network_ovn-worker2"] == nil {
		t.Error("the remote link of a network that did not compile is missing")
	}
	found := false
	for _, p := range res.Rows.Policies {
		found = found || p.ExternalIDs[DestinationNetworkKey] == "blue_blue-network"
	}
	if !found {
		t.Error("green's policy toward blue is missing")
	}
}
