package trace_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
)

// compiled is a cluster whose every zone is what the compiler makes of st.
func compiled(t testing.TB, st *cluster.State) *trace.Cluster {
	t.Helper()
	zones := trace.Zones{}
	for _, n := range st.Nodes {
		res, err := topology.Compile(st, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NotCompiled) > 0 {
			t.Fatalf("zone %s: %v", n.Name, res.NotCompiled)
		}
		zones[n.Name] = trace.ZoneFromRows(n.Name, res.Rows, trace.Extra{})
	}
	return trace.ClusterOf(st, zones)
}

func podRequest(t *testing.T, c *trace.Cluster, pod, network string, dst string) trace.Request {
	t.Helper()
	ep, err := c.PodEndpoint(pod, network)
	if err != nil {
		t.Fatal(err)
	}
	return trace.Request{Node: ep.Node, Port: ep.Port, Dst: netip.MustParseAddr(dst), Reply: true}
}

// stages lists a path's hops as "zone datapath stage", to compare with expectations.
func stages(p *trace.Path) []string {
	var out []string
	for _, h := range p.Hops {
		out = append(out, h.Zone+" "+h.Datapath+" "+string(h.Stage))
	}
	return out
}

func mustTrace(t *testing.T, c *trace.Cluster, req trace.Request) *trace.Result {
	t.Helper()
	res, err := trace.Trace(context.Background(), c, req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func text(t *testing.T, r *trace.Result) string {
	t.Helper()
	var b strings.Builder
	if err := trace.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestLayer3PodToRemotePodCrossesZones(t *testing.T) {
	st := topologytest.Layer3()
	c := compiled(t, st)
	res := mustTrace(t, c, podRequest(t, c, "default/client", "default", "10.244.1.7"))
	v := res.Forward.Verdict
	if v.Kind != trace.Delivered || v.Zone != "node2" || v.Pod != "kube-system/dns" || v.Port != "kube-system_dns" {
		t.Fatalf("verdict %+v, want delivered to kube-system/dns on node2:\n%s", v, text(t, res))
	}
	want := []string{
		"node1 node1 l2-lookup",
		"node1 node1 output",
		"node1 ovn_cluster_router route",
		"node1 ovn_cluster_router policy", // 102: pod-to-pod traffic is allowed as routed
		"node1 ovn_cluster_router resolve",
		"node1 ovn_cluster_router output",
		"node1 transit_switch l2-lookup",
		"node1 transit_switch handoff",
		"node2 transit_switch output",
		"node2 ovn_cluster_router route",
		"node2 ovn_cluster_router policy",
		"node2 ovn_cluster_router resolve",
		"node2 ovn_cluster_router output",
		"node2 node2 l2-lookup",
		"node2 node2 delivery",
	}
	if got := stages(res.Forward); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hops:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), text(t, res))
	}
	// Two routers on the way: the TTL drops by two, and the last router's port and
	// the pod's MAC are the final Ethernet addresses.
	if p := v.Packet; p.TTL != 62 || p.EthDst != "0a:58:0a:f4:01:07" || p.EthSrc != "0a:58:0a:f4:01:01" || p.IPSrc != "10.244.0.6" {
		t.Errorf("final packet %+v", p)
	}
	// The route that crossed to node2 is the transit route the compiler wrote for node2's subnet.
	route := res.Forward.Hops[2]
	if route.Row == nil || route.Row.Table != "Logical_Router_Static_Route" || !strings.Contains(route.Row.Match, "10.244.1.0/24") ||
		route.Row.Owner == nil || route.Row.Owner.Kind != "Network" || route.Row.Owner.Name != "default" {
		t.Errorf("deciding route %+v", route.Row)
	}
	if res.Reply == nil || res.Reply.Verdict.Kind != trace.Delivered || res.Reply.Verdict.Pod != "default/client" || res.Reply.Verdict.Zone != "node1" {
		t.Fatalf("reply did not come back to default/client:\n%s", text(t, res))
	}
}

