package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

func TestHeartbeatLeaseName(t *testing.T) {
	long := strings.Repeat("a", 240) + ".bcdefghijk" // 251 characters, a valid node name
	cutAtDot := strings.Repeat("b", 230) + ".c" + strings.Repeat("d", 20)
	for _, tc := range []struct {
		node, want string
	}{
		{node: "worker1", want: "ovnk-agent-worker1"},
		{node: "ip-10-0-0-1.ec2.internal", want: "ovnk-agent-ip-10-0-0-1.ec2.internal"},
		// "ovnk-agent-leader" is the leader Lease's default name.
		{node: "leader", want: "ovnk-agent-leader-" + hashOf("leader")},
		{node: long, want: "ovnk-agent-" + long[:231] + "-" + hashOf(long)},
		// A shortened name keeps 231 characters of the node name, here ending in ".",
		// which may not end a label.
		{node: cutAtDot, want: "ovnk-agent-" + strings.Repeat("b", 230) + "-" + hashOf(cutAtDot)},
	} {
		got := HeartbeatLeaseName(tc.node)
		if got != tc.want {
			t.Errorf("HeartbeatLeaseName(%q) = %q, want %q", tc.node, got, tc.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("HeartbeatLeaseName(%q) = %q is not a valid name: %v", tc.node, got, errs)
		}
	}
	if HeartbeatLeaseName(long) == HeartbeatLeaseName(long[:250]+"x") {
		t.Errorf("two long node names that differ only at the end share the Lease %s", HeartbeatLeaseName(long))
	}
}

// hashOf is the suffix LeaseName appends to a shortened name: the first ten hex digits
// of the node name's SHA-256.
func hashOf(node string) string {
	sum := sha256.Sum256([]byte(node))
	return hex.EncodeToString(sum[:])[:10]
}

func TestParseHeartbeat(t *testing.T) {
	renewed := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ovnk-system", Name: "ovnk-agent-w1", Annotations: map[string]string{
			AnnotationAgentVersion:  "v0.3.0",
			AnnotationLastReconcile: "2026-05-01T11:59:58Z",
			AnnotationLastError:     "apply zone w1: connection refused",
			AnnotationAgentLeader:   "true",
			AnnotationNBConnected:   "false",
		}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("w1"),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
			LeaseDurationSeconds: ptr.To[int32](40),
		},
	}
	s, err := ParseHeartbeat(lease)
	if err != nil {
		t.Fatal(err)
	}
	want := HeartbeatStatus{
		AgentReport: AgentReport{Version: "v0.3.0", LastReconcile: renewed.Add(-2 * time.Second),
			LastError: "apply zone w1: connection refused", Leader: true, NBConnected: false},
		Node: "w1", RenewTime: renewed, Duration: 40 * time.Second,
	}
	if !s.LastReconcile.Equal(want.LastReconcile) || !s.RenewTime.Equal(want.RenewTime) {
		t.Errorf("times: last reconcile %v renew %v, want %v and %v", s.LastReconcile, s.RenewTime, want.LastReconcile, want.RenewTime)
	}
	s.LastReconcile, s.RenewTime, want.LastReconcile, want.RenewTime = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if s != want {
		t.Errorf("ParseHeartbeat = %+v, want %+v", s, want)
	}
	parsed, _ := ParseHeartbeat(lease)
	if !parsed.Fresh(renewed.Add(40*time.Second)) || parsed.Fresh(renewed.Add(41*time.Second)) {
		t.Errorf("Fresh: want fresh up to renewTime + 40s and not after")
	}
	if (HeartbeatStatus{}).Fresh(renewed) {
		t.Errorf("a Lease never renewed is fresh")
	}

	// OVS reachability: only an agent that says "false" cannot reach it.
	for value, unreachable := range map[string]bool{"": false, "true": false, "false": true} {
		l := lease.DeepCopy()
		if value != "" {
			l.Annotations[AnnotationOVSReachable] = value
		}
		if s, err := ParseHeartbeat(l); err != nil || s.OVSUnreachable() != unreachable {
			t.Errorf("ParseHeartbeat with %s=%q: unreachable %t (%v), want %t", AnnotationOVSReachable, value, s.OVSUnreachable(), err, unreachable)
		}
	}

	for key, bad := range map[string]string{AnnotationLastReconcile: "yesterday", AnnotationAgentLeader: "yes", AnnotationNBConnected: "1", AnnotationOVSReachable: "no"} {
		broken := lease.DeepCopy()
		broken.Annotations[key] = bad
		_, err := ParseHeartbeat(broken)
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "ovnk-agent-w1") {
			t.Errorf("ParseHeartbeat with %s=%q: %v, want an error naming the lease, the annotation and the value", key, bad, err)
		}
	}
}

