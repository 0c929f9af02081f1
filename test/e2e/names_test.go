package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestOVNNameCollisionThroughKubectl creates network col-a through the real kubectl and
// traces a packet between two of its pods; then `kubectl ovnk network create col.a`,
// whose OVN name is col-a's, is refused, and the same network created without the
// plugin is reported NotReady by the leader with the reason, left out of every zone,
// and col-a's pods still reach each other by the same path.
func TestOVNNameCollisionThroughKubectl(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n1, n2 := ec.nodes[0].name, ec.nodes[1].name
	ec.create(ctx,
		namespace("col-a-ns", map[string]string{"tenant": "col-a-ns"}),
		namespace("col-b-ns", map[string]string{"tenant": "col-b-ns"}),
	)
	ec.must(ctx, "network", "create", "col-a", "--cluster", "--namespaces", "col-a-ns", "--topology", "layer3", "--subnet", "10.90.0.0/16")
	ec.create(ctx, pod("col-a-ns", "a", n1), pod("col-a-ns", "b", n2))
	ec.podIface(ctx, "col-a-ns", "a", "col-a-ns/col-a")
	ec.podIface(ctx, "col-a-ns", "b", "col-a-ns/col-a")
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_col-a"))

	delivered := func(when string) []trace.Hop {
		t.Helper()
		res := ec.traceJSON(ctx, "col-a-ns/a", "col-a-ns/b")
		if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != "col-a-ns/b" || v.Zone != n2 {
			t.Fatalf("%s: verdict %+v, want delivered to col-a-ns/b in %s's zone", when, v, n2)
		}
		return res.Forward.Hops
	}
	before := delivered("before col.a")

	ec.refused(ctx, nil, `NAME col.a: OVN would name it cluster_udn_col.a, as it names ClusterUserDefinedNetwork col-a (OVN names write "-" as "."), and the two would share their OVN rows: choose another NAME`,
		"network", "create", "col.a", "--cluster", "--namespaces", "col-b-ns", "--topology", "layer2", "--subnet", "10.91.0.0/24")

	// As kubectl apply would create it.
	ec.create(ctx, layer2CUDN("col.a", "col-b-ns", "10.91.0.0/24"))
	err := testenv.Eventually(ctx, 60*time.Second, "col.a refused by the leader", func(ctx context.Context) error {
		var c ovnkv1.ClusterUserDefinedNetwork
		if err := ec.c.Get(ctx, types.NamespacedName{Name: "col.a"}, &c); err != nil {
			return err
		}
		created := meta.FindStatusCondition(c.Status.Conditions, ovnkv1.ConditionNetworkCreated)
		ready := meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionNetworkReady)
		if created == nil || created.Status != metav1.ConditionFalse || created.Reason != "OVNNameConflict" ||
			ready == nil || ready.Status != metav1.ConditionFalse {
			return fmt.Errorf("NetworkCreated %+v, NetworkReady %+v", created, ready)
		}
		if _, has := c.Annotations[cluster.AnnotationNetworkID]; has {
			return fmt.Errorf("col.a got a network id: %v", c.Annotations)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_col-a"))
	after := delivered("after col.a")
	if len(after) != len(before) {
		t.Errorf("the path changed: %d hops before col.a, %d after", len(before), len(after))
	}
	for i := range min(len(before), len(after)) {
		if before[i].Datapath != after[i].Datapath || before[i].Zone != after[i].Zone {
			t.Errorf("hop %d: %s in %s before col.a, %s in %s after", i, before[i].Datapath, before[i].Zone, after[i].Datapath, after[i].Zone)
		}
	}
}
