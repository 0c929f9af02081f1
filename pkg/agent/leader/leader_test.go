package leader

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// The tests below run the leader in a real controller-runtime manager, with leader
// election, against the real API server. They run one after the other (the leader acts
// on every object of the cluster) and delete their nodes and networks at the end.

// allocCluster is the objects of TestLeaderAllocates.
type allocCluster struct {
	nodes                     []string
	nsL3, nsL2, nsUDN, nsPlan string
	l3, l2                    string // CUDN names
}

func (a *allocCluster) namespaces() []string { return []string{a.nsL3, a.nsL2, a.nsUDN, a.nsPlan} }

func TestLeaderAllocates(t *testing.T) {
	e := newKubeEnv(t)
	ctx := context.Background()
	sfx := suffix()
	a := &allocCluster{
		nodes: []string{"alloc-n1-" + sfx, "alloc-n2-" + sfx, "alloc-n3-" + sfx},
		nsL3:  e.kube.Namespace(t), nsL2: e.kube.Namespace(t), nsUDN: e.kube.Namespace(t), nsPlan: e.kube.Namespace(t),
		l3: "l3-" + sfx, l2: "l2-" + sfx,
	}
	e.createNodes(t, a.nodes...)
	e.createCUDN(t, a.l3, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), a.nsL3)
	e.createCUDN(t, a.l2, l2(ovnkv1.NetworkRolePrimary, "10.200.0.0/16"), a.nsL2)
	u := udn(a.nsUDN, "net", 0, l3(ovnkv1.NetworkRolePrimary, "10.150.0.0/16", 0))
	u.CreationTimestamp, u.Generation, u.ResourceVersion = metav1.Time{}, 0, ""
	e.create(t, u)
	for _, ns := range a.namespaces() {
		for i, n := range a.nodes {
			e.create(t, testPod(ns, fmt.Sprintf("p-%d", i), n))
		}
	}
	stop := e.startLeader(t)
	outer := t // the restarted leader runs until the end of the test, not of a subtest

	eventually(t, "the Lease to have a holder", func(ctx context.Context) error {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: e.leaseNS, Name: "ovnk-leader"}}
		if err := e.get(ctx, l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("lease %s/%s has no holder", l.Namespace, l.Name)
		}
		return nil
	})
	eventually(t, "three nodes with ids, transit addresses and subnets", func(ctx context.Context) error {
		return e.checkNodes(ctx, a)
	})
	eventually(t, "the networks' ids and tunnel keys", func(ctx context.Context) error {
		return e.checkNetworks(ctx, a)
	})
	eventually(t, "every pod's addresses", func(ctx context.Context) error {
		return e.checkPods(ctx, a)
	})

	t.Run("a new leader resumes", func(t *testing.T) {
		before := e.owned(ctx, t)
		stop()
		e.startLeader(outer)
		late := "alloc-n4-" + sfx
		e.createNodes(outer, late)
		a.nodes = append(a.nodes, late)
		e.create(t, testPod(a.nsL3, "late", a.nodes[0]))
		e.create(t, testPod(a.nsL2, "late", a.nodes[1]))
		eventually(t, "the new node and pods allocated, nothing else changed", func(ctx context.Context) error {
			if err := e.checkNodes(ctx, a); err != nil {
				return err
			}
			return e.checkPods(ctx, a)
		})
		after := e.owned(ctx, t)
		for key, v := range before {
			if after[key] != v {
				t.Errorf("%s changed after the restart:\n%s\nnow\n%s", key, v, after[key])
			}
		}
		// The newcomers got the lowest values nobody held.
		var nodes corev1.NodeList
		if err := e.c.List(ctx, &nodes); err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, n := range nodes.Items {
			if id, ok, _ := cluster.NodeIDCodec.Lookup(cluster.ObjectRef{Name: n.Name}, n.Annotations); ok && n.Name != late {
				ids = append(ids, id)
			}
		}
		got, err := e.nodeAllocation(ctx, late)
		if err != nil {
			t.Fatal(err)
		}
		if want := lowestFree(alloc.MinNodeID, ids); got.id != want {
			t.Errorf("node %s got id %d, want %d, the lowest free (held: %v)", late, got.id, want, ids)
		}
	})

	t.Run("a deleted pod's addresses go to the next pod", func(t *testing.T) {
		victim, err := e.podInterfaces(ctx, a.nsL3, "p-0")
		if err != nil {
			t.Fatal(err)
		}
		e.remove(t, testPod(a.nsL3, "p-0", ""))
		e.create(t, testPod(a.nsL3, "reborn", a.nodes[0]))
		eventually(t, "the new pod's addresses", func(ctx context.Context) error {
			got, err := e.podInterfaces(ctx, a.nsL3, "reborn")
			if err != nil {
				return err
			}
			nad := a.nsL3 + "/" + a.l3
			if !slices.Equal(got["default"].IPs, victim["default"].IPs) || !slices.Equal(got[nad].IPs, victim[nad].IPs) {
				return fmt.Errorf("the new pod got %v and %v, want the deleted pod's %v and %v",
					got["default"].IPs, got[nad].IPs, victim["default"].IPs, victim[nad].IPs)
			}
			return nil
		})
	})

	t.Run("a deleted network's allocations are released", func(t *testing.T) {
		l3Net := cluster.CUDNNetworkName(a.l3)
		old := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: a.l3}}
		if err := e.get(ctx, old); err != nil {
			t.Fatal(err)
		}
		oldID, _, err := networkIDs(old)
		if err != nil {
			t.Fatal(err)
		}
		e.remove(t, old)
		eventually(t, "the network's node subnets and pod entries to be gone", func(ctx context.Context) error {
			for _, n := range a.nodes {
				got, err := e.nodeAllocation(ctx, n)
				if err != nil {
					return err
				}
				if _, has := got.subnets[l3Net]; has {
					return fmt.Errorf("node %s still has a subnet of %s: %v", n, l3Net, got.subnets)
				}
			}
			got, err := e.podInterfaces(ctx, a.nsL3, "p-1")
			if err != nil {
				return err
			}
			if _, has := got[a.nsL3+"/"+a.l3]; has || len(got) != 1 {
				return fmt.Errorf("pod %s/p-1 still has the deleted network's entry: %v", a.nsL3, slices.Collect(maps.Keys(got)))
			}
			return nil
		})
		// The next network gets the lowest free id, which the deleted one's id now is
		// unless a lower one was free already.
		var held []int
		for _, obj := range e.networkObjects(ctx, t) {
			if id, _, err := networkIDs(obj); err == nil {
				held = append(held, id)
			}
		}
		want := lowestFree(alloc.MinNetworkID, held)
		if want > oldID {
			t.Fatalf("network id %d of the deleted network is still held: %v", oldID, held)
		}
		next := "next-" + sfx
		e.createCUDN(t, next, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), a.nsPlan)
		eventually(t, "the next network's id", func(ctx context.Context) error {
			c := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: next}}
			if err := e.get(ctx, c); err != nil {
				return err
			}
			id, _, err := networkIDs(c)
			if err == nil && id != want {
				err = fmt.Errorf("network %s got id %d, want %d", next, id, want)
			}
			return err
		})
	})
}

