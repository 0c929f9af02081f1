package zonereport

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// fakeZones serves each node's rows, or its error, and counts the reads.
type fakeZones struct {
	mu    sync.Mutex
	sets  map[string]*rows.Set
	errs  map[string]error
	reads int
}

func (z *fakeZones) Rows(_ context.Context, node string) (*rows.Set, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.reads++
	if err := z.errs[node]; err != nil {
		return nil, err
	}
	return z.sets[node], nil
}

// zoneOf is a zone holding network n's node switch and cluster router, with a port on
// the switch for each of pods.
func zoneOf(n *cluster.Network, node string, pods ...*cluster.Pod) *rows.Set {
	prefix := n.OVNPrefix()
	ls := &nbdb.LogicalSwitch{UUID: "ls", Name: prefix + node}
	s := &rows.Set{Switches: []*nbdb.LogicalSwitch{ls}, Routers: []*nbdb.LogicalRouter{{UUID: "lr", Name: prefix + "ovn_cluster_router"}}}
	for _, p := range pods {
		lsp := &nbdb.LogicalSwitchPort{UUID: "lsp-" + p.Name, Name: topology.PodPortName(n, p)}
		ls.Ports = append(ls.Ports, lsp.UUID)
		s.SwitchPorts = append(s.SwitchPorts, lsp)
	}
	return s
}

