package connectcmd

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/agent/leader"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestDescribeRefused describes a connect the leader refused, with the status the
// leader writes then (pkg/agent/leader, connectStatus: Accepted False with the reason
// and message, Ready False NotAccepted, no tunnel key) and the nodes' zone reports still
// waiting for the tunnel key. The refusal must show, and nothing may say the connect
// waits for the leader, reaches anything, or is on its way to an allocation.
func TestDescribeRefused(t *testing.T) {
	h := newHarness(t)
	h.cudn("refused-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16"})
	h.cudn("refused-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16"})
	waiting := "waiting for the leader to allocate the connect router's tunnel key (" + cluster.AnnotationConnectRouterTunnelKey + ")"
	report := clitest.ZoneStatus(t, map[string]string{cluster.ConnectZoneStatusKey("refused-blue-refused-green"): waiting})
	h.Node("refused-node-1", report)
	h.Node("refused-node-2", report)
	h.MustRun("connect", "refused-blue", "refused-green")

	cnc := h.getConnect("refused-blue-refused-green")
	message := "connect subnet 192.168.0.0/16 overlaps subnet 192.168.0.0/16 of the cluster's default network: nothing is connected; delete this ClusterNetworkConnect and create it with another connect subnet"
	cnc.Status = ovnkv1.ClusterNetworkConnectStatus{Status: ovnkv1.ConnectStatusFailure, Conditions: []metav1.Condition{
		{Type: leader.ConditionConnectAccepted, Status: metav1.ConditionFalse, Reason: leader.ReasonConnectSubnetOverlap, Message: message, LastTransitionTime: metav1.Now()},
		{Type: leader.ConditionConnectReady, Status: metav1.ConditionFalse, Reason: leader.ReasonNotAccepted, Message: "nothing is programmed: see condition " + leader.ConditionConnectAccepted, LastTransitionTime: metav1.Now()},
	}}
	if err := h.C.Status().Update(h.Ctx(), cnc); err != nil {
		t.Fatal(err)
	}

	out := h.MustRun("connections", "describe", cnc.Name)
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"Status: ConnectSubnetOverlap",
		"Refused: ConnectSubnetOverlap: " + message,
		"Tunnel key: <none: the leader refused the connect (see Refused)>",
		"Reachability: none nothing is programmed: the leader refused the connect",
		"refused-blue Layer3 10.10.0.0/16 <none: refused>",
		"Nodes: 0/2 ready no node programs the connect: the leader refused the connect",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("describe of a refused connect lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"waiting for the leader", "not allocated yet", "↔"} {
		if strings.Contains(out, not) {
			t.Errorf("describe of a refused connect says %q:\n%s", not, out)
		}
	}

	// Once the leader accepts it (a tunnel key), the nodes' own reports show again.
	cnc = h.getConnect(cnc.Name)
	cnc.Annotations = map[string]string{cluster.AnnotationConnectRouterTunnelKey: "16711690"}
	if err := h.C.Update(h.Ctx(), cnc); err != nil {
		t.Fatal(err)
	}
	if out := h.MustRun("connections", "describe", cnc.Name); strings.Contains(out, "Refused:") || !strings.Contains(out, waiting) {
		t.Errorf("describe of a connect with a tunnel key shows a refusal, or hides the nodes' reports:\n%s", out)
	}
}
