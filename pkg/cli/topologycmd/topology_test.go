package topologycmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/topologycmd"
	"github.com/ovnk/ovnk/pkg/cli/zoneview"
	"github.com/ovnk/ovnk/pkg/cli/zoneview/zoneviewtest"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// topologyJSON runs `topology args… -o json` and decodes the view.
func topologyJSON(t *testing.T, k *testenv.Kube, args ...string) topologycmd.View {
	t.Helper()
	return zoneviewtest.JSON[topologycmd.View](t, k, append([]string{"topology"}, args...)...)
}

// treeLines strips the tree's branches, so items compare as the text they hold.
func treeLines(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "│├└─  ")
	}
	return strings.Join(lines, "\n")
}

// TestTopologyShowsWhatTheNBHolds compares every router, switch and port of each
// network of a Layer3 zone, as -o json shows them, with the NB's rows read directly.
func TestTopologyShowsWhatTheNBHolds(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	nb := zoneviewtest.ZoneNB(t, topologytest.Layer3(), "node1")
	set := nbtest.Snapshot(t, nb)
	ix := rows.NewIndex(set)
	for _, network := range []string{"default", "cluster_udn_blue"} {
		t.Run(network, func(t *testing.T) {
			v := topologyJSON(t, k, zoneview.UserName(network), "--node", "node1", "--nb", nb.Endpoint)
			if v.Node != "node1" || v.Network.OVNName != network || v.Network.Topology != "layer3" {
				t.Errorf("view of %s: node %q, network %+v", network, v.Node, v.Network)
			}
			routers := map[string]topologycmd.Router{}
			for _, r := range v.Routers {
				routers[r.UUID] = r
			}
			var want int
			for _, lr := range set.Routers {
				if lr.ExternalIDs[rows.NetworkKey] != network {
					continue
				}
				want++
				r, ok := routers[lr.UUID]
				if !ok {
					t.Errorf("router %s is missing", lr.Name)
					continue
				}
				if r.Name != lr.Name || r.StaticRoutes != len(lr.StaticRoutes) || r.Policies != len(lr.Policies) || len(r.NAT) != len(lr.Nat) || len(r.Ports) != len(lr.Ports) {
					t.Errorf("router %s: %+v, NB has %d routes, %d policies, %d NAT, %d ports", lr.Name, r, len(lr.StaticRoutes), len(lr.Policies), len(lr.Nat), len(lr.Ports))
				}
				for _, p := range r.Ports {
					lrp := ix.RouterPorts[p.UUID]
					if lrp == nil || !slices.Contains(lr.Ports, p.UUID) {
						t.Errorf("router %s: port %s is not one of its ports in the NB", lr.Name, p.Name)
						continue
					}
					networks := slices.Sorted(slices.Values(lrp.Networks))
					if p.Name != lrp.Name || p.MAC != lrp.MAC || !slices.Equal(p.Networks, networks) {
						t.Errorf("router port %s: %+v, NB has %s %v", lrp.Name, p, lrp.MAC, networks)
					}
					if lrp.Peer != nil && (p.Peer == nil || p.Peer.Port != *lrp.Peer || p.Peer.Kind != "router") {
						t.Errorf("router port %s: peer %+v, NB says %s", lrp.Name, p.Peer, *lrp.Peer)
					}
				}
			}
			if len(v.Routers) != want {
				t.Errorf("%d routers shown, the NB has %d of the network", len(v.Routers), want)
			}
			shown := map[string]topologycmd.SwitchPort{}
			for _, s := range v.Switches {
				if ls := ix.Switch(s.Name); ls == nil || ls.UUID != s.UUID || ls.ExternalIDs[rows.NetworkKey] != network || len(ls.Ports) != len(s.Ports) {
					t.Errorf("switch %s (%d ports) does not match the NB", s.Name, len(s.Ports))
				}
				for _, p := range s.Ports {
					shown[p.UUID] = p
				}
			}
			for _, ls := range set.Switches {
				if ls.ExternalIDs[rows.NetworkKey] != network {
					continue
				}
				for _, key := range ls.Ports {
					lsp := ix.SwitchPorts[key]
					p, ok := shown[key]
					switch {
					case !ok:
						t.Errorf("switch %s: port %s is missing", ls.Name, lsp.Name)
					case p.Name != lsp.Name || p.Type != lsp.Type || p.Remote != (lsp.Type == "remote") ||
						p.Chassis != lsp.Options["requested-chassis"] || p.TunnelKey != lsp.Options["requested-tnl-key"]:
						t.Errorf("switch port %s: %+v, NB has type %q options %v", lsp.Name, p, lsp.Type, lsp.Options)
					case lsp.Type == "router" && (p.Peer == nil || p.Peer.Port != lsp.Options["router-port"]):
						t.Errorf("switch port %s: peer %+v, NB's router-port is %s", lsp.Name, p.Peer, lsp.Options["router-port"])
					case lsp.Type != "router" && !slices.Equal(p.Addresses, lsp.Addresses):
						t.Errorf("switch port %s: addresses %v, NB has %v", lsp.Name, p.Addresses, lsp.Addresses)
					}
				}
			}
		})
	}
}

