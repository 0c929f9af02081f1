package netview

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestSummarize: the conditions upstream's cluster manager sets decide only when no
// node has an ovnk zone report and the network carries NetworkAllocationSucceeded; an
// agent's report, even on one node, keeps the per-node readiness.
func TestSummarize(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
	}
	created := cond(ovnkv1.ConditionNetworkCreated, metav1.ConditionTrue, "NetworkAttachmentDefinitionCreated", "")
	allocated := cond(ConditionNetworkAllocationSucceeded, metav1.ConditionTrue, "NetworkAllocationSucceeded", "")
	failed := cond(ConditionNetworkAllocationSucceeded, metav1.ConditionFalse, "InternalError", "failed for at least one node: n2")
	refused := cond(ovnkv1.ConditionNetworkCreated, metav1.ConditionFalse, "SyncError", "foreign NAD")
	none := []cluster.ZoneReport{{Node: "n1"}, {Node: "n2"}}
	reported := []cluster.ZoneReport{{Node: "n1", Reported: true, Report: map[string]string{"ns_net": ""}}, {Node: "n2"}}
	// Read from the zones: judged on n1 (not ready on n2, unreadable), or not judged.
	judged := []cluster.ZoneReport{{Node: "n1", FromZone: true, Reported: true, Report: map[string]string{"ns_net": ""}}, {Node: "n2", FromZone: true, Err: errors.New("exec refused")}}
	unjudged := []cluster.ZoneReport{{Node: "n1", FromZone: true, Reported: true, Report: map[string]string{"other": ""}}, {Node: "n2", FromZone: true, Err: errors.New("exec refused")}}
	for _, tc := range []struct {
		name           string
		conds          []metav1.Condition
		reports        []cluster.ZoneReport
		status, reason string
		fromConditions bool
		nodes          int
	}{
		{"allocated", []metav1.Condition{created, allocated}, none, StatusReady, "", true, 0},
		{"allocation failed", []metav1.Condition{created, failed}, none, StatusPending, "NetworkAllocationSucceeded is False: failed for at least one node: n2", true, 0},
		{"not created yet", []metav1.Condition{allocated}, none, StatusPending, "NetworkCreated is not set yet", true, 0},
		{"refused", []metav1.Condition{refused, allocated}, none, "SyncError", "foreign NAD", true, 0},
		{"no upstream condition", []metav1.Condition{created}, none, StatusPending, "n1: no zone report yet; n2: no zone report yet", false, 2},
		{"an agent reports", []metav1.Condition{created, allocated}, reported, StatusPending, "n2: no zone report yet", false, 2},
		{"judged from the zones", []metav1.Condition{created, allocated}, judged, StatusPending, "n2: its zone was not read: exec refused", false, 2},
		{"not judged from the zones", []metav1.Condition{created, allocated}, unjudged, StatusReady, "", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Network{UDN: &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "net"}}}
			n.UDN.Status.Conditions = tc.conds
			s := n.Summarize(tc.reports)
			if s.Status != tc.status || s.Reason != tc.reason || s.FromConditions != tc.fromConditions || len(s.Nodes) != tc.nodes {
				t.Errorf("Summarize = %+v; want status %q, reason %q, from conditions %t, %d nodes", s, tc.status, tc.reason, tc.fromConditions, tc.nodes)
			}
		})
	}
}
