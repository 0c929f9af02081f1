package zone

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbfake"
)

// lastGoodZone is node1's zone controller on the in-memory NB, in a cluster of node1
// and node2.
func lastGoodZone(ctx context.Context, t *testing.T) (*Controller, client.Client, func() string) {
	t.Helper()
	nb := nbfake.Start(t)
	nbc, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nbc.Close)
	k := fake.NewClientBuilder().WithScheme(testScheme(t)).
		WithObjects(nodeN(1), nodeN(2), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}).Build()
	z := &Controller{
		Client: k, NB: &ovn.Reconciler{Client: nbc}, NodeName: "node1",
		Cluster:        cluster.Config{ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}},
		DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}},
		Resync:         time.Minute, Metrics: NewMetrics(prometheus.NewRegistry()),
	}
	return z, k, func() string { return ownedDump(ctx, t, nbc) }
}

// annotate sets annotations of a node through the API, as kubectl annotate does.
func annotate(ctx context.Context, t *testing.T, k client.Client, node string, annotations map[string]string) {
	t.Helper()
	var n corev1.Node
	if err := k.Get(ctx, types.NamespacedName{Name: node}, &n); err != nil {
		t.Fatal(err)
	}
	for key, v := range annotations {
		n.Annotations[key] = v
	}
	if err := k.Update(ctx, &n); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteNodeBadAnnotationKeepsLastGood: a remote node whose annotations turn
// malformed keeps its ports in this zone as they were; this node stays ready. Then
// this node's own annotation turns malformed: its zone stays as it was too, but the
// agent reports a node problem and its last error names the annotation and the value,
// until the annotation is mended.
func TestRemoteNodeBadAnnotationKeepsLastGood(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	z, k, dump := lastGoodZone(ctx, t)
	reconcile := func(when string) {
		t.Helper()
		if _, err := z.Reconcile(ctx, zoneKey); err != nil {
			t.Fatalf("reconcile %s: %v", when, err)
		}
	}
	reconcile("at the start")
	before := dump()
	if !strings.Contains(before, "node2") {
		t.Fatalf("the zone has no row naming node2:\n%s", before)
	}

	good := nodeN(2).Annotations
	annotate(ctx, t, k, "node2", map[string]string{
		cluster.AnnotationL3GatewayConfig:   "garbage",
		cluster.AnnotationNodePrimaryIfAddr: `{"ipv4":"not-an-ip"}`,
	})
	reconcile("after node2's annotations broke")
	if got := dump(); got != before {
		t.Errorf("node2's malformed annotations changed the zone:\ngot:\n%s\nwant:\n%s", got, before)
	}
	if _, err := z.LastReconcile(); err != nil || z.NodeProblem() != nil {
		t.Errorf("another node's annotations made this one fail: node problem %v, last error %v", z.NodeProblem(), err)
	}
	// The last good version is an input like the objects: nothing changed since, so
	// the next reconcile reuses the compile and compares no row.
	if stats, _, err := z.reconcile(ctx); err != nil || stats.Compared != 0 || stats.Operations != 0 {
		t.Errorf("a reconcile with nothing changed: %+v, %v; want no row compared", stats, err)
	}

	annotate(ctx, t, k, "node1", map[string]string{cluster.AnnotationL3GatewayConfig: "garbage"})
	reconcile("after node1's own annotation broke")
	if got := dump(); got != before {
		t.Errorf("node1's malformed annotation changed its zone:\ngot:\n%s\nwant:\n%s", got, before)
	}
	_, err := z.LastReconcile()
	for _, want := range []string{"node/node1", cluster.AnnotationL3GatewayConfig, `"garbage"`, "want a JSON object"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("last error %v does not name %s", err, want)
		}
	}
	if p := z.NodeProblem(); p == nil || !strings.Contains(p.Error(), cluster.AnnotationL3GatewayConfig) {
		t.Errorf("NodeProblem() = %v, want the malformed annotation", p)
	}

	annotate(ctx, t, k, "node1", map[string]string{cluster.AnnotationL3GatewayConfig: nodeN(1).Annotations[cluster.AnnotationL3GatewayConfig]})
	annotate(ctx, t, k, "node2", good)
	reconcile("after both were mended")
	if _, err := z.LastReconcile(); err != nil || z.NodeProblem() != nil {
		t.Errorf("mended: node problem %v, last error %v; want neither", z.NodeProblem(), err)
	}
	if got := dump(); got != before {
		t.Errorf("the mended zone differs:\ngot:\n%s\nwant:\n%s", got, before)
	}
}

// TestOwnBadAnnotationWithoutLastGood: an agent that never saw its node's annotations
// good reports the malformed one as its error (not "not ready yet"), without failing
// the reconcile into retries: only a change to the Node mends it.
func TestOwnBadAnnotationWithoutLastGood(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	z, k, dump := lastGoodZone(ctx, t)
	annotate(ctx, t, k, "node1", map[string]string{cluster.AnnotationNodePrimaryIfAddr: `{"ipv4":"not-an-ip"}`})
	res, err := z.Reconcile(ctx, zoneKey)
	if err != nil || res.RequeueAfter != z.Resync {
		t.Errorf("reconcile: %+v, %v; want no error and the resync period", res, err)
	}
	_, last := z.LastReconcile()
	for _, want := range []string{cluster.AnnotationNodePrimaryIfAddr, `"not-an-ip" is not a CIDR`} {
		if last == nil || !strings.Contains(last.Error(), want) {
			t.Errorf("last error %v does not name %s", last, want)
		}
	}
	if z.Ready() || z.NodeProblem() == nil || dump() != "" {
		t.Errorf("ready %v, node problem %v, zone %q; want not ready, the problem and nothing written", z.Ready(), z.NodeProblem(), dump())
	}
}