// TestTopologyOKEP5094Listings requires the port listings of OKEP-5094 (as the
// topology golden test pins them) in the tree of ovn-control-plane's zone.
func TestTopologyOKEP5094Listings(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	nb := zoneviewtest.ZoneNB(t, topologytest.OKEP5094(), "ovn-control-plane")
	out, err := zoneviewtest.Run(t, k, zoneviewtest.Wide, nil, "topology", "test12/namespace-scoped", "--node", "ovn-control-plane", "--nb", nb.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	zoneviewtest.RequireLines(t, treeLines(out),
		"Network test12/namespace-scoped (test12_namespace-scoped, layer2) in node ovn-control-plane's zone",
		"router test12_namespace.scoped_transit_router (transit router)",
		"tunnel key: 16715779",
		// The pods' gateway: .1 of each subnet, MAC from 203.203.0.1, LLA from the MAC.
		"port trtos-test12_namespace.scoped_ovn_layer2_switch",
		"networks: 2010:100:200::1/60, 203.203.0.1/16",
		"mac: 0a:58:cb:cb:00:01, ipv6-lla: fe80::858:cbff:fecb:1",
		"peer: stotr-test12_namespace.scoped_ovn_layer2_switch on switch test12_namespace.scoped_ovn_layer2_switch",
		"gateway chassis: chassis-ovn-control-plane",
		// The local peer pair (node id 4).
		"port trtor-GR_test12_namespace.scoped_ovn-control-plane",
		"networks: 100.88.0.8/31, fd97::8/127",
		"peer: rtotr-GR_test12_namespace.scoped_ovn-control-plane on router GR_test12_namespace.scoped_ovn-control-plane",
		"tunnel key: 4",
		"port rtotr-GR_test12_namespace.scoped_ovn-control-plane",
		"mac: 0a:58:64:41:00:04, ipv6-lla: fe80::858:64ff:fe41:4",
		"networks: 100.65.0.4/16, 100.88.0.9/31, fd97::9/127, fd99::4/64",
		"peer: trtor-GR_test12_namespace.scoped_ovn-control-plane on router test12_namespace.scoped_transit_router",
		// The other nodes' sides of the transit router are remote.
		"port trtor-GR_test12_namespace.scoped_ovn-worker (remote)",
		"networks: 100.88.0.6/31, fd97::6/127",
		"node: ovn-worker, chassis: chassis-ovn-worker, tunnel key: 3",
		"port trtor-GR_test12_namespace.scoped_ovn-worker2 (remote)",
		"node: ovn-worker2, chassis: chassis-ovn-worker2, tunnel key: 2",
		// The management-port SNAT on the transit router.
		"snat 203.203.0.0/16 → 169.254.0.12, logical port: trtos-test12_namespace.scoped_ovn_layer2_switch, match: eth.dst == 0a:58:cb:cb:00:02",
		"10 static routes, 7 policies",
		// The switch: the remote VM of ovn-worker with its tunnel id.
		"switch test12_namespace.scoped_ovn_layer2_switch (layer2 switch)",
		"subnet: 203.203.0.0/16, ipv6 prefix: 2010:100:200::, tunnel key: 16711684",
		"port test12.namespace.scoped_test12_vm-b (remote)",
		"addresses: 0a:58:cb:cb:00:04 203.203.0.4 2010:100:200::4",
		"node: ovn-worker, chassis: chassis-ovn-worker, tunnel key: 4",
	)
}

// TestTopologyGolden pins the tree with and without colour, at 80 and 200 columns.
func TestTopologyGolden(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	okep := zoneviewtest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	layer3 := zoneviewtest.ZoneNB(t, topologytest.Layer3(), "node1")
	zoneviewtest.Goldens(t, k, "topology", []zoneviewtest.Golden{
		{Name: "okep5094-ovn-worker", Args: []string{"topology", "test12/namespace-scoped", "--node", "ovn-worker", "--nb", okep.Endpoint}},
		{Name: "layer3-node1-blue", Args: []string{"topology", "blue", "--node", "node1", "--nb", layer3.Endpoint}},
		{Name: "layer3-node1-default", Args: []string{"topology", "--nb", layer3.Endpoint}},
	})
}

// TestTopologyNoColour: NO_COLOR and --no-color keep a terminal's output plain.
func TestTopologyNoColour(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	nb := zoneviewtest.ZoneNB(t, topologytest.Layer3(), "node1")
	tty := clitest.Terminal{TTY: true, Width: 80}
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"NO_COLOR": "1"}, nil},
		{nil, []string{"--no-color"}},
	} {
		out, err := zoneviewtest.Run(t, k, tty, c.env, append([]string{"topology", "--nb", nb.Endpoint}, c.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "\x1b[") {
			t.Errorf("env %v args %v: colour on:\n%q", c.env, c.args, out)
		}
	}
}