// TestIsolationOfPrimaryUDNPods: blue/web's default-network port is isolated. A
// default-network pod's packet to it is dropped by the isolation ACL on web's node
// (after crossing the zones), what web sends there is dropped as it enters, and the
// node's own packet (the kubelet's probe, from the management port) is delivered and
// answered.
func TestIsolationOfPrimaryUDNPods(t *testing.T) {
	c := compiled(t, topologytest.Layer3())
	for _, tc := range []struct {
		name string
		req  trace.Request
		zone string
		dir  string
	}{
		{"from another node's pod", podRequest(t, c, "kube-system/dns", "default", "10.244.0.5"), "node1", "to-lport"},
		{"from a pod on its node", podRequest(t, c, "default/client", "default", "10.244.0.5"), "node1", "to-lport"},
		{"from the locked port itself", podRequest(t, c, "blue/web", "default", "10.244.1.7"), "node1", "from-lport"},
	} {
		res := mustTrace(t, c, tc.req)
		v := res.Forward.Verdict
		if v.Kind != trace.Dropped || v.Zone != tc.zone || v.Row == nil || v.Row.Table != "ACL" || !strings.Contains(v.Row.Match, "@"+topology.IsolationPortGroup) ||
			!strings.Contains(v.Reason, tc.dir) {
			t.Errorf("%s: verdict %+v, want dropped by the %s isolation ACL in %s:\n%s", tc.name, v, tc.dir, tc.zone, text(t, res))
		}
	}
	probe := trace.Request{Node: "node1", Port: "k8s-node1", Src: netip.MustParseAddr("10.244.0.2"), Dst: netip.MustParseAddr("10.244.0.5"), Proto: trace.TCP, DstPort: 8080, Reply: true}
	res := mustTrace(t, c, probe)
	if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != "blue/web" || res.Reply == nil || res.Reply.Verdict.Kind != trace.Delivered {
		t.Fatalf("the node's probe: %+v:\n%s", v, text(t, res))
	}
}

func TestLayer3PodToInternetLeavesThroughGatewayRouter(t *testing.T) {
	st := topologytest.Layer3()
	c := compiled(t, st)
	res := mustTrace(t, c, podRequest(t, c, "default/client", "default", "8.8.8.8"))
	v := res.Forward.Verdict
	if v.Kind != trace.LeftCluster || v.Zone != "node1" || v.Port != "breth0_node1" || v.Packet.IPSrc != "172.18.0.2" {
		t.Fatalf("verdict %+v, want left the cluster via node1 as 172.18.0.2:\n%s", v, text(t, res))
	}
	if !strings.Contains(v.Reason, "left the cluster via node1 as 172.18.0.2") {
		t.Errorf("reason %q", v.Reason)
	}
	var snat *trace.Hop
	for i := range res.Forward.Hops {
		if res.Forward.Hops[i].Stage == trace.StageSNAT {
			snat = &res.Forward.Hops[i]
		}
	}
	if snat == nil || snat.Datapath != "GR_node1" || snat.Row == nil || snat.Row.Table != "NAT" {
		t.Errorf("no SNAT on GR_node1:\n%s", text(t, res))
	}
	if res.Reply != nil {
		t.Errorf("a packet that left the cluster has no traced reply")
	}
}

func TestLayer3IPv6PodToRemotePod(t *testing.T) {
	st := topologytest.Layer3()
	c := compiled(t, st)
	res := mustTrace(t, c, podRequest(t, c, "default/client", "default", "fd00:10:244:2::7"))
	if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != "kube-system/dns" {
		t.Fatalf("verdict %+v:\n%s", v, text(t, res))
	}
}

func TestLayer3PodToItsGatewayIsAnsweredByTheRouter(t *testing.T) {
	st := topologytest.Layer3()
	c := compiled(t, st)
	res := mustTrace(t, c, podRequest(t, c, "default/client", "default", "10.244.0.1"))
	if v := res.Forward.Verdict; v.Kind != trace.ToRouter || v.Datapath != "ovn_cluster_router" || v.Port != "rtos-node1" {
		t.Fatalf("verdict %+v:\n%s", v, text(t, res))
	}
}