// TestReadJudgesUpstreamZones reads the reports of a cluster run by upstream
// OVN-Kubernetes (an ovnkube-node DaemonSet, no agent reports) from its zones: a zone
// with the network and its pod wired is ready, one missing the pod's port is not, one
// that cannot be read says why; with no zone readable the nodes have no reports and a
// warning says why. A node with an agent's report makes Read use the reports alone.
func TestReadJudgesUpstreamZones(t *testing.T) {
	k := testenv.SharedKube(t)
	ns := k.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ctrlclient.New(k.RESTConfig, ctrlclient.Options{Scheme: cmdutil.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	create := func(obj ctrlclient.Object) {
		t.Helper()
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}
	create(clusterkindtest.Upstream(ns, t.TempDir()))
	create(&ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blue"},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
			Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.150.0.0/16"}},
		}},
	})
	ifaces, err := cluster.PodNetworksCodec.Format(map[string]cluster.PodInterface{ns + "/blue": {
		IPs: []netip.Prefix{netip.MustParsePrefix("10.150.1.5/24")}, MAC: "0a:58:0a:96:01:05", Role: cluster.PodRolePrimary,
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Both pods are on node a: node b has none to wire.
	for _, name := range []string{"p", "q"} {
		create(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{cluster.AnnotationPodNetworks: ifaces}},
			Spec:       corev1.PodSpec{NodeName: ns + "-a", Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}},
		})
	}
	flags := genericclioptions.NewConfigFlags(true)
	*flags.KubeConfig = k.Kubeconfig
	f := &cmdutil.Factory{Kube: flags, Settings: &cmdutil.Settings{AgentNamespace: ns}, IOStreams: genericiooptions.IOStreams{ErrOut: &strings.Builder{}}}

	n := &cluster.Network{Name: cluster.UDNNetworkName(ns, "blue"), Topology: cluster.Layer3, Role: cluster.Primary,
		Owner: cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: ns, Name: "blue"}}
	p, q := &cluster.Pod{Namespace: ns, Name: "p"}, &cluster.Pod{Namespace: ns, Name: "q"}
	a, b, down, gone := ns+"-a", ns+"-b", ns+"-c", ns+"-d"
	ready := func(name string, status corev1.ConditionStatus) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: status, Reason: "NodeStatusUnknown"},
		}}}
	}
	nodes := []corev1.Node{ready(down, corev1.ConditionTrue), ready(a, corev1.ConditionTrue), ready(b, corev1.ConditionTrue), ready(gone, corev1.ConditionUnknown)}
	cncs := []ovnkv1.ClusterNetworkConnect{{ObjectMeta: metav1.ObjectMeta{Name: "joined"}}}
	unreadable := errors.New("exec refused")

	t.Run("from the zones", func(t *testing.T) {
		z := &fakeZones{
			sets: map[string]*rows.Set{a: zoneOf(n, a, p), b: zoneOf(n, b)},
			errs: map[string]error{down: unreadable},
		}
		z.sets[b].Routers = append(z.sets[b].Routers, &nbdb.LogicalRouter{UUID: "cr", Name: topology.ConnectRouterName("joined")})
		reports, warnings := read(ctx, f, z, nodes, cncs)
		if len(warnings) != 0 {
			t.Errorf("warnings %q", warnings)
		}
		got := map[string]string{}
		for _, r := range reports {
			if !r.FromZone {
				t.Errorf("node %s's report is not from its zone: %+v", r.Node, r)
			}
			got[r.Node] = r.Readiness(n.Name, "network").Reason + " | " + r.Readiness(cluster.ConnectZoneStatusKey("joined"), "connect").Reason
		}
		unready := "its zone was not read: the node is not Ready (NodeStatusUnknown)"
		want := map[string]string{
			a:    "pod " + ns + "/q has no port on switch " + n.OVNPrefix() + a + " | its zone has no router connect_router_joined",
			b:    " | ",
			down: "its zone was not read: exec refused | its zone was not read: exec refused",
			gone: unready + " | " + unready,
		}
		for node, w := range want {
			if got[node] != w {
				t.Errorf("node %s: %q, want %q", node, got[node], w)
			}
		}
		if reports[0].Node != a || reports[2].Node != down || reports[3].Node != gone {
			t.Errorf("reports are not sorted by node: %v", reports)
		}
		if z.reads != 3 {
			t.Errorf("%d zones read, want 3: not the one of the node that is not Ready", z.reads)
		}
	})

	t.Run("no zone readable", func(t *testing.T) {
		z := &fakeZones{errs: map[string]error{a: unreadable, b: unreadable, down: unreadable}}
		nodes := nodes[:3]
		reports, warnings := read(ctx, f, z, nodes, nil)
		if cluster.AnyReported(reports) || cluster.FromZones(reports) {
			t.Errorf("reports %+v, want none: the conditions decide", reports)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "cannot read the nodes' zones") || !strings.Contains(warnings[0], "exec refused") {
			t.Errorf("warnings %q, want one saying the zones could not be read, and why", warnings)
		}
	})

	t.Run("an agent's report decides", func(t *testing.T) {
		z := &fakeZones{sets: map[string]*rows.Set{a: zoneOf(n, a, p, q)}}
		reported := append([]corev1.Node(nil), nodes...)
		reported[1].Annotations = map[string]string{cluster.AnnotationZoneStatus: `{"` + n.Name + `":"not yet"}`}
		reports, _ := read(ctx, f, z, reported, nil)
		if z.reads != 0 {
			t.Errorf("%d zones read, want none where an agent reports", z.reads)
		}
		if r := reports[0].Readiness(n.Name, "network"); r.Node != a || r.Reason != "not yet" {
			t.Errorf("node a: %+v, want the agent's reason", r)
		}
	})

	t.Run("dynamic UDN node allocation", func(t *testing.T) {
		var udn ovnkv1.UserDefinedNetwork
		if err := c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: "blue"}, &udn); err != nil {
			t.Fatal(err)
		}
		udn.Status.Conditions = []metav1.Condition{{Type: ConditionNodesSelected, Status: metav1.ConditionTrue, Reason: "DynamicAllocation",
			Message: "1 nodes rendered with network", LastTransitionTime: metav1.Now()}}
		if err := c.Status().Update(ctx, &udn); err != nil {
			t.Fatal(err)
		}
		// Node b has no pod of the network and none of its rows: as it should be. Node
		// a has pods and lacks the network: not programmed.
		z := &fakeZones{sets: map[string]*rows.Set{a: {}, b: {}, down: zoneOf(n, down)}}
		reports, _ := read(ctx, f, z, nodes[:3], nil)
		for _, r := range reports {
			got, want := r.Readiness(n.Name, "network").Reason, ""
			if r.Node == a {
				want = "its zone has no switch " + n.OVNPrefix() + a
			}
			if got != want {
				t.Errorf("node %s: %q, want %q", r.Node, got, want)
			}
		}
	})
}
