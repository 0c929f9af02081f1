package zone

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestReportNamesNetworksWaitingForTheirID runs the zone's real reconcile (fake API
// objects, a real NB) with a network the leader has not given an id yet: the node's
// zone report names it pending, with what it waits for, beside the networks the zone
// programmed; once the id is there, the zone programs it and the report says so.
func TestReportNamesNetworksWaitingForTheirID(t *testing.T) {
	nb := testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nbc, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nbc.Close)

	primary := func(ns, name, cidr string, annotations map[string]string) *ovnkv1.UserDefinedNetwork {
		return &ovnkv1.UserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
			Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
				Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: ovnkv1.CIDR(cidr), HostSubnet: 24}}}},
		}
	}
	ids := func(id int) map[string]string {
		return map[string]string{cluster.AnnotationNetworkID: fmt.Sprint(id), cluster.AnnotationTunnelKeys: fmt.Sprintf("[%d]", alloc.BaseTransitSwitchTunnelKey+id)}
	}
	// The node has its subnets of both networks already; the red one lacks its id.
	node := readyNode()
	node.Annotations[cluster.AnnotationNodeSubnets] = `{"default":["10.244.1.0/24"],"blue_ready":["10.50.1.0/24"],"red_pending":["10.60.1.0/24"]}`
	pending := primary("red", "pending", "10.60.0.0/16", nil)
	objects := []client.Object{node, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "red"}},
		primary("blue", "ready", "10.50.0.0/16", ids(4)), pending}
	c := &Controller{
		Client:   fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objects...).Build(),
		NB:       &ovn.Reconciler{Client: nbc},
		NodeName: "node1",
		Cluster: cluster.Config{ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")},
			MasqueradeSubnets: cluster.DefaultMasqueradeSubnets()[:1]},
		DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{
			{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24},
		}},
		Resync:  time.Minute,
		Metrics: NewMetrics(prometheus.NewRegistry()),
	}
	report := func() map[string]string {
		t.Helper()
		c.last = time.Time{}
		if _, err := c.Reconcile(ctx, zoneKey); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		n := &corev1.Node{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: "node1"}, n); err != nil {
			t.Fatal(err)
		}
		r, _, err := cluster.ZoneStatusCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: "node1"}, n.Annotations)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	want := map[string]string{"default": "", "blue_ready": "", "red_pending": "waiting for k8s.ovn.org/network-id"}
	if got := report(); !maps.Equal(got, want) {
		t.Fatalf("zone report %v, want %v", got, want)
	}
	if got := cluster.ReadZoneReport(currentNode1(t, c)).Readiness("red_pending", "network"); got.Ready || got.Reason != want["red_pending"] {
		t.Errorf("readiness of red_pending %+v, want not ready because it waits for its id", got)
	}

	// The leader's id arrives: the zone programs the network.
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(pending), pending); err != nil {
		t.Fatal(err)
	}
	pending.Annotations = ids(5)
	if err := c.Client.Update(ctx, pending); err != nil {
		t.Fatal(err)
	}
	want["red_pending"] = ""
	if got := report(); !maps.Equal(got, want) {
		t.Fatalf("zone report once the id is set %v, want %v", got, want)
	}
}

// currentNode1 reads node1 as the controller's client has it.
func currentNode1(t *testing.T, c *Controller) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	if err := c.Client.Get(context.Background(), client.ObjectKey{Name: "node1"}, n); err != nil {
		t.Fatal(err)
	}
	return n
}
