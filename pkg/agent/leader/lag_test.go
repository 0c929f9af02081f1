package leader

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Two histories the event-order test found, each replayed step by step: what the
// leader must do while its cache lags behind the API server.

// only delivers the events of one kind.
func only(kind string) func(string) bool {
	return func(k string) bool { return k == kind }
}

// readyCluster is n1 and n2, both reporting cluster_udn_blue programmed, namespace blue
// and the CUDN blue, settled: blue is created and ready on 2/2 nodes.
func readyCluster(ctx context.Context, t *testing.T) (*fakeAPI, *testLeader) {
	t.Helper()
	api := newFakeAPI(t)
	ns := namespace("blue", nil)
	objs := []client.Object{&ns, asNew(cudn("blue", 0, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue"))}
	for _, name := range []string{"n1", "n2"} {
		n := asNew(node(name))
		n.Annotations = map[string]string{cluster.AnnotationZoneStatus: `{"cluster_udn_blue":""}`}
		objs = append(objs, n)
	}
	for _, obj := range objs {
		if err := api.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	l := newTestLeader(t, api, &eventLog{})
	if err := l.settle(ctx, deliverAll); err != nil {
		t.Fatal(err)
	}
	if got := networkReady(ctx, t, api, "blue"); got != "True Programmed: ready on 2/2 nodes" {
		t.Fatalf("fixture: NetworkReady %s", got)
	}
	return api, l
}

// networkReady reads a CUDN's NetworkReady condition from the API server.
func networkReady(ctx context.Context, t *testing.T, api *fakeAPI, name string) string {
	t.Helper()
	c := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := api.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionNetworkReady)
	if cond == nil {
		return "missing"
	}
	return fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
}

// TestLeaderDropsWritesForAReplacedObject: a pass planned from a cache that still
// shows an object the API server has since deleted and created again under its name
// (a network, a pod) must not write what it planned for the old one onto the new one.
// The writer used to retry the conflict on the object it read afresh, whatever it was:
// the new network showed NetworkCreated True with an id it did not have.
func TestLeaderDropsWritesForAReplacedObject(t *testing.T) {
	ctx := context.Background()
	api, l := readyCluster(ctx, t)
	old := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := api.Get(ctx, client.ObjectKey{Name: "blue"}, old); err != nil {
		t.Fatal(err)
	}
	if err := api.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := api.Create(ctx, asNew(cudn("blue", 0, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue"))); err != nil {
		t.Fatal(err)
	}
	// The nodes' informer tells of a third node; the networks' one does not know yet
	// that blue was replaced. The pass plans blue's conditions for the old blue.
	n3 := asNew(node("n3"))
	if err := api.Create(ctx, n3); err != nil {
		t.Fatal(err)
	}
	writes := api.writes
	if err := l.round(ctx, only("Node")); err != nil {
		t.Fatal(err)
	}
	if api.writes == writes {
		t.Fatal("the pass wrote nothing: the history no longer replays what it should")
	}
	c := &ovnkv1.ClusterUserDefinedNetwork{}
	if err := api.Get(ctx, client.ObjectKey{Name: "blue"}, c); err != nil {
		t.Fatal(err)
	}
	if c.UID == old.UID {
		t.Fatal("fixture: blue was not replaced")
	}
	if len(c.Annotations) > 0 || len(c.Status.Conditions) > 0 {
		t.Errorf("the new blue got what the pass planned for the old one: annotations %v, conditions %+v", c.Annotations, c.Status.Conditions)
	}
	// Once the cache shows the new blue, it gets its own.
	if err := l.settle(ctx, deliverAll); err != nil {
		t.Fatal(err)
	}
	if err := api.Get(ctx, client.ObjectKey{Name: "blue"}, c); err != nil {
		t.Fatal(err)
	}
	if c.Annotations[cluster.AnnotationNetworkID] == "" || !meta.IsStatusConditionTrue(c.Status.Conditions, ovnkv1.ConditionNetworkCreated) {
		t.Errorf("the new blue is not created: annotations %v, conditions %+v", c.Annotations, c.Status.Conditions)
	}
}

// TestLeaderStatusAfterItsOwnLateWrite: a node joins, the leader writes NetworkReady
// "ready on 2/3 nodes; node n3: …", and the node leaves before the networks' informer
// shows that write. The next pass compares the conditions it wants ("2/2") with those
// the cache shows (still "2/2", from before its own write) and writes nothing; the
// update event of its own write then arrives, and the watch's predicate must pass that
// status change, or no pass would follow and the network would keep naming a node that
// is gone until something else changed.
func TestLeaderStatusAfterItsOwnLateWrite(t *testing.T) {
	ctx := context.Background()
	api, l := readyCluster(ctx, t)
	if err := api.Create(ctx, asNew(node("n3"))); err != nil {
		t.Fatal(err)
	}
	if err := l.round(ctx, only("Node")); err != nil {
		t.Fatal(err)
	}
	if got := networkReady(ctx, t, api, "blue"); !strings.Contains(got, "ready on 2/3 nodes; node n3: no zone report yet") {
		t.Fatalf("with n3: NetworkReady %s", got)
	}
	if err := api.Delete(ctx, emptyLike(node("n3"))); err != nil {
		t.Fatal(err)
	}
	if err := l.round(ctx, only("Node")); err != nil {
		t.Fatal(err)
	}
	if err := l.settle(ctx, deliverAll); err != nil {
		t.Fatal(err)
	}
	if got := networkReady(ctx, t, api, "blue"); got != "True Programmed: ready on 2/2 nodes" {
		t.Errorf("after n3 left: NetworkReady %s", got)
	}
}
