package topology

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// TestGoldenLayer2Upgrade pins the zones of OKEP-5094's rolling upgrade: node1 upgraded
// while node2 and node3 are not, from both sides.
func TestGoldenLayer2Upgrade(t *testing.T) {
	st := topologytest.Layer2Upgrade("node1")
	for _, node := range []string{"node1", "node2"} {
		t.Run(node, func(t *testing.T) {
			dump, res := compileDump(t, st, node)
			goldenZone(t, "upgrade-"+node, dump, res)
		})
	}
}

// TestLegacyLayer2Zone checks the legacy topology against OKEP-5094's description of it:
// the gateway router on the switch with its join IPs and the pods' gateway, every other
// node's gateway router a remote port with its tunnel key, and no transit router.
func TestLegacyLayer2Zone(t *testing.T) {
	dump, _ := compileDump(t, topologytest.Layer2Upgrade(), "node2")
	requireLines(t, dump,
		"router (GR_cluster_udn_green_node2)",
		"port rtos-cluster_udn_green_ovn_layer2_switch",
		`mac: "0a:58:64:41:00:03"`,
		`networks: ["100.65.0.3/16", "2010:100:200::1/60", "203.203.0.1/24", "fd99::3/64"]`,
		"switch (cluster_udn_green_ovn_layer2_switch)",
		"port stor-GR_cluster_udn_green_node2",
		"type: router",
		"router-port: rtos-cluster_udn_green_ovn_layer2_switch",
		"requested-tnl-key: 5",
		"port stor-GR_cluster_udn_green_node1",
		"type: remote",
		`addresses: ["0a:58:64:41:00:02 100.65.0.2 fd99::2"]`,
		"requested-tnl-key: 4",
		"port stor-GR_cluster_udn_green_node3",
		"requested-tnl-key: 6",
		// Policies, host service routes and the management SNAT are the gateway router's.
		`1004 inport == "rtos-cluster_udn_green_ovn_layer2_switch" && ip4.dst == 172.18.0.3 /* cluster_udn_green_ovn_layer2_switch */ reroute 203.203.0.2`,
		"10.96.0.1 203.203.0.2 dst-ip",
		"snat eth.dst == 0a:58:c 169.254.0.14 32768-60999 203.203.0.0/24",
	)
	if strings.Contains(dump, "transit_router") || strings.Contains(dump, "-upgrade") {
		t.Errorf("a legacy zone holds transit-router rows:\n%s", dump)
	}
}

// TestUpgradeTopologyListings checks the upgraded node's zone against OKEP-5094's upgrade
// topology while other nodes are legacy: the switch keeps their gateway routers as
// remote ports, a router port with this node's old tunnel key leads to the transit
// router's upgrade port (the gateway router's MAC and the dummy join IP), and each
// legacy join IP has a host route via itself.
func TestUpgradeTopologyListings(t *testing.T) {
	dump, res := compileDump(t, topologytest.Layer2Upgrade("node1"), "node1")
	const tr = "cluster_udn_green_transit_router"
	requireLines(t, dump,
		"port trtos-cluster_udn_green_ovn_layer2_switch-upgrade",
		`mac: "0a:58:64:41:00:02"`,
		`networks: ["100.65.255.254/16", "fd99::ffff:ffff:ffff:fffe/64"]`,
		"port stotr-cluster_udn_green_ovn_layer2_switch-upgrade",
		"router-port: trtos-cluster_udn_green_ovn_layer2_switch-upgrade",
		"requested-tnl-key: 4",
		"port stor-GR_cluster_udn_green_node2",
		`addresses: ["0a:58:64:41:00:03 100.65.0.3 fd99::3"]`,
		"requested-tnl-key: 5",
		"# ovn-nbctl lr-route-list "+tr,
		"100.65.0.2 100.88.0.5 dst-ip",
		"100.65.0.3 100.65.0.3 dst-ip",
		"100.65.0.4 100.65.0.4 dst-ip",
		"fd99::3 fd99::3 dst-ip",
		"203.203.0.0/24 100.88.0.5 src-ip",
	)
	// Legacy nodes have no transit router: no port of it may stand for them.
	for _, p := range res.Rows.RouterPorts {
		if strings.HasSuffix(p.Name, "_node2") || strings.HasSuffix(p.Name, "_node3") {
			t.Errorf("the transit router has port %s for a legacy node", p.Name)
		}
	}
}

