package agent

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ovnk/ovnk/pkg/agent/zone"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/podnet"
)

func allocation(t *testing.T, entries map[string]cluster.PodInterface) string {
	t.Helper()
	v, err := cluster.PodNetworksCodec.Format(entries)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testPod(name, node, uid string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "blue", Name: name, UID: types.UID(uid), Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

// TestPodPlans asks the CNI endpoint for pods in every state it knows and checks the
// status, the reason and that the message names the pod. The snapshot is built as the
// zone builds it (zone.ListInputs, cluster.Build) from the objects the cache held at
// the last reconcile; the cache and the API server may have moved on since.
func TestPodPlans(t *testing.T) {
	def := cluster.PodInterface{
		IPs: []netip.Prefix{netip.MustParsePrefix("10.244.0.5/24")}, MAC: "0a:58:0a:f4:00:05",
		Gateways: []netip.Addr{netip.MustParseAddr("10.244.0.1")}, Role: cluster.PodRolePrimary,
	}
	ok := map[string]string{cluster.AnnotationPodNetworks: allocation(t, map[string]cluster.PodInterface{"default": def})}
	goneNet := map[string]string{cluster.AnnotationPodNetworks: allocation(t, map[string]cluster.PodInterface{
		"default": def, "blue/nonexistent": {IPs: []netip.Prefix{netip.MustParsePrefix("10.10.0.5/24")}, MAC: "0a:58:0a:0a:00:05", Role: cluster.PodRoleSecondary},
	})}
	finished := testPod("done", "node1", "u-done", ok)
	finished.Status.Phase = corev1.PodSucceeded
	atReconcile := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "blue"}},
		testPod("web", "node1", "u-web", ok),
		testPod("new", "node1", "u-new", nil),
		testPod("other", "node2", "u-other", ok),
		testPod("gone-net", "node1", "u-gone-net", goneNet),
		testPod("bad-mac", "node1", "u-bad-mac", ok),
		testPod("recreated", "node1", "u-recreated-old", ok),
		finished,
	}
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	reconciled := fake.NewClientBuilder().WithScheme(scheme).WithObjects(atReconcile...).Build()
	in, err := zone.ListInputs(t.Context(), reconciled)
	if err != nil {
		t.Fatal(err)
	}
	in.DefaultNetwork = cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}}
	st, buildErrs := cluster.Build(in)
	snap := &zone.Snapshot{State: st, BuildErrors: buildErrs, PodIssues: map[string]error{
		"blue/bad-mac": errors.New(`MAC "0a:58" is not a 48-bit MAC`),
	}}

	// Since then: blue/late got its allocation, blue/recreated is a new pod of the
	// same name, and blue/fresh exists in the API server but not yet in the cache.
	var now []client.Object
	for _, o := range atReconcile {
		if o.GetName() != "recreated" {
			now = append(now, o)
		}
	}
	now = append(now,
		testPod("recreated", "node1", "u-recreated-new", ok),
		testPod("late", "node1", "u-late", ok),
		testPod("malformed", "node1", "u-malformed", map[string]string{cluster.AnnotationPodNetworks: `{"default":`}),
	)
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(now...).Build()
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(now, testPod("fresh", "node1", "u-fresh", nil))...).Build()

	current := snap
	plans := &podPlans{node: "node1", snapshot: func() *zone.Snapshot { return current }, cache: cache, live: live}
	mux := http.NewServeMux()
	mux.Handle(podPlanPattern, plans)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tests := []struct {
		pod, uid string
		status   int
		reason   string
		message  string
	}{
		{"web", "u-web", http.StatusOK, "", ""},
		{"web", "", http.StatusOK, "", ""},
		{"web", "u-old", http.StatusConflict, podnet.ReasonUIDMismatch, "pod blue/web is UID u-web now; the sandbox is for UID u-old, an earlier pod of that name"},
		{"new", "u-new", http.StatusTooEarly, podnet.ReasonNotAllocated, "the leader has not allocated pod blue/new's addresses yet"},
		{"late", "u-late", http.StatusTooEarly, podnet.ReasonNotAllocated, "node node1's zone has not programmed pod blue/late yet"},
		{"recreated", "u-recreated-new", http.StatusTooEarly, podnet.ReasonNotAllocated, "node node1's zone has not programmed pod blue/recreated yet"},
		{"fresh", "u-fresh", http.StatusTooEarly, podnet.ReasonNotAllocated, "node node1's agent has not seen pod blue/fresh (UID u-fresh) yet"},
		{"other", "u-other", http.StatusNotFound, podnet.ReasonNotFound, `pod blue/other is bound to node "node2", not to node node1`},
		{"nobody", "u-nobody", http.StatusNotFound, podnet.ReasonNotFound, "pod blue/nobody does not exist (deleted?)"},
		{"done", "u-done", http.StatusNotFound, podnet.ReasonNotFound, "pod blue/done has finished (Succeeded)"},
		{"gone-net", "u-gone-net", http.StatusGone, podnet.ReasonNetworkGone, `pod blue/gone-net cannot be wired: entry "blue/nonexistent": no UserDefinedNetwork`},
		{"malformed", "u-malformed", http.StatusUnprocessableEntity, podnet.ReasonInvalid, "pod blue/malformed's allocation cannot be read"},
		{"bad-mac", "u-bad-mac", http.StatusUnprocessableEntity, podnet.ReasonInvalid, `node node1 cannot program pod blue/bad-mac's ports: MAC "0a:58"`},
	}
	get := func(pod, uid string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + podnet.PlanPath("blue", pod) + "?uid=" + uid)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
			t.Fatalf("%s: body is not JSON: %v", pod, err)
		}
		return resp.StatusCode, raw
	}
	for _, tt := range tests {
		t.Run(tt.pod+"/"+tt.uid, func(t *testing.T) {
			status, body := get(tt.pod, tt.uid)
			if status != tt.status {
				t.Fatalf("status %d (%s), want %d", status, body, tt.status)
			}
			if status == http.StatusOK {
				var plan podnet.Plan
				if err := json.Unmarshal(body, &plan); err != nil {
					t.Fatal(err)
				}
				if plan.Ref() != "blue/web" || plan.UID != "u-web" || len(plan.Interfaces) != 1 || plan.Interfaces[0].IfaceID != "blue_web" ||
					plan.Interfaces[0].IPs[0] != netip.MustParsePrefix("10.244.0.5/24") || plan.Interfaces[0].MTU != 1400 {
					t.Errorf("plan %s", body)
				}
				return
			}
			var e podnet.Error
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if e.Reason != tt.reason || !strings.Contains(e.Message, tt.message) {
				t.Errorf("answer %+v, want reason %s and %q", e, tt.reason, tt.message)
			}
		})
	}

	// The zone is applied but the default network is not in the Northbound (it did not
	// compile, or another owner's rows hold its names): the pod's ports are not there,
	// so no plan yet, and the answer names the network and why.
	unprogrammed := *snap
	unprogrammed.Unprogrammed = map[string]error{"default": errors.New("node subnet 10.244.0.0/24 overlaps join subnet")}
	current = &unprogrammed
	status, body := get("web", "u-web")
	var e podnet.Error
	if err := json.Unmarshal(body, &e); err != nil || status != http.StatusTooEarly || e.Reason != podnet.ReasonNotProgrammed ||
		e.Message != "node node1 has not programmed network default of pod blue/web into its Northbound yet: node subnet 10.244.0.0/24 overlaps join subnet" {
		t.Errorf("a pod on an unprogrammed network: %d %s; want 425 NotProgrammed naming the network and its error", status, body)
	}
	unprogrammed.Unprogrammed = map[string]error{"cluster_udn_other": errors.New("name taken")}
	if status, body := get("web", "u-web"); status != http.StatusOK {
		t.Errorf("a pod beside an unprogrammed network it is not on: %d %s; want its plan", status, body)
	}

	current = nil
	if status, body := get("web", "u-web"); status != http.StatusServiceUnavailable || !strings.Contains(string(body), "the agent of node node1 has not applied its zone yet: pod blue/web waits") {
		t.Errorf("before the first reconcile: %d %s, want 503 naming the node and the pod", status, body)
	}
}
