package zone

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestReportPodsOncePerProblem: a pod whose port cannot be programmed gets one Warning
// event naming the node and the reason, not one per reconcile; a new reason is a new
// event, and a problem that went away and came back is recorded again.
func TestReportPodsOncePerProblem(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "blue", Name: "web"}}
	rec := events.NewFakeRecorder(10)
	c := &Controller{Client: fake.NewClientBuilder().WithObjects(pod).Build(), NodeName: "node1", Events: rec}
	ctx := context.Background()
	bad := map[string]error{"blue/web": errors.New(`MAC "zz" is not a 48-bit MAC`)}

	c.reportPods(ctx, bad)
	c.reportPods(ctx, bad)
	c.reportPods(ctx, map[string]error{"blue/web": errors.New("has no IP addresses")})
	c.reportPods(ctx, nil)
	c.reportPods(ctx, bad)
	c.reportPods(ctx, map[string]error{"blue/gone": errors.New("x")}) // no such pod: nothing, no panic
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	if len(got) != 3 {
		t.Fatalf("events %q: want 3 (first problem, new reason, the problem back)", got)
	}
	for _, e := range got {
		if !strings.HasPrefix(e, "Warning PortNotProgrammed node node1 cannot program this pod's port: ") {
			t.Errorf("event %q", e)
		}
	}
	if !strings.Contains(got[1], "has no IP addresses") {
		t.Errorf("second event %q, want the new reason", got[1])
	}
}
