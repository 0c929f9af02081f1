package leader

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
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

// checkNodes checks that every node has an id of its own, the transit addresses derived
// from it, and subnets that overlap no other node's.
func (e *kubeEnv) checkNodes(ctx context.Context, a *allocCluster) error {
	ids := map[int]string{}
	var subnets []netip.Prefix
	for _, n := range a.nodes {
		got, err := e.nodeAllocation(ctx, n)
		if err != nil {
			return err
		}
		if other, dup := ids[got.id]; dup || got.id < alloc.MinNodeID {
			return fmt.Errorf("node %s has id %d (also %q's)", n, got.id, other)
		}
		ids[got.id] = n
		v4, _ := alloc.TransitSwitchIP(pfx("100.88.0.0/16"), got.id)
		v6, _ := alloc.TransitSwitchIP(pfx("fd97::/64"), got.id)
		if !slices.Equal(got.transit, []netip.Prefix{v4, v6}) {
			return fmt.Errorf("node %s with id %d has transit addresses %v, want %s and %s", n, got.id, got.transit, v4, v6)
		}
		for _, network := range []string{cluster.DefaultNetworkName, cluster.CUDNNetworkName(a.l3), cluster.UDNNetworkName(a.nsUDN, "net")} {
			want := 1
			if network == cluster.DefaultNetworkName {
				want = 2
			}
			if len(got.subnets[network]) != want {
				return fmt.Errorf("node %s has subnets %v, want %d in network %s", n, got.subnets, want, network)
			}
			for _, s := range got.subnets[network] {
				for _, o := range subnets {
					if s.Overlaps(o) {
						return fmt.Errorf("node %s's subnet %s overlaps %s of another node", n, s, o)
					}
				}
				subnets = append(subnets, s)
			}
		}
	}
	return nil
}

// checkNetworks checks the networks' ids and keys, and their NetworkCreated condition.
func (e *kubeEnv) checkNetworks(ctx context.Context, a *allocCluster) error {
	objs := []client.Object{
		&ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: a.l3}},
		&ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: a.l2}},
		&ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: a.nsUDN, Name: "net"}},
	}
	seen := map[int]bool{}
	for i, obj := range objs {
		if err := e.get(ctx, obj); err != nil {
			return err
		}
		id, keys, err := networkIDs(obj)
		if err != nil {
			return err
		}
		legacy, _ := alloc.TransitSwitchTunnelKey(id)
		want := []int{legacy}
		if i == 1 { // primary Layer2: the switch's key, then the transit router's
			if len(keys) != 2 || keys[1] < alloc.FirstAllocatedTunnelKey {
				return fmt.Errorf("%s has tunnel keys %v, want [%d, an allocated key]", describe(obj), keys, legacy)
			}
			want = append(want, keys[1])
		}
		if seen[id] || !slices.Equal(keys, want) {
			return fmt.Errorf("%s has id %d (seen before: %v) and keys %v, want %v", describe(obj), id, seen[id], keys, want)
		}
		seen[id] = true
		if c := meta.FindStatusCondition(conditionsOf(obj), ovnkv1.ConditionNetworkCreated); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != obj.GetGeneration() {
			return fmt.Errorf("%s has NetworkCreated %+v", describe(obj), c)
		}
	}
	return nil
}