func TestLeaderBadNetwork(t *testing.T) {
	e := newKubeEnv(t)
	sfx := suffix()
	e.createNodes(t, "bad-n1-"+sfx)
	ns := e.kube.Namespace(t)
	e.startLeader(t)

	bad, good := "bad-"+sfx, "good-"+sfx
	e.createCUDN(t, bad, l3(ovnkv1.NetworkRolePrimary, "10.244.0.0/16", 24), ns)
	wantMsg := fmt.Sprintf(`network "cluster_udn_%s" subnet 10.244.0.0/16 overlaps cluster subnet 10.244.0.0/16 of network "default"`, bad)
	eventually(t, "NetworkCreated False on the bad network", func(ctx context.Context) error {
		c := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: bad}}
		if err := e.get(ctx, c); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(c.Status.Conditions, ovnkv1.ConditionNetworkCreated)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonSubnetOverlap || !strings.Contains(cond.Message, wantMsg) {
			return fmt.Errorf("NetworkCreated is %+v", cond)
		}
		if _, has := c.Annotations[cluster.AnnotationNetworkID]; has {
			return fmt.Errorf("the bad network got an id: %v", c.Annotations)
		}
		return nil
	})
	eventually(t, "a Warning event on the bad network", func(ctx context.Context) error {
		var events eventsv1.EventList
		if err := e.c.List(ctx, &events); err != nil {
			return err
		}
		for _, ev := range events.Items {
			if ev.Regarding.Kind == "ClusterUserDefinedNetwork" && ev.Regarding.Name == bad && ev.Type == corev1.EventTypeWarning &&
				ev.Reason == ReasonSubnetOverlap && strings.Contains(ev.Note, wantMsg) && ev.ReportingController == "ovnk-leader-test" {
				return nil
			}
		}
		return fmt.Errorf("no Warning event about %s among %d events", bad, len(events.Items))
	})

	e.createCUDN(t, good, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), ns)
	eventually(t, "the good network created after the bad one", func(ctx context.Context) error {
		c := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: good}}
		if err := e.get(ctx, c); err != nil {
			return err
		}
		if _, _, err := networkIDs(c); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, ovnkv1.ConditionNetworkCreated) {
			return fmt.Errorf("NetworkCreated is %+v", meta.FindStatusCondition(c.Status.Conditions, ovnkv1.ConditionNetworkCreated))
		}
		return nil
	})
}

