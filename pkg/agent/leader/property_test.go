package leader

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestPlanRandomHistories replays the objects of clusterSnapshot appearing in random
// orders, with one pass after each, while the leader fails over at random moments and
// some writes are lost on the way (as when the cache lags behind). Whatever the
// history: a value, once persisted, never changes; no two owners share one; and the
// cluster ends fully allocated.
func TestPlanRandomHistories(t *testing.T) {
	for seed := range uint64(50) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			full := clusterSnapshot()
			var arrivals []func(s *snapshot)
			for _, n := range full.nodes {
				arrivals = append(arrivals, func(s *snapshot) { s.nodes = append(s.nodes, n) })
			}
			for _, c := range full.cudns {
				arrivals = append(arrivals, func(s *snapshot) { s.cudns = append(s.cudns, c) })
			}
			for _, u := range full.udns {
				arrivals = append(arrivals, func(s *snapshot) { s.udns = append(s.udns, u) })
			}
			for _, p := range full.pods {
				arrivals = append(arrivals, func(s *snapshot) { s.pods = append(s.pods, p) })
			}
			r.Shuffle(len(arrivals), func(i, j int) { arrivals[i], arrivals[j] = arrivals[j], arrivals[i] })

			s := &snapshot{namespaces: full.namespaces}
			p := newTestPlanner(t)
			seen := map[string]string{}
			for _, arrive := range arrivals {
				arrive(s)
				sortSnapshot(s)
				if r.IntN(5) == 0 {
					p = newTestPlanner(t) // a fail-over
				}
				pl := p.plan(s)
				if r.IntN(4) != 0 { // else the writes are lost
					s.apply(pl)
				}
				checkStable(t, s, seen)
			}
			converge(t, p, s)
			checkStable(t, s, seen)
			checkUnique(t, s)
			for _, pod := range s.pods {
				if _, ok := pod.Annotations[cluster.AnnotationPodNetworks]; !ok {
					t.Errorf("pod %s/%s has no addresses", pod.Namespace, pod.Name)
				}
			}
		})
	}
}

func sortSnapshot(s *snapshot) {
	sortPods(s)
	sortNetworks(s)
	slices.SortFunc(s.nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
}

// allocation is one allocated value: its kind and value (what must be unique), and who
// holds it.
type allocation struct {
	what, value, holder string
}

// allocations lists every value the leader persisted in s.
func allocations(t *testing.T, s *snapshot) []allocation {
	t.Helper()
	var out []allocation
	for _, n := range s.nodes {
		if v, ok := n.Annotations[cluster.AnnotationNodeID]; ok {
			out = append(out, allocation{"node id", v, describe(n)})
		}
		subnets, _, err := cluster.NodeSubnetsCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		if err != nil {
			t.Fatal(err)
		}
		for network, prefixes := range subnets {
			out = append(out, allocation{network + " subnets", fmt.Sprint(prefixes), describe(n)})
		}
	}
	for _, obj := range s.objects() {
		for _, key := range []string{cluster.AnnotationNetworkID, cluster.AnnotationTunnelKeys} {
			if v, ok := obj.GetAnnotations()[key]; ok {
				out = append(out, allocation{key, v, describe(obj)})
			}
		}
	}
	for _, pod := range s.pods {
		ifaces, _, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod", Name: pod.Name}, pod.Annotations)
		if err != nil {
			t.Fatal(err)
		}
		for nad, iface := range ifaces {
			for _, ip := range iface.IPs {
				out = append(out, allocation{nad + " address", ip.Addr().String(), describe(pod)})
			}
			if iface.TunnelID != 0 {
				out = append(out, allocation{nad + " tunnel id", fmt.Sprint(iface.TunnelID), describe(pod)})
			}
		}
	}
	return out
}

// checkStable fails when a value persisted before has changed, and records new ones.
func checkStable(t *testing.T, s *snapshot, seen map[string]string) {
	t.Helper()
	now := map[string]string{}
	for _, a := range allocations(t, s) {
		key := a.holder + " " + a.what
		now[key] += a.value + " "
	}
	for key, v := range now {
		if old, ok := seen[key]; ok && old != v {
			t.Fatalf("%s changed from %s to %s", key, old, v)
		}
		seen[key] = v
	}
}

// checkUnique fails when two owners hold one value. Addresses are unique across
// networks too: every network of clusterSnapshot has subnets of its own.
func checkUnique(t *testing.T, s *snapshot) {
	t.Helper()
	holder := map[string]string{}
	for _, a := range allocations(t, s) {
		what := a.what
		if strings.HasSuffix(what, " address") {
			what = "address"
		}
		if what == cluster.AnnotationTunnelKeys {
			continue // a list; its derived key is unique when the network id is
		}
		key := what + " " + a.value
		if other, dup := holder[key]; dup {
			t.Errorf("%s is held by %s and %s", key, other, a.holder)
		}
		holder[key] = a.holder
	}
}
