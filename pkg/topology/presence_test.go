package topology

import (
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// podsOn are st's pods on node attached to network.
func podsOn(st *cluster.State, node, network string) []*cluster.Pod {
	var out []*cluster.Pod
	for _, p := range st.Pods {
		if _, ok := p.Networks[network]; ok && p.Node == node {
			out = append(out, p)
		}
	}
	return out
}

// compiled is node's zone as Compile builds it from st.
func compiled(t *testing.T, st *cluster.State, node string) *rows.Set {
	t.Helper()
	res, err := Compile(st, node)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rows
}

// TestCompiledZonesAreProgrammed checks NotProgrammed against the compiler: every zone
// it builds holds every network, with each of the node's pods wired, and every connect.
func TestCompiledZonesAreProgrammed(t *testing.T) {
	for name, st := range map[string]*cluster.State{"layer3": topologytest.Layer3(), "okep5094": topologytest.OKEP5094(), "okep5224": topologytest.OKEP5224(), "mixed": topologytest.MixedConnect()} {
		wired := 0
		for _, node := range st.Nodes {
			idx := rows.NewIndex(compiled(t, st, node.Name))
			for _, n := range st.Networks {
				pods := podsOn(st, node.Name, n.Name)
				wired += len(pods)
				if why := NotProgrammed(idx, n, node.Name, pods); why != "" {
					t.Errorf("%s: node %s, network %s: %s", name, node.Name, n.Name, why)
				}
			}
			for _, c := range st.Connects {
				if why := ConnectNotProgrammed(idx, c.Name); why != "" {
					t.Errorf("%s: node %s, connect %s: %s", name, node.Name, c.Name, why)
				}
			}
		}
		if wired == 0 {
			t.Errorf("%s: no pod was checked", name)
		}
	}
}

// without is list less the items drop picks.
func without[T any](list []T, drop func(T) bool) []T {
	return slices.DeleteFunc(slices.Clone(list), drop)
}

func TestNotProgrammedSaysWhatIsMissing(t *testing.T) {
	st := topologytest.OKEP5094()
	node := st.Nodes[0].Name
	n := st.Networks[0]
	pods := podsOn(st, node, n.Name)
	if len(pods) == 0 {
		t.Fatalf("the fixture has no pod of %s on %s", n.Name, node)
	}
	nm := namesOf(n)
	for _, tc := range []struct {
		name      string
		breakZone func(s *rows.Set)
		want      string
	}{
		{"switch", func(s *rows.Set) {
			s.Switches = without(s.Switches, func(ls *nbdb.LogicalSwitch) bool { return ls.Name == nm.Layer2Switch() })
		}, "its zone has no switch " + nm.Layer2Switch()},
		{"routers", func(s *rows.Set) {
			s.Routers = without(s.Routers, func(lr *nbdb.LogicalRouter) bool {
				return lr.Name == nm.TransitRouter() || lr.Name == nm.GatewayRouter(node)
			})
		}, "its zone has neither router " + nm.TransitRouter() + " nor " + nm.GatewayRouter(node)},
		{"pod port", func(s *rows.Set) {
			s.SwitchPorts = without(s.SwitchPorts, func(lsp *nbdb.LogicalSwitchPort) bool { return lsp.Name == PodPortName(n, pods[0]) })
		}, "pod " + pods[0].Namespace + "/" + pods[0].Name + " has no port on switch " + nm.Layer2Switch()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := compiled(t, st, node)
			tc.breakZone(s)
			if got := NotProgrammed(rows.NewIndex(s), n, node, pods); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}

	// A gateway router alone is the legacy topology, programmed too.
	s := compiled(t, st, node)
	s.Routers = without(s.Routers, func(lr *nbdb.LogicalRouter) bool { return lr.Name == nm.TransitRouter() })
	if got := NotProgrammed(rows.NewIndex(s), n, node, pods); got != "" {
		t.Errorf("a zone with the gateway router and no transit router: %q, want programmed", got)
	}
}

func TestNotProgrammedLayer3AndConnect(t *testing.T) {
	st := topologytest.OKEP5224()
	node := st.Nodes[0].Name
	i := slices.IndexFunc(st.Networks, func(n *cluster.Network) bool { return n.Topology == cluster.Layer3 && !n.IsDefault() })
	if i < 0 || len(st.Connects) == 0 {
		t.Fatal("the fixture has no Layer3 network or no connect")
	}
	n, cnc := st.Networks[i], st.Connects[0].Name
	nm := namesOf(n)
	s := compiled(t, st, node)
	s.Routers = without(s.Routers, func(lr *nbdb.LogicalRouter) bool {
		return lr.Name == nm.ClusterRouter() || lr.Name == ConnectRouterName(cnc)
	})
	idx := rows.NewIndex(s)
	if got, want := NotProgrammed(idx, n, node, nil), "its zone has no router "+nm.ClusterRouter(); got != want {
		t.Errorf("network: %q, want %q", got, want)
	}
	if got := ConnectNotProgrammed(idx, cnc); !strings.HasSuffix(got, "no router "+ConnectRouterName(cnc)) {
		t.Errorf("connect: %q", got)
	}
	s.Switches = without(s.Switches, func(ls *nbdb.LogicalSwitch) bool { return ls.Name == nm.NodeSwitch(node) })
	if got, want := NotProgrammed(rows.NewIndex(s), n, node, nil), "its zone has no switch "+nm.NodeSwitch(node); got != want {
		t.Errorf("network without its node switch: %q, want %q", got, want)
	}
}

// TestNotProgrammedUpstreamNames judges zones written with upstream's names, spelled
// out rather than built by this package: a Layer3 UDN ns1/red and a secondary Layer2
// CUDN l2 whose NAD in ns2 a pod attaches.
func TestNotProgrammedUpstreamNames(t *testing.T) {
	zone := func(sw, router, port string) *rows.Index {
		ls := &nbdb.LogicalSwitch{UUID: "ls", Name: sw, Ports: []string{"lsp"}}
		s := &rows.Set{Switches: []*nbdb.LogicalSwitch{ls}, SwitchPorts: []*nbdb.LogicalSwitchPort{{UUID: "lsp", Name: port}}}
		if router != "" {
			s.Routers = []*nbdb.LogicalRouter{{UUID: "lr", Name: router}}
		}
		return rows.NewIndex(s)
	}
	red := &cluster.Network{Name: "ns1_red", Topology: cluster.Layer3, Role: cluster.Primary, Owner: cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: "ns1", Name: "red"}}
	l2 := &cluster.Network{Name: "cluster_udn_l2", Topology: cluster.Layer2, Role: cluster.Secondary, Owner: cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "l2"}}
	for _, tc := range []struct {
		name string
		zone *rows.Index
		n    *cluster.Network
		pod  *cluster.Pod
	}{
		{"layer3", zone("ns1_red_node1", "ns1_red_ovn_cluster_router", "ns1.red_ns1_pod-a"), red, &cluster.Pod{Namespace: "ns1", Name: "pod-a"}},
		{"secondary layer2", zone("cluster_udn_l2_ovn_layer2_switch", "", "ns2.l2_ns2_pod-b"), l2, &cluster.Pod{Namespace: "ns2", Name: "pod-b"}},
	} {
		if got := NotProgrammed(tc.zone, tc.n, "node1", []*cluster.Pod{tc.pod}); got != "" {
			t.Errorf("%s: %q, want programmed", tc.name, got)
		}
		if got := NotProgrammed(tc.zone, tc.n, "node1", []*cluster.Pod{{Namespace: tc.pod.Namespace, Name: "other"}}); !strings.Contains(got, "has no port") {
			t.Errorf("%s: a pod without a port: %q", tc.name, got)
		}
	}
}

// BenchmarkJudgeZone judges one zone of a 250-network × 250-node cluster on every
// network, with the node's pods: what `kubectl ovnk network list` does per node on a
// cluster run by upstream OVN-Kubernetes, once the zone is read and indexed.
func BenchmarkJudgeZone(b *testing.B) {
	st := topologytest.Scale(250, 250)
	node := st.Nodes[0].Name
	res, err := Compile(st, node)
	if err != nil || len(res.NotCompiled) > 0 {
		b.Fatalf("%v %v", err, res.NotCompiled)
	}
	idx := rows.NewIndex(res.Rows)
	pods := map[string][]*cluster.Pod{}
	for _, n := range st.Networks {
		pods[n.Name] = podsOn(st, node, n.Name)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range st.Networks {
			if why := NotProgrammed(idx, n, node, pods[n.Name]); why != "" {
				b.Fatalf("network %s: %s", n.Name, why)
			}
		}
	}
	b.ReportMetric(float64(len(st.Networks)), "networks")
}