func TestLayer2PodToRemotePodAndGatewayRouters(t *testing.T) {
	st := topologytest.OKEP5094()
	c := compiled(t, st)
	var src, dst *cluster.Pod
	for _, p := range st.Pods {
		switch {
		case src == nil:
			src = p
		case dst == nil && p.Node != src.Node:
			dst = p
		}
	}
	if src == nil || dst == nil {
		t.Fatal("fixture has no two pods on different nodes")
	}
	var network string
	for n := range src.Networks {
		network = n
	}
	dstIP := dst.Networks[network].IPs[0].Addr().String()
	res := mustTrace(t, c, podRequest(t, c, src.Namespace+"/"+src.Name, network, dstIP))
	v := res.Forward.Verdict
	if v.Kind != trace.Delivered || v.Zone != dst.Node || v.Pod != dst.Namespace+"/"+dst.Name {
		t.Fatalf("verdict %+v, want %s/%s on %s:\n%s", v, dst.Namespace, dst.Name, dst.Node, text(t, res))
	}
	// Same subnet: switched, not routed, so the TTL is untouched.
	if v.Packet.TTL != 64 {
		t.Errorf("TTL %d, want 64 (no router on a Layer2 path)", v.Packet.TTL)
	}
	if res.Reply == nil || res.Reply.Verdict.Kind != trace.Delivered || res.Reply.Verdict.Zone != src.Node {
		t.Errorf("reply:\n%s", text(t, res))
	}

	// A pod reaches the gateway router of another node through the transit router,
	// which hands the packet to that node's zone (OKEP-5094's join-IP routes).
	for _, n := range st.Nodes {
		if n.Name == src.Node {
			continue
		}
		var joinIP netip.Addr
		for _, net := range st.Networks {
			for _, j := range net.JoinSubnets {
				if j.Addr().Is4() {
					joinIP = netip.AddrFrom4([4]byte{j.Addr().As4()[0], j.Addr().As4()[1], 0, byte(n.ID)})
				}
			}
		}
		res := mustTrace(t, c, podRequest(t, c, src.Namespace+"/"+src.Name, network, joinIP.String()))
		v := res.Forward.Verdict
		if v.Kind != trace.ToRouter || v.Zone != n.Name || !strings.HasPrefix(v.Datapath, "GR_") {
			t.Errorf("to %s's GR join IP %s: verdict %+v:\n%s", n.Name, joinIP, v, text(t, res))
		}
	}
}

func TestConnectedNetworksReachEachOther(t *testing.T) {
	st := topologytest.OKEP5224()
	c := compiled(t, st)
	res := mustTrace(t, c, podRequest(t, c, "blue/web", "", "200.10.2.6"))
	v := res.Forward.Verdict
	if v.Kind != trace.Delivered || v.Pod != "green/db" {
		t.Fatalf("verdict %+v, want delivered to green/db:\n%s", v, text(t, res))
	}
	var steered bool
	for _, h := range res.Forward.Hops {
		if h.Stage == trace.StagePolicy && h.Row != nil && h.Row.Owner != nil && h.Row.Owner.Kind == "ClusterNetworkConnect" &&
			h.Row.Owner.Name == "colored-enterprise" && *h.Row.Priority == 9001 {
			steered = true
		}
	}
	if !steered {
		t.Errorf("no hop names the connect's 9001 policy:\n%s", text(t, res))
	}
	if res.Reply == nil || res.Reply.Verdict.Pod != "blue/web" {
		t.Errorf("reply:\n%s", text(t, res))
	}

	// Without the connect, the same packet never reaches green.
	st.Connects = nil
	res = mustTrace(t, compiled(t, st), podRequest(t, c, "blue/web", "", "200.10.2.6"))
	if v := res.Forward.Verdict; v.Kind != trace.Dropped || v.Pod != "green/db" || !strings.Contains(v.Reason, "ClusterNetworkConnect") {
		t.Fatalf("without a connect, verdict %+v, want dropped naming green/db and why:\n%s", v, text(t, res))
	}
}

func TestBadRequests(t *testing.T) {
	st := topologytest.Layer3()
	c := compiled(t, st)
	for name, req := range map[string]trace.Request{
		"unknown port":   {Node: "node1", Port: "nope", Dst: netip.MustParseAddr("10.0.0.1")},
		"wrong family":   {Node: "node1", Port: "blue_web", Src: netip.MustParseAddr("10.244.0.5"), Dst: netip.MustParseAddr("fd00::1")},
		"foreign src":    {Node: "node1", Port: "blue_web", Src: netip.MustParseAddr("10.9.9.9"), Dst: netip.MustParseAddr("10.244.1.7")},
		"no destination": {Node: "node1", Port: "blue_web"},
	} {
		if _, err := trace.Trace(context.Background(), c, req); !errors.Is(err, trace.ErrBadRequest) {
			t.Errorf("%s: err %v, want ErrBadRequest", name, err)
		}
	}
	// A zone that cannot be read is no fault of the request's.
	_, err := trace.Trace(context.Background(), c, trace.Request{Node: "node9", Port: "blue_web", Dst: netip.MustParseAddr("10.0.0.1")})
	if err == nil || errors.Is(err, trace.ErrBadRequest) || !strings.Contains(err.Error(), "node9") {
		t.Errorf("unreadable source zone: err %v, want an error naming node9 that is not ErrBadRequest", err)
	}
}

