package statuscmd

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// lease is a heartbeat Lease of node renewed at renewed, with annotations.
func lease(node string, renewed time.Time, annotations map[string]string) coordinationv1.Lease {
	return coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ovnk-system", Name: cluster.HeartbeatLeaseName(node), Annotations: annotations},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(node),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
			LeaseDurationSeconds: ptr.To[int32](40),
		},
	}
}

// healthy are the annotations of an agent connected to its NB that reconciled at t.
func healthy(t time.Time) map[string]string {
	return map[string]string{
		cluster.AnnotationAgentVersion:  "v1.0.0",
		cluster.AnnotationNBConnected:   "true",
		cluster.AnnotationAgentLeader:   "false",
		cluster.AnnotationLastReconcile: t.Format(time.RFC3339),
	}
}

func with(m map[string]string, key, value string) map[string]string {
	m[key] = value
	return m
}

func agentPod(name, node string, ready bool) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ovnk-system", Name: name},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func node(name, zoneStatus string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if zoneStatus != "" {
		n.Annotations = map[string]string{"ovnk.io/zone-status": zoneStatus}
	}
	return n
}

// TestAgentReadiness covers every reason an agent is not ready, in the order they are
// checked.
func TestAgentReadiness(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lease  *coordinationv1.Lease
		pods   []corev1.Pod
		ready  bool
		reason string
		leader bool
	}{
		{name: "fresh and reconciled", lease: ptr.To(lease("n", now.Add(-5*time.Second), healthy(now))), ready: true},
		{name: "fresh at the last second", lease: ptr.To(lease("n", now.Add(-40*time.Second), healthy(now))), ready: true},
		{name: "leader", lease: ptr.To(lease("n", now, with(healthy(now), cluster.AnnotationAgentLeader, "true"))), ready: true, leader: true},
		{name: "no lease", reason: "no agent: no heartbeat Lease ovnk-system/ovnk-agent-n"},
		{name: "pod but no lease yet", pods: []corev1.Pod{agentPod("ovnk-agent-x1", "n", true)},
			reason: "pod ovnk-agent-x1 has not published its heartbeat Lease ovnk-system/ovnk-agent-n yet"},
		{name: "expired, and a stale leader is not shown", lease: ptr.To(lease("n", now.Add(-2*time.Minute), with(healthy(now), cluster.AnnotationAgentLeader, "true"))),
			reason: "heartbeat expired: last renewed 2m ago, valid for 40s"},
		{name: "never renewed", lease: func() *coordinationv1.Lease {
			l := lease("n", now, healthy(now))
			l.Spec.RenewTime = nil
			return &l
		}(), reason: "the heartbeat Lease was never renewed"},
		{name: "NB down", lease: ptr.To(lease("n", now, with(healthy(now), cluster.AnnotationNBConnected, "false"))),
			reason: "not connected to its OVN northbound database"},
		{name: "OVS unreachable", lease: ptr.To(lease("n", now, with(with(healthy(now), cluster.AnnotationOVSReachable, "false"),
			cluster.AnnotationLastError, "Open vSwitch database unix:/run/openvswitch/db.sock is unreachable: …"))),
			reason: "cannot reach its node's Open vSwitch database"},
		{name: "node annotation malformed", lease: ptr.To(lease("n", now, with(healthy(now), cluster.AnnotationNodeProblem,
			`node/n: annotation k8s.ovn.org/l3-gateway-config: malformed JSON "garbage", want a JSON object: …`))),
			reason: `node/n: annotation k8s.ovn.org/l3-gateway-config: malformed JSON "garbage", want a JSON object: …`},
		{name: "OVS reachable", lease: ptr.To(lease("n", now, with(healthy(now), cluster.AnnotationOVSReachable, "true"))), ready: true},
		{name: "not reconciled yet", lease: func() *coordinationv1.Lease {
			l := lease("n", now, healthy(now))
			delete(l.Annotations, cluster.AnnotationLastReconcile)
			return &l
		}(), reason: "the zone has not been reconciled yet"},
		{name: "pod not Ready", lease: ptr.To(lease("n", now, healthy(now))), pods: []corev1.Pod{agentPod("ovnk-agent-x1", "n", false)},
			reason: "pod ovnk-agent-x1 is not Ready"},
		{name: "one of two pods Ready", lease: ptr.To(lease("n", now, healthy(now))),
			pods: []corev1.Pod{agentPod("ovnk-agent-old", "n", false), agentPod("ovnk-agent-new", "n", true)}, ready: true},
		{name: "unreadable lease", lease: ptr.To(lease("n", now, with(healthy(now), cluster.AnnotationAgentLeader, "maybe"))),
			reason: `lease ovnk-system/ovnk-agent-n: annotation ovnk.io/leader "maybe" is neither "true" nor "false"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &inputs{namespace: "ovnk-system", nodes: []corev1.Node{node("n", "")}, pods: tc.pods}
			if tc.lease != nil {
				in.leases = []coordinationv1.Lease{*tc.lease}
			}
			got := build(in, now).Nodes[0]
			if got.Ready != tc.ready || got.NotReadyReason != tc.reason || got.Leader != tc.leader {
				t.Errorf("ready %t, reason %q, leader %t; want %t, %q, %t", got.Ready, got.NotReadyReason, got.Leader, tc.ready, tc.reason, tc.leader)
			}
			if got.Agent != (tc.lease != nil) {
				t.Errorf("agent %t with lease %v", got.Agent, tc.lease != nil)
			}
		})
	}
}

func TestNetworkReadiness(t *testing.T) {
	in := &inputs{
		namespace: "ovnk-system",
		nodes: []corev1.Node{
			node("b", `{"cluster_udn_blue":"","t_red":"no k8s.ovn.org/l3-gateway-config yet"}`),
			node("a", `{"cluster_udn_blue":""}`),
			node("c", ""),
			node("d", `not json`),
		},
		leases: []coordinationv1.Lease{lease("a", now, healthy(now)), lease("b", now, healthy(now)), lease("c", now, healthy(now)), lease("d", now, healthy(now))},
		cudns:  []ovnkv1.ClusterUserDefinedNetwork{{ObjectMeta: metav1.ObjectMeta{Name: "blue"}}},
		udns:   []ovnkv1.UserDefinedNetwork{{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "red"}}},
	}
	in.reports = cluster.ReadZoneReports(in.nodes)
	r := build(in, now)
	if len(r.Networks) != 2 {
		t.Fatalf("networks %+v, want blue and red", r.Networks)
	}
	blue, red := r.Networks[0], r.Networks[1]
	if blue.Network != "cluster_udn_blue" || blue.Kind != "ClusterUserDefinedNetwork" || blue.Name != "blue" || blue.ReadyNodes != 2 || blue.TotalNodes != 4 {
		t.Errorf("blue: %+v, want cluster_udn_blue ready on 2/4", blue)
	}
	want := []NodeReason{{"c", "no zone report yet"}, {"d", "its ovnk.io/zone-status annotation is unreadable"}}
	if len(blue.NotReady) != 2 || blue.NotReady[0] != want[0] || blue.NotReady[1] != want[1] {
		t.Errorf("blue not ready on %+v, want %+v", blue.NotReady, want)
	}
	if red.Network != "t_red" || red.Name != "t/red" || red.ReadyNodes != 0 || len(red.NotReady) != 4 {
		t.Fatalf("red: %+v, want t_red ready on no node", red)
	}
	if red.NotReady[0] != (NodeReason{"a", "the zone has not reported on the network yet"}) || red.NotReady[1] != (NodeReason{"b", "no k8s.ovn.org/l3-gateway-config yet"}) {
		t.Errorf("red not ready on %+v", red.NotReady)
	}
	if r.Ready {
		t.Errorf("a report with networks not ready everywhere is ready")
	}
	pending := strings.Join(r.Pending(), "; ")
	if pending != "network blue on c, d; network t/red on a, b, c, d" {
		t.Errorf("pending %q", pending)
	}
}

func TestEmptyClusterIsNotReady(t *testing.T) {
	r := build(&inputs{namespace: "ovnk-system"}, now)
	if r.Ready || strings.Join(r.Pending(), ";") != "the cluster has no nodes" {
		t.Errorf("a cluster without nodes: ready %t, pending %v", r.Ready, r.Pending())
	}
	if r.Nodes == nil || r.Networks == nil {
		t.Errorf("empty lists must print as [] in JSON, not null: %+v", r)
	}
}

// TestWithoutNetworkCRDs: a cluster without the network CRDs still has its agents
// reported, and is not ready, saying why.
func TestWithoutNetworkCRDs(t *testing.T) {
	in := &inputs{
		namespace:   "ovnk-system",
		nodes:       []corev1.Node{node("a", "")},
		leases:      []coordinationv1.Lease{lease("a", now, healthy(now))},
		networksErr: netview.ErrNoNetworkAPI,
	}
	r := build(in, now)
	if len(r.Nodes) != 1 || !r.Nodes[0].Ready {
		t.Errorf("nodes %+v, want a's ready agent", r.Nodes)
	}
	if r.Ready || r.NetworksError != netview.ErrNoNetworkAPI.Error() || strings.Join(r.Pending(), "; ") != "networks: "+netview.ErrNoNetworkAPI.Error() {
		t.Errorf("ready %t, networks error %q, pending %q", r.Ready, r.NetworksError, r.Pending())
	}
	var out strings.Builder
	if err := newView(lipgloss.NewRenderer(nil), 0, false, false, now).render(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "a      ready") || !strings.Contains(out.String(), "Networks unknown: the cluster does not serve k8s.ovn.org networks") {
		t.Errorf("status without the CRDs:\n%s", out.String())
	}
}

// TestRefusedNetwork: a network the leader refused shows the reason and message of
// its NetworkCreated condition, not the zones' "not reported yet".
func TestRefusedNetwork(t *testing.T) {
	refused := ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "green"}}
	refused.Status.Conditions = []metav1.Condition{{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionFalse, Reason: "SubnetOverlap", Message: "overlaps blue"}}
	in := &inputs{namespace: "ovnk-system", nodes: []corev1.Node{node("a", `{}`)}, cudns: []ovnkv1.ClusterUserDefinedNetwork{refused}}
	in.reports = cluster.ReadZoneReports(in.nodes)
	nw := build(in, now).Networks[0]
	if nw.Name != "green" || nw.Status != "SubnetOverlap" || nw.Reason != "overlaps blue" {
		t.Errorf("refused network: %+v", nw)
	}
}