// TestUpgradePiecesFollowTheOtherNodes walks the rolling upgrade from node1's zone: the
// upgrade pieces stay while any node is legacy, a node's remote switch port turns into a
// transit router port when it upgrades, and nothing of the upgrade remains at the end.
func TestUpgradePiecesFollowTheOtherNodes(t *testing.T) {
	for _, tc := range []struct {
		upgraded       []string
		legacyGWPorts  []string // remote gateway router ports on the switch
		transitRemotes []string // remote transit router ports
		pieces         bool
	}{
		{[]string{"node1"}, []string{"node2", "node3"}, nil, true},
		{[]string{"node1", "node3"}, []string{"node2"}, []string{"node3"}, true},
		{[]string{"node1", "node2", "node3"}, nil, []string{"node2", "node3"}, false},
	} {
		t.Run(strings.Join(tc.upgraded, "+"), func(t *testing.T) {
			res, err := Compile(topologytest.Layer2Upgrade(tc.upgraded...), "node1")
			if err != nil {
				t.Fatal(err)
			}
			var gwPorts, trRemotes []string
			pieces := 0
			for _, p := range res.Rows.SwitchPorts {
				if p.Type == "remote" && strings.HasPrefix(p.Name, "stor-GR_") {
					gwPorts = append(gwPorts, p.ExternalIDs["k8s.ovn.org/node"])
				}
				if strings.HasSuffix(p.Name, "-upgrade") {
					pieces++
				}
			}
			for _, p := range res.Rows.RouterPorts {
				if p.Options["requested-chassis"] != "" {
					trRemotes = append(trRemotes, p.ExternalIDs["k8s.ovn.org/node"])
				}
				if strings.HasSuffix(p.Name, "-upgrade") {
					pieces++
				}
			}
			if strings.Join(gwPorts, ",") != strings.Join(tc.legacyGWPorts, ",") {
				t.Errorf("remote gateway ports for %v, want %v", gwPorts, tc.legacyGWPorts)
			}
			if strings.Join(trRemotes, ",") != strings.Join(tc.transitRemotes, ",") {
				t.Errorf("remote transit router ports for %v, want %v", trRemotes, tc.transitRemotes)
			}
			if want := map[bool]int{true: 2, false: 0}[tc.pieces]; pieces != want {
				t.Errorf("%d upgrade ports, want %d", pieces, want)
			}
			hostRoutes := 0
			for _, r := range res.Rows.Routes {
				if p, err := netip.ParsePrefix(r.IPPrefix); err == nil && p.IsSingleIP() && p.Addr().String() == r.Nexthop {
					hostRoutes++
				}
			}
			if want := 2 * len(tc.legacyGWPorts); hostRoutes != want {
				t.Errorf("%d join IP routes via themselves, want %d (one per legacy node and family)", hostRoutes, want)
			}
		})
	}
}

// TestConvertingZoneHoldsLocalPods: while the node converts, its own Layer2 pods wait;
// every other node's pods stay remote ports.
func TestConvertingZoneHoldsLocalPods(t *testing.T) {
	st := topologytest.Layer2Upgrade()
	res, err := CompileWith(st, "node2", Options{Layer2: Layer2TransitRouter, HoldLocalLayer2Pods: true})
	if err != nil {
		t.Fatal(err)
	}
	var pods []string
	for _, p := range res.Rows.SwitchPorts {
		if p.ExternalIDs["pod"] == "true" {
			pods = append(pods, p.Name+"/"+p.Type)
		}
	}
	want := "green.green_green_pod-node1/remote,green.green_green_pod-node3/remote"
	if strings.Join(pods, ",") != want {
		t.Errorf("pod ports %v, want %s", pods, want)
	}
}

// TestLegacyZoneNeedsItsGatewayTunnelKey: without the leader's key for its own gateway
// port, a legacy zone leaves the network uncompiled (its rows stay as they are), and a
// transit-router zone with legacy peers does too; a legacy peer without one is a
// warning.
func TestLegacyZoneNeedsItsGatewayTunnelKey(t *testing.T) {
	for _, tc := range []struct{ name, node, upgraded string }{
		{"legacy zone", "node2", ""},
		{"upgraded zone with legacy peers", "node1", "node1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := topologytest.Layer2Upgrade(tc.upgraded)
			st.Node(tc.node).Layer2GatewayTunnelIDs = nil
			res, err := Compile(st, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			err = res.NotCompiled["cluster_udn_green"]
			if err == nil || !strings.Contains(err.Error(), cluster.AnnotationLayer2GatewayTunnelIDs) || !strings.Contains(err.Error(), tc.node) {
				t.Errorf("error %v, want one naming %s and the annotation", err, tc.node)
			}
		})
	}
	st := topologytest.Layer2Upgrade("node1")
	st.Node("node3").Layer2GatewayTunnelIDs = nil
	res, err := Compile(st, "node1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCompiled) > 0 || !containsText(res.Warnings, "node node3 has no gateway port tunnel key") {
		t.Errorf("not compiled %v, warnings %v; want a warning about node3 only", res.NotCompiled, res.Warnings)
	}
}

func TestClassifyLayer2Port(t *testing.T) {
	for name, want := range map[string]Layer2PortKind{
		"rtos-cluster_udn_green_ovn_layer2_switch":          Layer2LegacyGatewayPort,
		"trtos-cluster_udn_green_ovn_layer2_switch":         Layer2TransitRouterPort,
		"trtos-cluster_udn_green_ovn_layer2_switch-upgrade": Layer2UpgradePort,
		"rtos-cluster_udn_blue_node1":                       NotLayer2Port,
		"rtotr-GR_cluster_udn_green_node1":                  NotLayer2Port,
		"stotr-cluster_udn_green_ovn_layer2_switch-upgrade": NotLayer2Port,
	} {
		if got := ClassifyLayer2Port(name); got != want {
			t.Errorf("ClassifyLayer2Port(%s) = %d, want %d", name, got, want)
		}
	}
}

