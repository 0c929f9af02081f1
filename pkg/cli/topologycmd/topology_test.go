package topologycmd_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/livezone/livezonetest"
	"github.com/ovnk/ovnk/pkg/cli/topologycmd"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// topologyJSON runs `topology args… -o json` and decodes the view.
func topologyJSON(t *testing.T, k *testenv.Kube, args ...string) topologycmd.View {
	t.Helper()
	return livezonetest.JSON[topologycmd.View](t, k, append([]string{"topology"}, args...)...)
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
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	set := nbtest.Snapshot(t, nb)
	ix := rows.NewIndex(set)
	for _, network := range []string{"default", "cluster_udn_blue"} {
		t.Run(network, func(t *testing.T) {
			v := topologyJSON(t, k, cluster.UserNetworkName(network), "--node", "node1", "--nb", nb.Endpoint)
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
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-control-plane")
	out, err := livezonetest.Run(t, k, livezonetest.Wide, nil, "topology", "test12/namespace-scoped", "--node", "ovn-control-plane", "--nb", nb.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	livezonetest.RequireLines(t, treeLines(out),
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
		"tunnel key: 14", // 10 + node id, as upstream (the OKEP's listing shows the id)
		"port rtotr-GR_test12_namespace.scoped_ovn-control-plane",
		"mac: 0a:58:64:41:00:04, ipv6-lla: fe80::858:64ff:fe41:4",
		"networks: 100.65.0.4/16, 100.88.0.9/31, fd97::9/127, fd99::4/64",
		"peer: trtor-GR_test12_namespace.scoped_ovn-control-plane on router test12_namespace.scoped_transit_router",
		// The other nodes' sides of the transit router are remote.
		"port trtor-GR_test12_namespace.scoped_ovn-worker (remote)",
		"networks: 100.88.0.6/31, fd97::6/127",
		"node: ovn-worker, chassis: chassis-ovn-worker, tunnel key: 13",
		"port trtor-GR_test12_namespace.scoped_ovn-worker2 (remote)",
		"node: ovn-worker2, chassis: chassis-ovn-worker2, tunnel key: 12",
		// The management-port SNAT on the transit router.
		"snat 203.203.0.0/16 → 169.254.0.12 ports 32768-60999, logical port: trtos-test12_namespace.scoped_ovn_layer2_switch, match: eth.dst == 0a:58:cb:cb:00:02",
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
	k := livezonetest.Cluster(t)
	okep := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	layer3 := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	livezonetest.Goldens(t, k, "topology", []livezonetest.Golden{
		{Name: "okep5094-ovn-worker", Args: []string{"topology", "test12/namespace-scoped", "--node", "ovn-worker", "--nb", okep.Endpoint}},
		{Name: "layer3-node1-blue", Args: []string{"topology", "blue", "--node", "node1", "--nb", layer3.Endpoint}},
		{Name: "layer3-node1-default", Args: []string{"topology", "--nb", layer3.Endpoint}},
	})
}

// TestTopologyLayer2UpgradeGolden pins the tree of both sides of OKEP-5094's rolling
// upgrade: an upgraded zone with its upgrade ports and a legacy zone.
func TestTopologyLayer2UpgradeGolden(t *testing.T) {
	k := livezonetest.Cluster(t)
	st := topologytest.Layer2Upgrade("node1")
	upgraded := livezonetest.ZoneNB(t, st, "node1")
	legacy := livezonetest.ZoneNB(t, st, "node2")
	livezonetest.Goldens(t, k, "topology", []livezonetest.Golden{
		{Name: "upgrade-node1-green", Args: []string{"topology", "green", "--node", "node1", "--nb", upgraded.Endpoint}},
		{Name: "upgrade-node2-green", Args: []string{"topology", "green", "--node", "node2", "--nb", legacy.Endpoint}},
	})
}

// TestTopologyNoColour: NO_COLOR and --no-color keep a terminal's output plain.
func TestTopologyNoColour(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	tty := clitest.Terminal{TTY: true, Width: 80}
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"NO_COLOR": "1"}, nil},
		{nil, []string{"--no-color"}},
	} {
		out, err := livezonetest.Run(t, k, tty, c.env, append([]string{"topology", "--nb", nb.Endpoint}, c.args...)...)
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
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	out, err := livezonetest.Run(t, k, livezonetest.Wide, nil, "topology", "--nb", nb.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	livezonetest.RequireLines(t, treeLines(out),
		"Network default (layer3) in node node1's zone",
		"Showing node1, the first of 6 nodes by name; pick another with --node: node2, node3, ovn-control-plane, ovn-worker, ovn-worker2.",
		"router ovn_cluster_router (cluster router)",
	)
	out, err = livezonetest.Run(t, k, livezonetest.Wide, nil, "topology", "--nb", nb.Endpoint, "--node", "node1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Showing") {
		t.Errorf("the hint about --node stays when --node is given:\n%s", out)
	}
	v := topologyJSON(t, k, "--nb", nb.Endpoint)
	if v.Node != "node1" || v.Network != (livezone.Network{Name: "default", OVNName: "default", Topology: "layer3"}) {
		t.Errorf("default view: node %s, network %+v", v.Node, v.Network)
	}
}

// TestTopologyNetworkNames: a UDN by namespace/name, by name with -n, and by OVN name;
// a CUDN by name and by OVN name.
func TestTopologyNetworkNames(t *testing.T) {
	k := livezonetest.Cluster(t)
	okep := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	layer3 := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	for _, c := range []struct {
		nb   *testenv.NB
		args []string
		want livezone.Network
	}{
		{okep, []string{"test12/namespace-scoped"}, livezone.Network{Name: "test12/namespace-scoped", OVNName: "test12_namespace-scoped", Topology: "layer2"}},
		{okep, []string{"namespace-scoped", "-n", "test12"}, livezone.Network{Name: "test12/namespace-scoped", OVNName: "test12_namespace-scoped", Topology: "layer2"}},
		{okep, []string{"test12_namespace-scoped"}, livezone.Network{Name: "test12/namespace-scoped", OVNName: "test12_namespace-scoped", Topology: "layer2"}},
		{layer3, []string{"blue"}, livezone.Network{Name: "blue", OVNName: "cluster_udn_blue", Topology: "layer3"}},
		{layer3, []string{"cluster_udn_blue"}, livezone.Network{Name: "blue", OVNName: "cluster_udn_blue", Topology: "layer3"}},
	} {
		v := topologyJSON(t, k, append(c.args, "--nb", c.nb.Endpoint, "--node", "ovn-worker")...)
		if v.Network != c.want {
			t.Errorf("%v: network %+v, want %+v", c.args, v.Network, c.want)
		}
	}
}

// TestTopologyYAML: -o yaml is the same view.
func TestTopologyYAML(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	out, err := livezonetest.Run(t, k, livezonetest.Plain, nil, "topology", "test12/namespace-scoped", "--nb", nb.Endpoint, "--node", "ovn-worker", "-o", "yaml")
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
	out, err = livezonetest.Run(t, k, livezonetest.Plain, nil, "topology", "test12/namespace-scoped", "--nb", nb.Endpoint, "--node", "ovn-worker",
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
	k := livezonetest.Cluster(t)
	okep := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	layer3 := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
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
		out, err := livezonetest.Run(t, k, livezonetest.Wide, env, "topology", c.network, "--node", c.node)
		if err != nil {
			t.Fatalf("--node %s: %v", c.node, err)
		}
		livezonetest.RequireLines(t, treeLines(out), "router "+c.router+" (gateway router)")
	}
}

// TestTopologyBadInput: each mistake is one line naming the value and what exists.
func TestTopologyBadInput(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	livezonetest.Annotate(t, k, "node3", cluster.AnnotationZoneStatus, `{"cluster_udn_red":"no k8s.ovn.org/l3-gateway-config yet"}`)
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
		{[]string{"--nb", nb.Endpoint, "-o", "name"}, []string{`unknown output format "name"`, "json"}},
		{[]string{"--nb", nb.Endpoint, "-o", "wide"}, []string{`unknown output format "wide"`}},
	} {
		out, err := livezonetest.Run(t, k, livezonetest.Plain, nil, append([]string{"topology"}, c.args...)...)
		clitest.OneLine(t, err, c.want...)
		if out != "" {
			t.Errorf("%v printed output besides the error:\n%s", c.args, out)
		}
	}
}

// TestTopologyCompletion completes networks from the cluster's CUDN and UDN objects,
// connects from its ClusterNetworkConnects, and --node from its nodes.
func TestTopologyCompletion(t *testing.T) {
	k := livezonetest.Cluster(t)
	createConnect(t, k, "colored-enterprise")
	out, err := livezonetest.Run(t, k, livezonetest.Plain, nil, "__complete", "topology", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := completions(out); !slices.Equal(got, []string{"default", "blue", "green", "test12/namespace-scoped", "connect/colored-enterprise"}) {
		t.Errorf("network and connect completions %v:\n%s", got, out)
	}
	out, err = livezonetest.Run(t, k, livezonetest.Plain, nil, "__complete", "topology", "conn")
	if err != nil {
		t.Fatal(err)
	}
	if got := completions(out); !slices.Equal(got, []string{"connect/colored-enterprise"}) {
		t.Errorf("connect completions %v:\n%s", got, out)
	}
	out, err = livezonetest.Run(t, k, livezonetest.Plain, nil, "__complete", "topology", "--node", "ovn-w")
	if err != nil {
		t.Fatal(err)
	}
	if got := completions(out); !slices.Equal(got, []string{"ovn-worker", "ovn-worker2"}) {
		t.Errorf("node completions %v:\n%s", got, out)
	}
}

// createConnect creates a ClusterNetworkConnect of OKEP-5224's form, and deletes it when
// the test ends: no controller acts on it in the test API server.
func createConnect(t *testing.T, k *testenv.Kube, name string) {
	t.Helper()
	manifest := `
apiVersion: k8s.ovn.org/v1
kind: ClusterNetworkConnect
metadata:
  name: ` + name + `
spec:
  networkSelectors:
  - networkSelectionType: PrimaryUserDefinedNetworks
    primaryUserDefinedNetworkSelector:
      namespaceSelector:
        matchExpressions:
        - key: kubernetes.io/metadata.name
          operator: In
          values: ["blue", "green"]
  connectSubnets:
  - cidr: 192.168.0.0/16
    networkPrefix: 24
  connectivity:
  - PodNetwork
`
	var cnc ovnkv1.ClusterNetworkConnect
	if err := yaml.UnmarshalStrict([]byte(manifest), &cnc); err != nil {
		t.Fatal(err)
	}
	c := clitest.NewClient(t, k)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Create(ctx, &cnc); err != nil {
		t.Fatalf("create ClusterNetworkConnect %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Delete(ctx, &cnc); err != nil {
			t.Errorf("delete ClusterNetworkConnect %s: %v", name, err)
		}
	})
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

// connectJSON runs `topology args… -o json` and decodes the connect's view.
func connectJSON(t *testing.T, k *testenv.Kube, args ...string) topologycmd.ConnectView {
	t.Helper()
	return livezonetest.JSON[topologycmd.ConnectView](t, k, append([]string{"topology"}, args...)...)
}

// TestTopologyConnectGolden pins the tree of OKEP-5224's connect router on ovn-worker
// with and without colour, at 80 and 200 columns.
func TestTopologyConnectGolden(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5224(), "ovn-worker")
	livezonetest.Goldens(t, k, "topology", []livezonetest.Golden{
		{Name: "okep5224-ovn-worker-connect", Args: []string{"topology", "connect/colored-enterprise", "--node", "ovn-worker", "--nb", nb.Endpoint}},
	})
}

// TestTopologyConnectShowsWhatTheNBHolds compares the connect view of OKEP-5224's zone
// of ovn-worker, as -o json shows it, with the NB's rows read directly: every crtor-
// port of the zone is a port of the connect router, a local one with its peer on the
// network's router and that router's network, a remote one with the chassis and node
// it stands for; each network's router has its rtocr- port and its one 9001 policy.
// The router's own name selects the same view.
func TestTopologyConnectShowsWhatTheNBHolds(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5224(), "ovn-worker")
	set := nbtest.Snapshot(t, nb)
	ix := rows.NewIndex(set)
	v := connectJSON(t, k, "connect/colored-enterprise", "--node", "ovn-worker", "--nb", nb.Endpoint)
	if v.Node != "ovn-worker" || v.Connect != "colored-enterprise" {
		t.Errorf("view of node %q, connect %q", v.Node, v.Connect)
	}
	cr := ix.Router("connect_router_colored-enterprise")
	if r := v.Router; r.Name != cr.Name || r.UUID != cr.UUID || r.Role != "connect router" || r.TunnelKey != "16715779" || r.StaticRoutes != 6 || r.Policies != 0 {
		t.Errorf("connect router: %+v", r)
	}
	shown := map[string]topologycmd.RouterPort{}
	for _, p := range v.Router.Ports {
		shown[p.Name] = p
	}
	var crtor, remote int
	for _, lrp := range set.RouterPorts {
		if !strings.HasPrefix(lrp.Name, "crtor-") {
			continue
		}
		crtor++
		p, ok := shown[lrp.Name]
		if !ok || p.UUID != lrp.UUID || !slices.Contains(cr.Ports, lrp.UUID) {
			t.Errorf("port %s of the NB is not shown as a port of the connect router: %+v", lrp.Name, p)
			continue
		}
		if p.MAC != lrp.MAC || !slices.Equal(p.Networks, lrp.Networks) || p.TunnelKey != lrp.Options["requested-tnl-key"] {
			t.Errorf("port %s: %+v, NB has %s %v %v", lrp.Name, p, lrp.MAC, lrp.Networks, lrp.Options)
		}
		if chassis := lrp.Options["requested-chassis"]; chassis != "" {
			remote++
			node := lrp.ExternalIDs[rows.NodeKey]
			if !p.Remote || p.Chassis != chassis || p.Node != node || node == "ovn-worker" || p.Peer != nil {
				t.Errorf("remote port %s: %+v, NB binds it to %s of node %s", lrp.Name, p, chassis, node)
			}
			continue
		}
		peer := routerOfPort(set, ix, *lrp.Peer)
		if peer == nil {
			t.Errorf("port %s: the NB has no router with its peer %s", lrp.Name, *lrp.Peer)
			continue
		}
		network := peer.ExternalIDs[rows.NetworkKey]
		want := topologycmd.PortRef{Kind: "router", Name: peer.Name, Port: *lrp.Peer,
			Network: &livezone.Network{Name: cluster.UserNetworkName(network), OVNName: network, Topology: "layer3"}}
		if p.Remote || p.Chassis != "" || p.Peer == nil || *p.Peer.Network != *want.Network || p.Peer.Name != want.Name || p.Peer.Port != want.Port || p.Peer.Kind != want.Kind {
			t.Errorf("local port %s: %+v, peer %+v; NB's peer is %s on %s of %s", lrp.Name, p, p.Peer, *lrp.Peer, peer.Name, network)
		}
	}
	if crtor != 6 || remote != 4 || len(v.Router.Ports) != crtor {
		t.Errorf("%d ports shown; the NB has %d crtor- ports, %d of them remote", len(v.Router.Ports), crtor, remote)
	}

	var networks []string
	for _, r := range v.Networks {
		networks = append(networks, r.Network.Name)
		lr := ix.Router(r.Name)
		if lr == nil || lr.UUID != r.UUID || r.Network.OVNName != lr.ExternalIDs[rows.NetworkKey] || r.Role != "cluster router" || r.Policies != 1 {
			t.Errorf("network router %+v", r)
			continue
		}
		if len(r.Links) != 1 || !strings.HasPrefix(r.Links[0].Name, "rtocr-") || !slices.Contains(lr.Ports, r.Links[0].UUID) ||
			r.Links[0].Peer == nil || r.Links[0].Peer.Name != cr.Name || r.Links[0].Peer.Network != nil {
			t.Errorf("network router %s: links %+v", r.Name, r.Links)
		}
	}
	if !slices.Equal(networks, []string{"blue/blue-network", "green/green-network"}) {
		t.Errorf("networks %v, want blue/blue-network, green/green-network", networks)
	}

	byRouter := connectJSON(t, k, "connect_router_colored-enterprise", "--node", "ovn-worker", "--nb", nb.Endpoint)
	if !reflect.DeepEqual(byRouter, v) {
		t.Errorf("connect_router_colored-enterprise shows\n%+v\nconnect/colored-enterprise\n%+v", byRouter, v)
	}
	out, err := livezonetest.Run(t, k, livezonetest.Plain, nil, "topology", "connect/colored-enterprise", "--node", "ovn-worker", "--nb", nb.Endpoint, "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML topologycmd.ConnectView
	if err := yaml.UnmarshalStrict([]byte(out), &fromYAML); err != nil || !reflect.DeepEqual(fromYAML, v) {
		t.Errorf("-o yaml is not the view of -o json (%v):\n%s", err, out)
	}
}

// routerOfPort is the router of the NB's rows that has the port of that name.
func routerOfPort(set *rows.Set, ix *rows.Index, port string) *nbdb.LogicalRouter {
	for _, lr := range set.Routers {
		for _, key := range lr.Ports {
			if lrp := ix.RouterPorts[key]; lrp != nil && lrp.Name == port {
				return lr
			}
		}
	}
	return nil
}

// TestTopologyConnectLayer2 shows the mixed connect of a Layer3 and a Layer2 network,
// dual-stack: the Layer2 network links through its transit router with one link in
// all, and each router has a 9001 policy per family of the other network's subnets.
func TestTopologyConnectLayer2(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.MixedConnect(), "ovn-worker")
	v := connectJSON(t, k, "connect/mixed", "--node", "ovn-worker", "--nb", nb.Endpoint)
	type summary struct {
		network, router, role, link string
		policies                    int
	}
	var got []summary
	for _, r := range v.Networks {
		s := summary{network: r.Network.Name, router: r.Name, role: r.Role, policies: r.Policies}
		for _, l := range r.Links {
			s.link += l.Name + " " + strings.Join(l.Networks, ",")
		}
		got = append(got, s)
	}
	want := []summary{
		{"blue/blue-network", "blue_blue.network_ovn_cluster_router", "cluster router", "rtocr-blue_blue.network_ovn-worker_mixed 192.168.0.4/31,fd00:192:168::4/127", 2},
		{"yellow/yellow-network", "yellow_yellow.network_transit_router", "transit router", "rtocr-yellow_yellow.network_mixed 192.168.1.0/31,fd00:192:168::100/127", 2},
	}
	if !slices.Equal(got, want) {
		t.Errorf("network routers\n%+v\nwant\n%+v", got, want)
	}
}

// TestTopologyConnectSharedNetworks: blue and green are joined by a second connect as
// well, so each network router has a 9001 policy and a link for each connect; the view
// of either connect counts only the policy that reroutes to its own router.
func TestTopologyConnectSharedNetworks(t *testing.T) {
	k := livezonetest.Cluster(t)
	st := topologytest.OKEP5224()
	blue, green := st.Networks[0].Name, st.Networks[1].Name
	st.Connects = append(st.Connects, &cluster.Connect{
		Name: "second", Networks: []string{blue, green}, Refused: map[string]string{},
		Subnets:    []cluster.ConnectSubnet{{CIDR: netip.MustParsePrefix("172.31.0.0/16"), NetworkPrefix: 24}},
		PodNetwork: true, TunnelKey: 16715790,
		Blocks: map[string][]netip.Prefix{
			green: {netip.MustParsePrefix("172.31.0.0/24")},
			blue:  {netip.MustParsePrefix("172.31.1.0/24")},
		},
	})
	nb := livezonetest.ZoneNB(t, st, "ovn-worker")
	ix := rows.NewIndex(nbtest.Snapshot(t, nb))
	for _, cnc := range []string{"colored-enterprise", "second"} {
		v := connectJSON(t, k, "connect/"+cnc, "--node", "ovn-worker", "--nb", nb.Endpoint)
		if len(v.Networks) != 2 {
			t.Fatalf("%s: network routers %+v", cnc, v.Networks)
		}
		for _, r := range v.Networks {
			var at9001 int
			for _, key := range ix.Router(r.Name).Policies {
				if ix.Policies[key].Priority == 9001 {
					at9001++
				}
			}
			if at9001 != 2 {
				t.Errorf("%s: the NB has %d policies at 9001 on %s, want one per connect", cnc, at9001, r.Name)
			}
			if r.Policies != 1 || len(r.Links) != 1 || !strings.HasSuffix(r.Links[0].Name, "_"+cnc) {
				t.Errorf("%s: router %s has %d policies to it and links %+v, want 1 and its rtocr-…_%s port", cnc, r.Name, r.Policies, r.Links, cnc)
			}
		}
	}
}

// TestTopologyConnectBadInput: a connect the zone lacks is one line naming it and the
// connects the zone has, or saying it has none, or why its agent has not programmed it.
func TestTopologyConnectBadInput(t *testing.T) {
	k := livezonetest.Cluster(t)
	okep := livezonetest.ZoneNB(t, topologytest.OKEP5224(), "ovn-worker")
	layer3 := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	livezonetest.Annotate(t, k, "node2", cluster.AnnotationZoneStatus,
		`{"ClusterNetworkConnect/colored-enterprise":"waiting for the leader to allocate the connect router's tunnel key"}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"connect/purple", "--node", "ovn-worker", "--nb", okep.Endpoint},
			`unknown connect "connect/purple" in node ovn-worker's zone: it holds connect/colored-enterprise`},
		{[]string{"connect_router_purple", "--node", "ovn-worker", "--nb", okep.Endpoint},
			`unknown connect "connect_router_purple" in node ovn-worker's zone: it holds connect/colored-enterprise`},
		{[]string{"connect/colored-enterprise", "--node", "node1", "--nb", layer3.Endpoint},
			`unknown connect "connect/colored-enterprise": node node1's zone holds no connect routers (kubectl ovnk connections lists the cluster's connects)`},
		{[]string{"connect/colored-enterprise", "--node", "node2", "--nb", layer3.Endpoint},
			`connect "connect/colored-enterprise" is not programmed in node node2's zone yet: waiting for the leader to allocate the connect router's tunnel key`},
	} {
		out, err := livezonetest.Run(t, k, livezonetest.Plain, nil, append([]string{"topology"}, c.args...)...)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %s", c.args, err, c.want)
		}
		if out != "" {
			t.Errorf("%v printed output besides the error:\n%s", c.args, out)
		}
	}
}
