package heartbeat

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

func TestLeaseName(t *testing.T) {
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
		got := LeaseName(tc.node)
		if got != tc.want {
			t.Errorf("LeaseName(%q) = %q, want %q", tc.node, got, tc.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("LeaseName(%q) = %q is not a valid name: %v", tc.node, got, errs)
		}
	}
	if LeaseName(long) == LeaseName(long[:250]+"x") {
		t.Errorf("two long node names that differ only at the end share the Lease %s", LeaseName(long))
	}
}

// hashOf is the suffix LeaseName appends to a shortened name: the first ten hex digits
// of the node name's SHA-256.
func hashOf(node string) string {
	sum := sha256.Sum256([]byte(node))
	return hex.EncodeToString(sum[:])[:10]
}

func TestParse(t *testing.T) {
	renewed := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ovnk-system", Name: "ovnk-agent-w1", Annotations: map[string]string{
			AnnotationVersion:       "v0.3.0",
			AnnotationLastReconcile: "2026-05-01T11:59:58Z",
			AnnotationLastError:     "apply zone w1: connection refused",
			AnnotationLeader:        "true",
			AnnotationNBConnected:   "false",
		}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("w1"),
			RenewTime:            ptr.To(metav1.NewMicroTime(renewed)),
			LeaseDurationSeconds: ptr.To[int32](40),
		},
	}
	s, err := Parse(lease)
	if err != nil {
		t.Fatal(err)
	}
	want := Status{
		Node: "w1", Version: "v0.3.0", LastReconcile: renewed.Add(-2 * time.Second),
		LastError: "apply zone w1: connection refused", Leader: true, NBConnected: false,
		RenewTime: renewed, Duration: 40 * time.Second,
	}
	if !s.LastReconcile.Equal(want.LastReconcile) || !s.RenewTime.Equal(want.RenewTime) {
		t.Errorf("times: last reconcile %v renew %v, want %v and %v", s.LastReconcile, s.RenewTime, want.LastReconcile, want.RenewTime)
	}
	s.LastReconcile, s.RenewTime, want.LastReconcile, want.RenewTime = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if s != want {
		t.Errorf("Parse = %+v, want %+v", s, want)
	}
	parsed, _ := Parse(lease)
	if !parsed.Fresh(renewed.Add(40*time.Second)) || parsed.Fresh(renewed.Add(41*time.Second)) {
		t.Errorf("Fresh: want fresh up to renewTime + 40s and not after")
	}
	if (Status{}).Fresh(renewed) {
		t.Errorf("a Lease never renewed is fresh")
	}

	// OVS reachability: only an agent that says "false" cannot reach it.
	for value, unreachable := range map[string]bool{"": false, "true": false, "false": true} {
		l := lease.DeepCopy()
		if value != "" {
			l.Annotations[AnnotationOVSReachable] = value
		}
		if s, err := Parse(l); err != nil || s.OVSUnreachable != unreachable {
			t.Errorf("Parse with %s=%q: unreachable %t (%v), want %t", AnnotationOVSReachable, value, s.OVSUnreachable, err, unreachable)
		}
	}

	for key, bad := range map[string]string{AnnotationLastReconcile: "yesterday", AnnotationLeader: "yes", AnnotationNBConnected: "1", AnnotationOVSReachable: "no"} {
		broken := lease.DeepCopy()
		broken.Annotations[key] = bad
		_, err := Parse(broken)
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "ovnk-agent-w1") {
			t.Errorf("Parse with %s=%q: %v, want an error naming the lease, the annotation and the value", key, bad, err)
		}
	}
}