// TestLegacyZoneLeavesLayer2NetworksOutOfConnects: a legacy zone has no transit router
// to link to a connect router; the connect says why the network is left out, and the
// Layer3 networks of the connect are still linked.
func TestLegacyZoneLeavesLayer2NetworksOutOfConnects(t *testing.T) {
	st := topologytest.MixedConnect()
	var layer2 string
	for _, n := range st.Networks {
		if n.Topology == cluster.Layer2 {
			layer2 = n.Name
		}
	}
	for _, n := range st.Nodes {
		n.Layer2TopologyVersion = ""
		n.Layer2GatewayTunnelIDs = map[string]int{layer2: 4 + n.ID}
	}
	node := st.Nodes[0].Name
	res, err := Compile(st, node)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCompiled) > 0 {
		t.Fatalf("not compiled: %v", res.NotCompiled)
	}
	var reason error
	for _, err := range res.Connects {
		reason = err
	}
	if reason == nil || !strings.Contains(reason.Error(), layer2) || !strings.Contains(reason.Error(), "legacy Layer2 topology") || !strings.Contains(reason.Error(), node) {
		t.Errorf("connect status %v, want the Layer2 network %s named as left out on legacy node %s", reason, layer2, node)
	}
	linked := 0
	for _, p := range res.Rows.RouterPorts {
		if strings.HasPrefix(p.Name, "crtor-") {
			linked++
		}
	}
	if linked == 0 {
		t.Errorf("no network linked to the connect router: the Layer3 networks should be")
	}
	// What the Layer2 pods here send to the other networks is dropped on the gateway
	// router, one policy per subnet of each other network, and what the other networks'
	// pods here send to the Layer2 network on their router: nothing leaves the cluster.
	fromLayer2, toLayer2 := 0, 0
	for _, p := range res.Rows.Policies {
		if p.Action != nbdb.LogicalRouterPolicyActionDrop {
			continue
		}
		if strings.Contains(p.Match, "ovn_layer2_switch") {
			fromLayer2++
		} else if strings.Contains(p.Match, ".dst == 105.105.0.0/16") || strings.Contains(p.Match, ".dst == 2010:105::/60") {
			toLayer2++
		}
	}
	if fromLayer2 != 2 || toLayer2 != 2 {
		t.Errorf("drop policies: %d from the Layer2 network, %d to it; want 2 and 2 (one per subnet)", fromLayer2, toLayer2)
	}
}

// TestHeldPodsKeepTheirPorts: while converting, a local pod whose port the zone
// already has keeps it; only pods not wired yet wait.
func TestHeldPodsKeepTheirPorts(t *testing.T) {
	st := topologytest.Layer2Upgrade()
	wired := "green.green_green_pod-node2"
	all, err := CompileWith(st, "node2", Options{Layer2: Layer2TransitRouter})
	if err != nil {
		t.Fatal(err)
	}
	var addresses []string
	for _, p := range all.Rows.SwitchPorts {
		if p.Name == wired {
			addresses = p.Addresses
		}
	}
	// The same name with other addresses is another pod: it waits.
	recreated, err := CompileWith(st, "node2", Options{Layer2: Layer2TransitRouter, HoldLocalLayer2Pods: true,
		Wired: map[string][]string{wired: {"0a:58:00:00:00:99 192.0.2.99"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range recreated.Rows.SwitchPorts {
		if p.Name == wired && p.Type == "" {
			t.Errorf("a pod recreated under the name of a wired port kept its port %v", p.Addresses)
		}
	}
	res, err := CompileWith(st, "node2", Options{Layer2: Layer2TransitRouter, HoldLocalLayer2Pods: true,
		Wired: map[string][]string{wired: addresses}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range res.Rows.SwitchPorts {
		found = found || (p.Name == wired && p.Type == "")
	}
	if !found {
		t.Errorf("the wired pod's port %s was dropped while converting", wired)
	}
}

// TestUpgradeAddressSkipsNodes: with a join subnet so small that a node's join IP is its
// last address but one, the upgrade port takes the next one down, the same in every
// zone, and the network compiles.
func TestUpgradeAddressSkipsNodes(t *testing.T) {
	st := topologytest.Layer2Upgrade("node1")
	st.Networks[0].JoinSubnets = prefixesOf("100.65.0.0/29", "fd99::/64") // last but one: .6
	st.Nodes[2].ID = 6                                                    // node3's join IP: 100.65.0.6
	dump, res := compileDump(t, st, "node1")
	if len(res.NotCompiled) > 0 {
		t.Fatalf("not compiled: %v", res.NotCompiled)
	}
	requireLines(t, dump, "port trtos-cluster_udn_green_ovn_layer2_switch-upgrade", `networks: ["100.65.0.5/29", "fd99::ffff:ffff:ffff:fffe/64"]`)
}

func prefixesOf(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
