package zone

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/test/testenv"
)

// fakeNode is the node's own part, failing AfterZone while broken says why.
type fakeNode struct{ broken error }

func (f *fakeNode) Publish(context.Context) (map[string]string, error) { return nil, nil }
func (f *fakeNode) BeforeZone(context.Context, *cluster.State) error   { return nil }
func (f *fakeNode) AfterZone(context.Context, *cluster.State, func(string) bool) (bool, error) {
	return false, f.broken
}

// testScheme holds the API types the zone reads: Kubernetes' own and ovnk's.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// readyNode is node1 with every annotation a node ready for OVN carries.
func readyNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", Annotations: map[string]string{
		cluster.AnnotationNodeID:                      "2",
		cluster.AnnotationNodeChassisID:               "chassis-1",
		cluster.AnnotationNodeSubnets:                 `{"default":["10.244.1.0/24"]}`,
		cluster.AnnotationNodeTransitSwitchPortIfAddr: `{"ipv4":"100.88.0.2/16"}`,
		cluster.AnnotationNodePrimaryIfAddr:           `{"ipv4":"172.18.0.2/16"}`,
		cluster.AnnotationHostCIDRs:                   `["172.18.0.2/16"]`,
		cluster.AnnotationL3GatewayConfig: `{"default":{"mode":"shared","bridge-id":"breth0","interface-id":"breth0_node1",` +
			`"mac-address":"02:42:ac:12:00:02","ip-addresses":["172.18.0.2/16"],"next-hops":["172.18.0.1"],"node-port-enable":"true","vlan-id":"0"}}`,
		cluster.AnnotationLayer2TopologyVersion: cluster.Layer2TopologyVersionTransitRouter,
	}}}
}

// TestReconcileStoresSnapshot runs the zone's real reconcile (fake API objects, a real
// NB) and checks what the CNI endpoint and the CNI installation read from it: the
// snapshot holds the local pod, a network whose rows another owner holds is among the
// unprogrammed, and the node can wire pods only while its own part is in order.
func TestReconcileStoresSnapshot(t *testing.T) {
	nb := testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nbc, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nbc.Close)

	scheme := testScheme(t)
	alloc, err := cluster.PodNetworksCodec.Format(map[string]cluster.PodInterface{"default": {
		IPs: []netip.Prefix{netip.MustParsePrefix("10.244.1.5/24")}, MAC: "0a:58:0a:f4:01:05",
		Gateways: []netip.Addr{netip.MustParseAddr("10.244.1.1")}, Role: cluster.PodRolePrimary,
	}})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "blue", Name: "web", UID: "u-web", Annotations: map[string]string{cluster.AnnotationPodNetworks: alloc}},
		Spec:       corev1.PodSpec{NodeName: "node1"},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	objects := []client.Object{readyNode(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}, pod}
	node := &fakeNode{broken: errors.New("br-int is missing")}
	c := &Controller{
		Client:   fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build(),
		NB:       &ovn.Reconciler{Client: nbc},
		NodeName: "node1",
		Cluster:  cluster.Config{ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}},
		DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{
			{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24},
		}},
		Resync:  time.Minute,
		Metrics: NewMetrics(prometheus.NewRegistry()),
		Node:    node,
	}
	if c.Snapshot() != nil || c.CanWirePods() {
		t.Fatal("a snapshot, or pods wirable, before the first reconcile")
	}

	// The node's part fails: the zone is applied and its snapshot stored, but pods
	// cannot be wired on this node.
	if _, err := c.Reconcile(ctx, zoneKey); err == nil || !strings.Contains(err.Error(), "node node1: br-int is missing") {
		t.Fatalf("reconcile with the node's part broken: %v", err)
	}
	snap := c.Snapshot()
	if snap == nil {
		t.Fatal("no snapshot after a reconcile that applied the zone")
	}
	if !c.Ready() || c.CanWirePods() {
		t.Errorf("ready %v, can wire pods %v; want the zone applied and pods not wirable", c.Ready(), c.CanWirePods())
	}
	found := false
	for _, p := range snap.State.Pods {
		found = found || p.Namespace == "blue" && p.Name == "web" && p.UID == "u-web"
	}
	if !found || len(snap.Unprogrammed) != 0 {
		t.Errorf("snapshot: pod blue/web found %v, unprogrammed %v; want the pod and no unprogrammed network", found, snap.Unprogrammed)
	}

	// The node's part repaired; and someone else's row holds the name of a row of the
	// default network (its ACL logging meter): the zone leaves that row out of the
	// Northbound, and the network with it, while the rest is applied.
	node.broken = nil
	if _, err := nb.NBCtl(ctx, "meter-del", "acl-logging", "--", "meter-add", "acl-logging", "drop", "20", "pktps"); err != nil {
		t.Fatal(err)
	}
	// Until the agent's NB client has seen the foreign meter, a reconcile may still
	// try to write its own and fail on the name; then the next one leaves it out.
	err = testenv.Eventually(ctx, 20*time.Second, "a reconcile that leaves the default network out", func(ctx context.Context) error {
		c.last = time.Time{}
		if _, err := c.Reconcile(ctx, zoneKey); err != nil {
			return err
		}
		if c.Snapshot().Unprogrammed["default"] == nil {
			return fmt.Errorf("unprogrammed %v", c.Snapshot().Unprogrammed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !c.CanWirePods() {
		t.Error("the node's part is in order, yet pods cannot be wired")
	}
	if why := c.Snapshot().Unprogrammed["default"]; !strings.Contains(why.Error(), `Meter "acl-logging" is held by a row with no owner key`) {
		t.Errorf("the default network is unprogrammed because %v; want its meter's name held by another row", why)
	}
	var n corev1.Node
	if err := c.Client.Get(ctx, types.NamespacedName{Name: "node1"}, &n); err != nil {
		t.Fatal(err)
	}
	if status := n.Annotations[cluster.AnnotationZoneStatus]; !strings.Contains(status, "is held by") {
		t.Errorf("zone status %q; want the default network's conflict reported", status)
	}
}