// TestLastGood: the entry of a node follows its good versions, stays through bad
// ones, and goes with the node or when another Node takes its name.
func TestLastGood(t *testing.T) {
	n := *nodeN(2)
	n.UID, n.ResourceVersion = "u1", "1"
	got := LastGood(nil, []corev1.Node{n})
	if got["node2"] == nil || got["node2"].ResourceVersion != "1" {
		t.Fatalf("a good node: %v", got)
	}
	bad := *n.DeepCopy()
	bad.ResourceVersion = "2"
	bad.Annotations[cluster.AnnotationL3GatewayConfig] = "garbage"
	good := n.Annotations[cluster.AnnotationL3GatewayConfig]
	if got = LastGood(got, []corev1.Node{bad}); got["node2"] == nil || got["node2"].Annotations[cluster.AnnotationL3GatewayConfig] != good {
		t.Errorf("a bad version's entry lost the good value: %v", got["node2"])
	}
	other := *bad.DeepCopy()
	other.UID = "u2"
	if got := LastGood(got, []corev1.Node{other}); got["node2"] != nil {
		t.Errorf("another Node of the same name kept its predecessor's: %v", got["node2"])
	}
	if got := LastGood(got, nil); len(got) != 0 {
		t.Errorf("a node that went away kept its entry: %v", got)
	}
}

// TestLastGoodKeepsEachAnnotationsLatestGoodValue: a node's version with one annotation
// malformed and another validly changed, then a version with that other one malformed
// too: every zone keeps the latest good value of each, not the values of the last
// version that was good throughout. A bad gateway tunnel id, which keeps no node out,
// does not hold the last good version back either.
func TestLastGoodKeepsEachAnnotationsLatestGoodValue(t *testing.T) {
	in := cluster.Inputs{
		Config:         cluster.Config{ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}},
		DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}},
	}
	const twoCIDRs = `["172.18.0.3/16","172.18.0.77/16"]`
	for _, spoil := range []struct{ annotation, value string }{
		{cluster.AnnotationL3GatewayConfig, "garbage"},
		{cluster.AnnotationLayer2GatewayTunnelIDs, `{"blue":"x"}`},
	} {
		t.Run(spoil.annotation, func(t *testing.T) {
			v1 := *nodeN(2)
			v1.UID, v1.ResourceVersion = "u2", "1"
			last := LastGood(nil, []corev1.Node{v1})
			v2 := *v1.DeepCopy()
			v2.ResourceVersion = "2"
			v2.Annotations[cluster.AnnotationHostCIDRs] = twoCIDRs
			v2.Annotations[spoil.annotation] = spoil.value
			last = LastGood(last, []corev1.Node{v2})
			v3 := *v2.DeepCopy()
			v3.ResourceVersion = "3"
			v3.Annotations[cluster.AnnotationHostCIDRs] = `"garbage"`
			last = LastGood(last, []corev1.Node{v3})
			in.Nodes, in.LastGoodNodes = []corev1.Node{v3}, last
			st, _ := cluster.Build(in)
			n := st.Node("node2")
			if n == nil {
				t.Fatal("node2 is left out")
			}
			if len(n.HostCIDRs) != 2 {
				t.Errorf("node2's host CIDRs are %v, want version 2's %s", n.HostCIDRs, twoCIDRs)
			}
		})
	}
}

// TestNodeProblemGoesWhenTheNodeWaits: this node's malformed annotation is reported;
// once the annotation is removed (the node now waits for it), the problem and the
// error it left are gone.
func TestNodeProblemGoesWhenTheNodeWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	z, k, _ := lastGoodZone(ctx, t)
	if _, err := z.Reconcile(ctx, zoneKey); err != nil {
		t.Fatal(err)
	}
	annotate(ctx, t, k, "node1", map[string]string{cluster.AnnotationNodeChassisID: "a b"})
	if _, err := z.Reconcile(ctx, zoneKey); err != nil {
		t.Fatal(err)
	}
	if z.NodeProblem() == nil {
		t.Fatal("no node problem for a chassis id with a space")
	}
	var n corev1.Node
	if err := k.Get(ctx, types.NamespacedName{Name: "node1"}, &n); err != nil {
		t.Fatal(err)
	}
	delete(n.Annotations, cluster.AnnotationNodeChassisID)
	if err := k.Update(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if _, err := z.Reconcile(ctx, zoneKey); err != nil {
		t.Fatal(err)
	}
	if _, last := z.LastReconcile(); z.NodeProblem() != nil || last != nil {
		t.Errorf("the annotation removed (the node waits for it), yet node problem = %v, last error = %v", z.NodeProblem(), last)
	}
}
