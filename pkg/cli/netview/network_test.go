package netview

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestUserName: every view's name of a network is the one network describe takes.
func TestUserName(t *testing.T) {
	for ovn, want := range map[string]string{"cluster_udn_green": "green", "blue_blue": "blue/blue", "default": "default"} {
		if got := UserName(ovn); got != want {
			t.Errorf("UserName(%q) = %q, want %q", ovn, got, want)
		}
	}
	udn := Network{UDN: &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "blue", Name: "blue"}}}
	if udn.Ref() != UserName(udn.OVNName()) {
		t.Errorf("a UDN's Ref %q is not the UserName of its OVN name %q", udn.Ref(), udn.OVNName())
	}
}

// TestStatus covers each status in the order it is decided: the leader's refusal
// first, whatever the zones say.
func TestStatus(t *testing.T) {
	refused := []metav1.Condition{{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionFalse, Reason: "SubnetOverlap", Message: "overlaps blue"}}
	created := []metav1.Condition{{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionTrue, Reason: "Allocated"}}
	ready := cluster.NodeReadiness{Node: "a", Ready: true}
	pending := cluster.NodeReadiness{Node: "b", Reason: "no zone report yet"}
	for _, tc := range []struct {
		name           string
		conditions     []metav1.Condition
		rs             []cluster.NodeReadiness
		status, reason string
	}{
		{"refused", refused, []cluster.NodeReadiness{pending}, "SubnetOverlap", "overlaps blue"},
		{"ready everywhere", created, []cluster.NodeReadiness{ready}, StatusReady, ""},
		{"not yet on a node", created, []cluster.NodeReadiness{ready, pending}, StatusPending, "b: no zone report yet"},
		{"no condition yet", nil, []cluster.NodeReadiness{pending, {Node: "c", Reason: "x"}}, StatusPending, "b: no zone report yet; c: x"},
		{"no nodes", created, nil, StatusPending, "no nodes"},
	} {
		n := Network{CUDN: &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: "green"}}}
		n.CUDN.Status.Conditions = tc.conditions
		if status, reason := n.Status(tc.rs); status != tc.status || reason != tc.reason {
			t.Errorf("%s: %q, %q; want %q, %q", tc.name, status, reason, tc.status, tc.reason)
		}
	}
}