// TestLeaderOVNNameCollision creates, through the real API server, two cluster networks
// whose names OVN writes alike (col-<sfx> and col.<sfx>): the older keeps its id and
// NetworkCreated True, the newer gets no id, NetworkCreated False with the reason and
// NetworkReady False, whatever created it.
func TestLeaderOVNNameCollision(t *testing.T) {
	e := newKubeEnv(t)
	sfx := suffix()
	e.createNodes(t, "col-n1-"+sfx)
	ns := e.kube.Namespace(t)
	e.startLeader(t)

	dash, dot := "col-"+sfx, "col."+sfx
	e.createCUDN(t, dash, l3(ovnkv1.NetworkRoleSecondary, "10.100.0.0/16", 24), ns)
	var dashID int
	eventually(t, "the first network created", func(ctx context.Context) error {
		c := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: dash}}
		if err := e.get(ctx, c); err != nil {
			return err
		}
		var err error
		dashID, _, err = networkIDs(c)
		return err
	})
	e.createCUDN(t, dot, l2(ovnkv1.NetworkRoleSecondary, "10.101.0.0/16"), ns)
	wantMsg := fmt.Sprintf(`network "cluster_udn_col.%s" has the OVN name "cluster_udn_col.%s" of network "cluster_udn_col-%s"`, sfx, sfx, sfx)
	eventually(t, "the second network refused, the first kept", func(ctx context.Context) error {
		c := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: dot}}
		if err := e.get(ctx, c); err != nil {
			return err
		}
		created := meta.FindStatusCondition(c.Status.Conditions, ovnkv1.ConditionNetworkCreated)
		if created == nil || created.Status != metav1.ConditionFalse || created.Reason != ReasonOVNNameConflict || !strings.Contains(created.Message, wantMsg) {
			return fmt.Errorf("NetworkCreated of %s is %+v", dot, created)
		}
		ready := meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionNetworkReady)
		if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != ReasonNotCreated {
			return fmt.Errorf("NetworkReady of %s is %+v", dot, ready)
		}
		if _, has := c.Annotations[cluster.AnnotationNetworkID]; has {
			return fmt.Errorf("the refused network got an id: %v", c.Annotations)
		}
		first := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: dash}}
		if err := e.get(ctx, first); err != nil {
			return err
		}
		if id, _, err := networkIDs(first); err != nil || id != dashID {
			return fmt.Errorf("the first network has id %d (%v), want %d", id, err, dashID)
		}
		if !meta.IsStatusConditionTrue(first.Status.Conditions, ovnkv1.ConditionNetworkCreated) {
			return fmt.Errorf("NetworkCreated of %s is %+v", dash, meta.FindStatusCondition(first.Status.Conditions, ovnkv1.ConditionNetworkCreated))
		}
		return nil
	})
}

func TestLeaderNetworkReady(t *testing.T) {
	e := newKubeEnv(t)
	ctx := context.Background()
	sfx := suffix()
	n1, n2 := "ready-n1-"+sfx, "ready-n2-"+sfx
	e.createNodes(t, n1, n2)
	ns := e.kube.Namespace(t)
	name := "ready-" + sfx
	network := cluster.CUDNNetworkName(name)
	e.createCUDN(t, name, l2(ovnkv1.NetworkRolePrimary, "10.30.0.0/16"), ns)
	e.startLeader(t)

	waitConditions := func(what string, want ...string) {
		t.Helper()
		eventually(t, what, func(ctx context.Context) error {
			c := &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if err := e.get(ctx, c); err != nil {
				return err
			}
			var got []string
			for _, cond := range c.Status.Conditions {
				got = append(got, fmt.Sprintf("%s %s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message))
			}
			for _, w := range want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
					return fmt.Errorf("conditions %q, want one starting %q", got, w)
				}
			}
			return nil
		})
	}
	waitConditions("the network created, not ready",
		"NetworkCreated True Allocated: network id",
		fmt.Sprintf("NetworkReady False Pending: ready on 0/2 nodes; node %s: no zone report yet; node %s: no zone report yet", n1, n2),
		"TransportAccepted True GeneveTransportAccepted: Geneve transport has been configured.")

	report := func(node, value string) {
		t.Helper()
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, cluster.AnnotationZoneStatus, value)
		if err := e.c.Patch(ctx, n, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	report(n1, fmt.Sprintf(`{%q:""}`, network))
	report(n2, fmt.Sprintf(`{%q:"no k8s.ovn.org/l3-gateway-config yet"}`, network))
	waitConditions("one node ready",
		fmt.Sprintf("NetworkReady False Pending: ready on 1/2 nodes; node %s: no k8s.ovn.org/l3-gateway-config yet", n2))
	report(n2, fmt.Sprintf(`{%q:"","default":""}`, network))
	waitConditions("both nodes ready", "NetworkReady True Programmed: ready on 2/2 nodes")
}