func TestMissingZoneStopsWithAReason(t *testing.T) {
	st := topologytest.Layer3()
	c := compiled(t, st)
	delete(c.Zones.(trace.Zones), "node2")
	res := mustTrace(t, c, podRequest(t, c, "default/client", "default", "10.244.1.7"))
	if v := res.Forward.Verdict; v.Kind != trace.Stuck || !strings.Contains(v.Reason, "node2") {
		t.Fatalf("verdict %+v", v)
	}
}

// TestPodPortsOfNamesPortsAsTheCompiler reads pods back from the annotation the leader
// writes and checks that every port name it derives is a port of the pod's zone, on
// each of its networks, with the pod's addresses, and that each port is on its network
// as users name it (the CUDN blue's attachment blue/blue is blue) or, when the caller
// cannot tell, as the attachment is named.
func TestPodPortsOfNamesPortsAsTheCompiler(t *testing.T) {
	st := topologytest.Layer3()
	c := compiled(t, st)
	nads := map[string]string{"default": "default", "cluster_udn_blue": "blue/blue"}
	blue := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}
	blue.Spec.NamespaceSelector.MatchLabels = map[string]string{"team": "blue"}
	networks := cluster.NewNADNetworks([]*ovnkv1.ClusterUserDefinedNetwork{blue}, nil,
		[]corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "blue", Labels: map[string]string{"team": "blue"}}}})
	for _, tc := range []struct {
		name    string
		network func(nad string) string
		// blue is what blue/web's port on blue is said to be on.
		blue string
	}{
		{"networks read", networks.UserName, "blue"},
		{"networks unknown", func(nad string) string { return nad }, "blue/blue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var read []trace.PodPort
			for _, p := range st.Pods {
				ifaces := map[string]cluster.PodInterface{}
				for network, iface := range p.Networks {
					ifaces[nads[network]] = iface
				}
				value, err := cluster.PodNetworksCodec.Format(ifaces)
				if err != nil {
					t.Fatal(err)
				}
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name,
					Annotations: map[string]string{cluster.PodNetworksCodec.Key: value}}, Spec: corev1.PodSpec{NodeName: p.Node}}
				ports, err := trace.PodPortsOf(pod, tc.network)
				if err != nil {
					t.Fatal(err)
				}
				if len(ports) != len(p.Networks) {
					t.Fatalf("pod %s/%s: %d ports, want %d", p.Namespace, p.Name, len(ports), len(p.Networks))
				}
				zone, err := c.Zones.Zone(context.Background(), p.Node)
				if err != nil {
					t.Fatal(err)
				}
				for _, pp := range ports {
					if lsp, _ := zone.SwitchPort(pp.Port); lsp == nil {
						t.Errorf("pod %s: port %s (network %s) is not in %s's zone", pp.Pod, pp.Port, pp.Network, p.Node)
					}
					if pp.Node != p.Node || len(pp.IPs) == 0 {
						t.Errorf("port %+v", pp)
					}
					if want := map[string]string{"blue/blue": tc.blue, "default": "default"}[pp.NAD]; pp.Network != want {
						t.Errorf("pod %s's port %s (attachment %s) is on network %q, want %q", pp.Pod, pp.Port, pp.NAD, pp.Network, want)
					}
				}
				read = append(read, ports...)
				pod.Status.Phase = corev1.PodSucceeded
				if ports, err := trace.PodPortsOf(pod, tc.network); err != nil || len(ports) != 0 {
					t.Errorf("a finished pod has ports %v (err %v): its addresses are free", ports, err)
				}
			}
			// A CUDN is found by its name, its OVN name and its attachment's name.
			r := trace.NewCluster(c.Zones, c.Chassis, read)
			for _, network := range []string{"blue", "cluster_udn_blue", "blue/blue"} {
				if p, err := r.PodEndpoint("blue/web", network); err != nil || p.Port != "blue.blue_blue_web" {
					t.Errorf("--network %s: %+v, %v", network, p, err)
				}
			}
			_, err := r.PodEndpoint("blue/web", "red")
			if want := `pod blue/web is not on network "red"; it is on ` + tc.blue + ", default"; err == nil || err.Error() != want {
				t.Errorf("--network red: %v, want %s", err, want)
			}
		})
	}
}
