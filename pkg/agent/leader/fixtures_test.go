package leader

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/golden"
)

// Fixtures for the planner's tests: objects as the cache would hold them, and a tiny
// stand-in for the API server that applies a plan's writes to them.

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// testSettings is a dual-stack default network and the usual reserved ranges.
func testSettings() Settings {
	return Settings{
		DefaultNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{
			{CIDR: pfx("10.244.0.0/16"), HostSubnet: 24},
			{CIDR: pfx("fd00:10:244::/48"), HostSubnet: 64},
		}},
		Cluster: cluster.Config{
			ServiceSubnets:    []netip.Prefix{pfx("10.96.0.0/16")},
			MasqueradeSubnets: []netip.Prefix{pfx("169.254.0.0/17")},
		},
	}
}

func newTestPlanner(t *testing.T) *planner {
	t.Helper()
	p, err := newPlanner(testSettings())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// created is the creation time of test objects: the i-th object is i minutes later.
func created(i int) metav1.Time {
	return metav1.NewTime(time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC))
}

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}}
}

func namespace(name string, labels map[string]string) corev1.Namespace {
	l := map[string]string{"kubernetes.io/metadata.name": name}
	maps.Copy(l, labels)
	return corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

func pod(ns, name, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec:       corev1.PodSpec{NodeName: nodeName},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func l3(role ovnkv1.NetworkRole, cidr ovnkv1.CIDR, hostSubnet int32) ovnkv1.NetworkSpec {
	return ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3,
		Layer3: &ovnkv1.Layer3Config{Role: role, Subnets: []ovnkv1.Layer3Subnet{{CIDR: cidr, HostSubnet: hostSubnet}}}}
}

func l2(role ovnkv1.NetworkRole, cidrs ...ovnkv1.CIDR) ovnkv1.NetworkSpec {
	return ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{Role: role, Subnets: cidrs}}
}

// cudn selects the namespaces by name.
func cudn(name string, age int, spec ovnkv1.NetworkSpec, namespaces ...string) *ovnkv1.ClusterUserDefinedNetwork {
	return &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1, CreationTimestamp: created(age), ResourceVersion: "1"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces}}},
			Network: spec,
		},
	}
}

func udn(ns, name string, age int, spec ovnkv1.NetworkSpec) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1, CreationTimestamp: created(age), ResourceVersion: "1"},
		Spec:       ovnkv1.UserDefinedNetworkSpec{Topology: spec.Topology, Layer3: spec.Layer3, Layer2: spec.Layer2},
	}
}

// objects returns every object of the snapshot, in a fixed order.
func (s *snapshot) objects() []client.Object {
	var out []client.Object
	for _, n := range s.nodes {
		out = append(out, n)
	}
	for _, c := range s.cudns {
		out = append(out, c)
	}
	for _, u := range s.udns {
		out = append(out, u)
	}
	for _, p := range s.pods {
		out = append(out, p)
	}
	for _, c := range s.cncs {
		out = append(out, c)
	}
	return out
}

// apply writes a plan to the snapshot's objects, as the API server would.
func (s *snapshot) apply(pl *plan) {
	for _, w := range pl.annotations {
		a := maps.Clone(w.obj.GetAnnotations())
		if a == nil {
			a = map[string]string{}
		}
		for k, v := range w.changes {
			if v == nil {
				delete(a, k)
			} else {
				a[k] = *v
			}
		}
		w.obj.SetAnnotations(a)
	}
	for _, st := range pl.statuses {
		var conds *[]metav1.Condition
		switch o := st.obj.(type) {
		case *ovnkv1.ClusterUserDefinedNetwork:
			conds = &o.Status.Conditions
		case *ovnkv1.UserDefinedNetwork:
			conds = &o.Status.Conditions
		case *ovnkv1.ClusterNetworkConnect:
			conds = &o.Status.Conditions
			o.Status.Status = st.connectStatus
		}
		for _, c := range st.conditions {
			meta.SetStatusCondition(conds, c)
		}
	}
}

// converge plans and applies passes until one writes nothing, and returns the last
// pass's plan (its warnings, and no writes).
func converge(t *testing.T, p *planner, s *snapshot) *plan {
	t.Helper()
	for range 10 {
		pl := p.plan(s)
		if len(pl.annotations) == 0 && len(pl.statuses) == 0 {
			return pl
		}
		s.apply(pl)
	}
	t.Fatalf("no fixed point after 10 passes")
	return nil
}

// leaderAnnotations lists the annotations the leader owns, one object per line:
// kind/name key=value ..., sorted by key.
func leaderAnnotations(s *snapshot) string {
	owned := []string{cluster.AnnotationNodeID, cluster.AnnotationNodeTransitSwitchPortIfAddr, cluster.AnnotationNodeSubnets,
		cluster.AnnotationNetworkID, cluster.AnnotationTunnelKeys, cluster.AnnotationPodNetworks,
		cluster.AnnotationConnectSubnets, cluster.AnnotationConnectRouterTunnelKey, cluster.AnnotationLayer2GatewayTunnelIDs}
	var lines []string
	for _, obj := range s.objects() {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(obj.GetAnnotations())) {
			if slices.Contains(owned, k) {
				parts = append(parts, fmt.Sprintf("%s=%s", strings.TrimPrefix(k, "k8s.ovn.org/"), obj.GetAnnotations()[k]))
			}
		}
		if len(parts) > 0 {
			lines = append(lines, describe(obj)+" "+strings.Join(parts, " "))
		}
	}
	return strings.Join(lines, "\n")
}

// conditionsDump lists the leader's conditions of every network: object type status
// reason message, one per line.
func conditionsDump(s *snapshot) string {
	var lines []string
	for _, obj := range s.objects() {
		for _, c := range conditionsOf(obj) {
			lines = append(lines, fmt.Sprintf("%s %s %s %s: %s", describe(obj), c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return strings.Join(lines, "\n")
}

// diffLines fails t when two dumps differ, with their line diff and got in full.
func diffLines(t *testing.T, what, got, want string) {
	t.Helper()
	if d := golden.Diff(want, got); d != "" {
		t.Fatalf("%s differ:\n%s\nfull output:\n%s", what, d, got)
	}
}
