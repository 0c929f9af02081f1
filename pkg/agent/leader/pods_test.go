package leader

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestPlanPodsWait checks the pods that get no addresses (yet), and that the others do.
func TestPlanPodsWait(t *testing.T) {
	hostNet := pod("plain", "host", "n1")
	hostNet.Spec.HostNetwork = true
	done := pod("plain", "done", "n1")
	done.Status.Phase = corev1.PodFailed
	s := &snapshot{
		nodes: []*corev1.Node{node("n1")},
		namespaces: []corev1.Namespace{
			namespace("bad", nil), namespace("plain", nil),
			namespace("required", map[string]string{cluster.LabelPrimaryUDN: ""}),
		},
		// bad's primary network overlaps the cluster subnet: its pods must not fall
		// back to the default network as their primary.
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{cudn("bad", 1, l3(ovnkv1.NetworkRolePrimary, "10.244.0.0/16", 24), "bad")},
		pods: []*corev1.Pod{
			pod("bad", "p", "n1"),
			done,
			hostNet,
			pod("plain", "lost", "gone"), // on a node that does not exist
			pod("plain", "ok", "n1"),
			pod("plain", "unscheduled", ""),
			pod("required", "p", "n1"), // its namespace needs a primary network, and has none
			// The namespace informer lags behind the pods': its labels may ask for a
			// primary network (the event-order test found it wired on the default).
			pod("unseen", "p", "n1"),
		},
	}
	pl := converge(t, newTestPlanner(t), s)
	if len(pl.warnings) > 0 {
		t.Errorf("warnings: %+v", pl.warnings)
	}
	for _, p := range s.pods {
		_, has := p.Annotations[cluster.AnnotationPodNetworks]
		if want := p.Name == "ok"; has != want {
			t.Errorf("pod %s/%s: has pod-networks %v, want %v", p.Namespace, p.Name, has, want)
		}
	}
}

// TestPlanPodAddressesExhausted: a pod that finds no address gets a Warning and no
// annotation; the others keep theirs, and it gets one once an address is free.
func TestPlanPodAddressesExhausted(t *testing.T) {
	settings := testSettings()
	settings.DefaultNetwork.Subnets = []cluster.Subnet{{CIDR: pfx("10.244.0.0/16"), HostSubnet: 29}} // .3 to .6
	p, err := newPlanner(settings)
	if err != nil {
		t.Fatal(err)
	}
	s := &snapshot{nodes: []*corev1.Node{node("n1")}, namespaces: []corev1.Namespace{namespace("ns", nil)}}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		s.pods = append(s.pods, pod("ns", name, "n1"))
	}
	pl := converge(t, p, s)
	if len(pl.warnings) != 1 || describe(pl.warnings[0].obj) != "pod/ns/e" ||
		!strings.Contains(pl.warnings[0].message, `no free address in 10.244.0.0/29 for "ns/e (uid uid-e)": all 4 addresses pods may use are taken`) {
		t.Fatalf("warnings %+v, want one about pod ns/e", pl.warnings)
	}
	if _, has := s.pods[4].Annotations[cluster.AnnotationPodNetworks]; has {
		t.Fatalf("pod e got addresses")
	}
	s.pods = s.pods[1:] // a is deleted
	if pl := converge(t, p, s); len(pl.warnings) > 0 {
		t.Fatalf("warnings after a was deleted: %+v", pl.warnings)
	}
	if got := podIPs(t, s.pods[3], "default"); len(got) != 1 || got[0] != "10.244.0.3/29" {
		t.Fatalf("pod e got %v, want a's 10.244.0.3/29", got)
	}
}

// TestPlanNodeSubnetsExhausted: the default network's subnets run out; the node without
// one gets a Warning and its pods wait.
func TestPlanNodeSubnetsExhausted(t *testing.T) {
	settings := testSettings()
	settings.DefaultNetwork.Subnets = []cluster.Subnet{{CIDR: pfx("10.244.0.0/23"), HostSubnet: 24}}
	p, err := newPlanner(settings)
	if err != nil {
		t.Fatal(err)
	}
	s := &snapshot{
		nodes:      []*corev1.Node{node("n1"), node("n2"), node("n3")},
		namespaces: []corev1.Namespace{namespace("ns", nil)},
		pods:       []*corev1.Pod{pod("ns", "on-n1", "n1"), pod("ns", "on-n3", "n3")},
	}
	pl := converge(t, p, s)
	if len(pl.warnings) != 1 || describe(pl.warnings[0].obj) != "node/n3" || pl.warnings[0].reason != ReasonSubnetsExhausted {
		t.Fatalf("warnings %+v, want SubnetsExhausted on node n3", pl.warnings)
	}
	if got := s.nodes[2].Annotations[cluster.AnnotationNodeID]; got != "4" {
		t.Errorf("n3 has id %q, want 4: an exhausted subnet does not stop the id", got)
	}
	if _, has := s.pods[0].Annotations[cluster.AnnotationPodNetworks]; !has {
		t.Errorf("the pod on n1 got no addresses")
	}
	if _, has := s.pods[1].Annotations[cluster.AnnotationPodNetworks]; has {
		t.Errorf("the pod on n3 got addresses without a node subnet")
	}
}

// TestPlanWiredPodsKeepUncheckableEntries: an entry whose network exists but cannot be
// checked (its spec became invalid: here its name collides) is kept as it is; one whose
// network no longer serves the pod's namespace is dropped.
func TestPlanWiredPodsKeepUncheckableEntries(t *testing.T) {
	s := clusterSnapshot()
	p := newTestPlanner(t)
	converge(t, p, s)
	blue := findPod(t, s, "blue", "p-n1").Annotations[cluster.AnnotationPodNetworks]
	green := findPod(t, s, "green", "p-n1").Annotations[cluster.AnnotationPodNetworks]

	s.udns = append(s.udns, udn("cluster", "udn_blue", 9, l2(ovnkv1.NetworkRoleSecondary, "10.99.0.0/24")))
	s.namespaces = append(s.namespaces, namespace("cluster", nil))
	sortNetworks(s)
	s.cudns[1].Spec.NamespaceSelector.MatchExpressions[0].Values = []string{"elsewhere"} // green
	converge(t, p, s)
	if got := findPod(t, s, "blue", "p-n1").Annotations[cluster.AnnotationPodNetworks]; got != blue {
		t.Errorf("the entry of a network whose name now collides changed:\n%s\nwant\n%s", got, blue)
	}
	if got := findPod(t, s, "green", "p-n1").Annotations[cluster.AnnotationPodNetworks]; got == green || strings.Contains(got, "green/green") {
		t.Errorf("the entry of a network that no longer serves the namespace was kept: %s", got)
	}
}