// TestTopologyDefaults: no NETWORK shows the default network; no --node the first
// node by name, with a line saying how to pick another, which --node drops.
func TestTopologyDefaults(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	nb := zoneviewtest.ZoneNB(t, topologytest.Layer3(), "node1")
	out, err := zoneviewtest.Run(t, k, zoneviewtest.Wide, nil, "topology", "--nb", nb.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	zoneviewtest.RequireLines(t, treeLines(out),
		"Network default (layer3) in node node1's zone",
		"Showing node1, the first of 6 nodes by name; pick another with --node: node2, node3, ovn-control-plane, ovn-worker, ovn-worker2.",
		"router ovn_cluster_router (cluster router)",
	)
	out, err = zoneviewtest.Run(t, k, zoneviewtest.Wide, nil, "topology", "--nb", nb.Endpoint, "--node", "node1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Showing") {
		t.Errorf("the hint about --node stays when --node is given:\n%s", out)
	}
	v := topologyJSON(t, k, "--nb", nb.Endpoint)
	if v.Node != "node1" || v.Network != (zoneview.Network{Name: "default", OVNName: "default", Topology: "layer3"}) {
		t.Errorf("default view: node %s, network %+v", v.Node, v.Network)
	}
}

// TestTopologyNetworkNames: a UDN by namespace/name, by name with -n, and by OVN name;
// a CUDN by name and by OVN name.
func TestTopologyNetworkNames(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	okep := zoneviewtest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	layer3 := zoneviewtest.ZoneNB(t, topologytest.Layer3(), "node1")
	for _, c := range []struct {
		nb   *testenv.NB
		args []string
		want zoneview.Network
	}{
		{okep, []string{"test12/namespace-scoped"}, zoneview.Network{Name: "test12/namespace-scoped", OVNName: "test12_namespace-scoped", Topology: "layer2"}},
		{okep, []string{"namespace-scoped", "-n", "test12"}, zoneview.Network{Name: "test12/namespace-scoped", OVNName: "test12_namespace-scoped", Topology: "layer2"}},
		{okep, []string{"test12_namespace-scoped"}, zoneview.Network{Name: "test12/namespace-scoped", OVNName: "test12_namespace-scoped", Topology: "layer2"}},
		{layer3, []string{"blue"}, zoneview.Network{Name: "blue", OVNName: "cluster_udn_blue", Topology: "layer3"}},
		{layer3, []string{"cluster_udn_blue"}, zoneview.Network{Name: "blue", OVNName: "cluster_udn_blue", Topology: "layer3"}},
	} {
		v := topologyJSON(t, k, append(c.args, "--nb", c.nb.Endpoint, "--node", "ovn-worker")...)
		if v.Network != c.want {
			t.Errorf("%v: network %+v, want %+v", c.args, v.Network, c.want)
		}
	}
}

// TestTopologyYAML: -o yaml is the same view.
func TestTopologyYAML(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	nb := zoneviewtest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	out, err := zoneviewtest.Run(t, k, zoneviewtest.Plain, nil, "topology", "test12/namespace-scoped", "--nb", nb.Endpoint, "--node", "ovn-worker", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v topologycmd.View
	if err := yaml.UnmarshalStrict([]byte(out), &v); err != nil {
		t.Fatalf("-o yaml is not a View: %v\n%s", err, out)
	}
	if len(v.Routers) != 2 || len(v.Switches) != 2 || v.Routers[1].Name != "test12_namespace.scoped_transit_router" || len(v.Routers[1].Ports) != 4 {
		t.Errorf("yaml view: %+v", v)
	}
	out, err = zoneviewtest.Run(t, k, zoneviewtest.Plain, nil, "topology", "test12/namespace-scoped", "--nb", nb.Endpoint, "--node", "ovn-worker",
		"-o", "jsonpath={.routers[*].ports[?(@.remote)].name}")
	if err != nil {
		t.Fatal(err)
	}
	if want := "trtor-GR_test12_namespace.scoped_ovn-control-plane trtor-GR_test12_namespace.scoped_ovn-worker2"; out != want {
		t.Errorf("jsonpath of the remote router ports: %q, want %q", out, want)
	}
}

// TestTopologyNodeFromSettings reads each node's zone from the NB the settings file
// names for it, with no --nb: --node picks the zone.
func TestTopologyNodeFromSettings(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	okep := zoneviewtest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	layer3 := zoneviewtest.ZoneNB(t, topologytest.Layer3(), "node1")
	config := filepath.Join(t.TempDir(), "config.yaml")
	settings := fmt.Sprintf("nb-endpoints:\n  ovn-worker: %s\n  node1: %s\n", okep.Endpoint, layer3.Endpoint)
	if err := os.WriteFile(config, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OVNK_PLUGIN_CONFIG": config}
	for _, c := range []struct{ node, network, router string }{
		{"ovn-worker", "test12/namespace-scoped", "GR_test12_namespace.scoped_ovn-worker"},
		{"node1", "blue", "GR_cluster_udn_blue_node1"},
	} {
		out, err := zoneviewtest.Run(t, k, zoneviewtest.Wide, env, "topology", c.network, "--node", c.node)
		if err != nil {
			t.Fatalf("--node %s: %v", c.node, err)
		}
		zoneviewtest.RequireLines(t, treeLines(out), "router "+c.router+" (gateway router)")
	}
}

// TestTopologyBadInput: each mistake is one line naming the value and what exists.
func TestTopologyBadInput(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	nb := zoneviewtest.ZoneNB(t, topologytest.Layer3(), "node1")
	zoneviewtest.Annotate(t, k, "node3", cluster.AnnotationZoneStatus, `{"cluster_udn_red":"no k8s.ovn.org/l3-gateway-config yet"}`)
	missing := "unix:" + filepath.Join(t.TempDir(), "missing.sock")
	nowhere := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n"
	if err := os.WriteFile(nowhere, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"red", "--node", "node1", "--nb", nb.Endpoint}, []string{`unknown network "red"`, "node1", "blue, default"}},
		{[]string{"red", "--node", "node3", "--nb", nb.Endpoint}, []string{`network "red" is not programmed`, "node3", "no k8s.ovn.org/l3-gateway-config yet"}},
		{[]string{"--node", "node9", "--nb", nb.Endpoint}, []string{`unknown node "node9"`, "node1, node2, node3, ovn-control-plane, ovn-worker, … (6 in all)"}},
		{[]string{"--node", "node1", "--nb", missing}, []string{"node node1", missing, "no such file or directory"}},
		{[]string{"--nb", nb.Endpoint, "--kubeconfig", nowhere}, []string{"cannot reach the API server at https://127.0.0.1:1"}},
		{[]string{"blue", "red"}, []string{"accepts at most 1 arg(s), received 2"}},
		{[]string{"--nb", nb.Endpoint, "-o", "name"}, []string{"-o name", "json"}},
		{[]string{"--nb", nb.Endpoint, "-o", "wide"}, []string{`unknown output format "wide"`}},
	} {
		out, err := zoneviewtest.Run(t, k, zoneviewtest.Plain, nil, append([]string{"topology"}, c.args...)...)
		clitest.OneLine(t, err, c.want...)
		if out != "" {
			t.Errorf("%v printed output besides the error:\n%s", c.args, out)
		}
	}
}

// TestTopologyCompletion completes networks from the cluster's CUDN and UDN objects,
// and --node from its nodes.
func TestTopologyCompletion(t *testing.T) {
	k := zoneviewtest.Cluster(t)
	out, err := zoneviewtest.Run(t, k, zoneviewtest.Plain, nil, "__complete", "topology", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := completions(out); !slices.Equal(got, []string{"default", "blue", "test12/namespace-scoped"}) {
		t.Errorf("network completions %v:\n%s", got, out)
	}
	out, err = zoneviewtest.Run(t, k, zoneviewtest.Plain, nil, "__complete", "topology", "--node", "ovn-w")
	if err != nil {
		t.Fatal(err)
	}
	if got := completions(out); !slices.Equal(got, []string{"ovn-worker", "ovn-worker2"}) {
		t.Errorf("node completions %v:\n%s", got, out)
	}
}

// completions are the candidates of cobra's __complete output, without the directive.
func completions(out string) []string {
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "Completion ended") {
			names = append(names, l)
		}
	}
	return names
}
