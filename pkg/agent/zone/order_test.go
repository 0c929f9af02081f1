package zone

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	libovsdb "github.com/ovn-kubernetes/libovsdb/client"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbfake"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/testenv"
)

// nodeN is node i (1-based) with every annotation a node ready for OVN carries.
func nodeN(i int) *corev1.Node {
	n := readyNode()
	name := fmt.Sprintf("node%d", i)
	n.Name = name
	n.Annotations = map[string]string{
		cluster.AnnotationNodeID:                      fmt.Sprint(i + 1),
		cluster.AnnotationNodeChassisID:               "chassis-" + fmt.Sprint(i),
		cluster.AnnotationNodeSubnets:                 fmt.Sprintf(`{"default":["10.244.%d.0/24"]}`, i),
		cluster.AnnotationNodeTransitSwitchPortIfAddr: fmt.Sprintf(`{"ipv4":"100.88.0.%d/16"}`, i+1),
		cluster.AnnotationNodePrimaryIfAddr:           fmt.Sprintf(`{"ipv4":"172.18.0.%d/16"}`, i+1),
		cluster.AnnotationHostCIDRs:                   fmt.Sprintf(`["172.18.0.%d/16"]`, i+1),
		cluster.AnnotationL3GatewayConfig: fmt.Sprintf(`{"default":{"mode":"shared","bridge-id":"breth0","interface-id":"breth0_%s",`+
			`"mac-address":"02:42:ac:12:00:%02x","ip-addresses":["172.18.0.%d/16"],"next-hops":["172.18.0.1"],"node-port-enable":"true","vlan-id":"0"}}`, name, i+1, i+1),
		cluster.AnnotationLayer2TopologyVersion: cluster.Layer2TopologyVersionTransitRouter,
	}
	return n
}

// podOn is a default-network pod on node i with the address host in its node subnet.
func podOn(t *testing.T, name string, i, host int) *corev1.Pod {
	t.Helper()
	ip := netip.MustParsePrefix(fmt.Sprintf("10.244.%d.%d/24", i, host))
	alloc, err := cluster.PodNetworksCodec.Format(map[string]cluster.PodInterface{"default": {
		IPs: []netip.Prefix{ip}, MAC: fmt.Sprintf("0a:58:0a:f4:%02x:%02x", i, host),
		Gateways: []netip.Addr{netip.MustParseAddr(fmt.Sprintf("10.244.%d.1", i))}, Role: cluster.PodRolePrimary,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "blue", Name: name, UID: types.UID("u-" + name),
			Annotations: map[string]string{cluster.AnnotationPodNetworks: alloc}},
		Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("node%d", i)},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// change is one event of the cluster: an object created, updated or deleted.
type change struct {
	what string
	do   func(ctx context.Context, c client.Client) error
}

func create(what string, obj client.Object) change {
	return change{what, func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, obj.DeepCopyObject().(client.Object))
	}}
}

func remove(what string, obj client.Object) change {
	return change{what, func(ctx context.Context, c client.Client) error {
		return c.Delete(ctx, obj.DeepCopyObject().(client.Object))
	}}
}

// TestZoneConvergesWhateverTheEventOrder replays the same changes to the cluster in many
// orders, reconciling the zone of node1 after each one, as the agent does against the
// in-memory Northbound: whatever the order, the zone ends up as a fresh compile of the
// final state says, and a further reconcile compares nothing and sends nothing. The
// zone reuses its compile and the reconciler passes over rows it applied, so a change
// either of them missed would show here.
func TestZoneConvergesWhateverTheEventOrder(t *testing.T) {
	scheme := testScheme(t)
	// The changes; some undo others (a pod deleted and another made in its place), so
	// orders pass through states the final one does not show.
	podA, podB, podC := podOn(t, "a", 1, 5), podOn(t, "b", 2, 6), podOn(t, "c", 1, 7)
	changes := []change{
		create("node2 joins", nodeN(2)),
		create("node3 joins", nodeN(3)),
		create("pod a on node1", podA),
		create("pod b on node2", podB),
		create("pod c on node1", podC),
		remove("pod c goes", podC),
		remove("node3 leaves", nodeN(3)),
	}
	// A change removes only what an earlier one made: keep each removal after its
	// creation.
	after := map[int]int{5: 4, 6: 1}

	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		order := orderOf(rng, len(changes), after)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			nb := nbfake.Start(t)
			nbc, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint()}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(nbc.Close)
			k := fake.NewClientBuilder().WithScheme(scheme).
				WithObjects(nodeN(1), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}).Build()
			z := &Controller{
				Client: k, NB: &ovn.Reconciler{Client: nbc}, NodeName: "node1",
				Cluster:        cluster.Config{ServiceSubnets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}},
				DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}},
				Resync:         time.Minute, Metrics: NewMetrics(prometheus.NewRegistry()),
			}
			reconcile := func(when string) {
				t.Helper()
				if _, err := z.Reconcile(ctx, zoneKey); err != nil {
					t.Fatalf("reconcile %s: %v", when, err)
				}
			}
			reconcile("at the start")
			var done []string
			for _, i := range order {
				if err := changes[i].do(ctx, k); err != nil {
					t.Fatalf("%s: %v", changes[i].what, err)
				}
				done = append(done, changes[i].what)
				reconcile("after " + changes[i].what)
			}
			want := compiledDump(ctx, t, z)
			err = testenv.Eventually(ctx, 10*time.Second, "the zone as the final state compiles", func(ctx context.Context) error {
				got := ownedDump(ctx, t, nbc)
				if got != want {
					reconcile("again")
					return fmt.Errorf("the zone differs from a fresh compile after %q", done)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%v\ngot:\n%s\nwant:\n%s", err, ownedDump(ctx, t, nbc), want)
			}
			// Two more: the first looks at what its predecessor wrote, the second has
			// nothing to look at.
			for i := range 2 {
				stats, _, err := z.reconcile(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if stats.Operations != 0 || i == 1 && stats.Compared != 0 {
					t.Errorf("reconcile %d of a converged zone: %+v; want no operation and, the second time, no row compared", i+1, stats)
				}
			}
		})
	}
}

// orderOf shuffles n changes, keeping change i after change after[i].
func orderOf(rng *rand.Rand, n int, after map[int]int) []int {
	for {
		order := rng.Perm(n)
		pos := make([]int, n)
		for p, i := range order {
			pos[i] = p
		}
		ok := true
		for i, j := range after {
			ok = ok && pos[i] > pos[j]
		}
		if ok {
			return order
		}
	}
}

// compiledDump compiles the zone afresh from what the controller's client holds.
func compiledDump(ctx context.Context, t *testing.T, z *Controller) string {
	t.Helper()
	in, err := z.inputs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := cluster.Build(in)
	res, err := topology.Compile(st, z.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ovn.WriteRows(&b, res.Rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// ownedDump prints the rows ovnk owns in the NB as its client sees them.
func ownedDump(ctx context.Context, t *testing.T, c libovsdb.Client) string {
	t.Helper()
	s, err := ovn.OwnedSnapshot(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ovn.WriteRows(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