// checkPods checks every pod's entries: addresses in its node's subnet (or the Layer2
// network's), MACs derived from them, tunnel ids on Layer2, and no address twice.
func (e *kubeEnv) checkPods(ctx context.Context, a *allocCluster) error {
	nodeSubnets := map[string]map[string][]netip.Prefix{}
	for _, n := range a.nodes {
		got, err := e.nodeAllocation(ctx, n)
		if err != nil {
			return err
		}
		nodeSubnets[n] = got.subnets
	}
	addrs := map[netip.Addr]string{}
	tunnelIDs := map[int]string{}
	for _, ns := range a.namespaces() {
		var pods corev1.PodList
		if err := e.c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, p := range pods.Items {
			ifaces, err := e.podInterfaces(ctx, ns, p.Name)
			if err != nil {
				return err
			}
			primaryNAD, primaryNet, pool := "", "", []netip.Prefix(nil)
			switch ns {
			case a.nsL3:
				primaryNAD, primaryNet = ns+"/"+a.l3, cluster.CUDNNetworkName(a.l3)
			case a.nsL2:
				primaryNAD, pool = ns+"/"+a.l2, []netip.Prefix{pfx("10.200.0.0/16")}
			case a.nsUDN:
				primaryNAD, primaryNet = ns+"/net", cluster.UDNNetworkName(ns, "net")
			}
			check := []struct {
				nad, role string
				subnets   []netip.Prefix
			}{{"default", cluster.PodRolePrimary, nodeSubnets[p.Spec.NodeName][cluster.DefaultNetworkName]}}
			if primaryNAD != "" {
				check[0].role = cluster.PodRoleInfrastructureLocked
				if pool == nil {
					pool = nodeSubnets[p.Spec.NodeName][primaryNet]
				}
				check = append(check, struct {
					nad, role string
					subnets   []netip.Prefix
				}{primaryNAD, cluster.PodRolePrimary, pool})
			}
			if len(ifaces) != len(check) {
				return fmt.Errorf("pod %s/%s has entries %v, want %d", ns, p.Name, slices.Collect(maps.Keys(ifaces)), len(check))
			}
			for _, c := range check {
				iface, ok := ifaces[c.nad]
				if !ok || iface.Role != c.role || len(iface.IPs) != len(c.subnets) {
					return fmt.Errorf("pod %s/%s entry %q is %+v, want role %s and addresses in %v", ns, p.Name, c.nad, iface, c.role, c.subnets)
				}
				for i, ip := range iface.IPs {
					if ip.Masked() != c.subnets[i] {
						return fmt.Errorf("pod %s/%s address %s is not in %s", ns, p.Name, ip, c.subnets[i])
					}
					if other, dup := addrs[ip.Addr()]; dup {
						return fmt.Errorf("pod %s/%s has address %s, as does %s", ns, p.Name, ip.Addr(), other)
					}
					addrs[ip.Addr()] = ns + "/" + p.Name
				}
				if mac := alloc.MACFromIP(iface.IPs[0].Addr()).String(); iface.MAC != mac {
					return fmt.Errorf("pod %s/%s has MAC %s, want %s derived from %s", ns, p.Name, iface.MAC, mac, iface.IPs[0])
				}
				if ns == a.nsL2 && c.nad != "default" {
					if other, dup := tunnelIDs[iface.TunnelID]; dup || iface.TunnelID < minPodTunnelID || iface.TunnelID > maxPodTunnelID {
						return fmt.Errorf("pod %s/%s has tunnel id %d (also %q's)", ns, p.Name, iface.TunnelID, other)
					}
					tunnelIDs[iface.TunnelID] = p.Name
				}
			}
		}
	}
	return nil
}

// owned returns the leader's annotations of every node, network and pod, by object.
func (e *kubeEnv) owned(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	var nodes corev1.NodeList
	var pods corev1.PodList
	for _, l := range []client.ObjectList{&nodes, &pods} {
		if err := e.c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	s := &snapshot{}
	for i := range nodes.Items {
		s.nodes = append(s.nodes, &nodes.Items[i])
	}
	for i := range pods.Items {
		s.pods = append(s.pods, &pods.Items[i])
	}
	for _, obj := range e.networkObjects(ctx, t) {
		switch o := obj.(type) {
		case *ovnkv1.ClusterUserDefinedNetwork:
			s.cudns = append(s.cudns, o)
		case *ovnkv1.UserDefinedNetwork:
			s.udns = append(s.udns, o)
		}
	}
	out := map[string]string{}
	for _, line := range strings.Split(leaderAnnotations(s), "\n") {
		key, _, _ := strings.Cut(line, " ")
		out[key] = line
	}
	return out
}

// networkObjects lists every CUDN and UDN.
func (e *kubeEnv) networkObjects(ctx context.Context, t *testing.T) []client.Object {
	t.Helper()
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	var udns ovnkv1.UserDefinedNetworkList
	if err := e.c.List(ctx, &cudns); err != nil {
		t.Fatal(err)
	}
	if err := e.c.List(ctx, &udns); err != nil {
		t.Fatal(err)
	}
	var out []client.Object
	for i := range cudns.Items {
		out = append(out, &cudns.Items[i])
	}
	for i := range udns.Items {
		out = append(out, &udns.Items[i])
	}
	return out
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
