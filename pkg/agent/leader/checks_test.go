package leader

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Checks of what the leader wrote in the API server, for TestLeaderAllocates.

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