// TestAgentReportAnnotate checks the writer's side of the format: what Annotate writes,
// what it removes and leaves, and that ParseHeartbeat reads the report back.
func TestAgentReportAnnotate(t *testing.T) {
	reconciled := time.Date(2026, 5, 1, 11, 59, 58, 0, time.FixedZone("CEST", 2*3600))
	for _, tc := range []struct {
		name    string
		report  AgentReport
		current map[string]string
		want    map[string]string
	}{{
		name:   "a healthy agent without a node part",
		report: AgentReport{Version: "v1", LastReconcile: reconciled, Leader: true, NBConnected: true},
		want: map[string]string{AnnotationAgentVersion: "v1", AnnotationAgentLeader: "true", AnnotationNBConnected: "true",
			AnnotationLastReconcile: "2026-05-01T09:59:58Z"},
	}, {
		name:   "OVS down: reported unreachable, with the error",
		report: AgentReport{Version: "v1", OVSReported: true, LastError: "OVS is down", Layer2Phase: "legacy"},
		want: map[string]string{AnnotationAgentVersion: "v1", AnnotationAgentLeader: "false", AnnotationNBConnected: "false",
			AnnotationOVSReachable: "false", AnnotationLastError: "OVS is down", AnnotationLayer2Phase: "legacy"},
	}, {
		name:   "a malformed annotation of the node: its problem, with the error",
		report: AgentReport{Version: "v1", NBConnected: true, LastReconcile: reconciled, NodeProblem: "node/n: annotation k8s.ovn.org/l3-gateway-config: bad", LastError: "node/n: annotation k8s.ovn.org/l3-gateway-config: bad"},
		want: map[string]string{AnnotationAgentVersion: "v1", AnnotationAgentLeader: "false", AnnotationNBConnected: "true",
			AnnotationLastReconcile: "2026-05-01T09:59:58Z", AnnotationNodeProblem: "node/n: annotation k8s.ovn.org/l3-gateway-config: bad",
			AnnotationLastError: "node/n: annotation k8s.ovn.org/l3-gateway-config: bad"},
	}, {
		name:   "what the report no longer says is removed; a zero reconcile time and others' annotations stay",
		report: AgentReport{Version: "v2"},
		current: map[string]string{AnnotationLastError: "old", AnnotationOVSReachable: "true", AnnotationLayer2Phase: "blocked", AnnotationNodeProblem: "old",
			AnnotationLastReconcile: "2026-05-01T09:00:00Z", "other": "kept"},
		want: map[string]string{AnnotationAgentVersion: "v2", AnnotationAgentLeader: "false", AnnotationNBConnected: "false",
			AnnotationLastReconcile: "2026-05-01T09:00:00Z", "other": "kept"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.current)
			got := tc.report.Annotate(tc.current)
			if !maps.Equal(got, tc.want) {
				t.Errorf("Annotate = %v, want %v", got, tc.want)
			}
			if !maps.Equal(tc.current, before) {
				t.Errorf("Annotate changed the current annotations to %v", tc.current)
			}
			s, err := ParseHeartbeat(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Annotations: got}})
			if err != nil {
				t.Fatal(err)
			}
			wantBack := tc.report
			if wantBack.LastReconcile.IsZero() {
				wantBack.LastReconcile = s.LastReconcile // the current one, checked above
			}
			if !s.LastReconcile.Equal(wantBack.LastReconcile) {
				t.Errorf("read back last reconcile %v, want %v", s.LastReconcile, wantBack.LastReconcile)
			}
			s.LastReconcile, wantBack.LastReconcile = time.Time{}, time.Time{}
			if s.AgentReport != wantBack {
				t.Errorf("read back %+v, want %+v", s.AgentReport, wantBack)
			}
		})
	}
}

func TestHeartbeatLabels(t *testing.T) {
	got := HeartbeatLabels(map[string]string{"team": "net", LabelAppName: "old"})
	want := map[string]string{"team": "net", LabelAppName: AgentAppName, LabelAppComponent: HeartbeatComponent}
	if !maps.Equal(got, want) {
		t.Errorf("HeartbeatLabels = %v, want %v", got, want)
	}
}
