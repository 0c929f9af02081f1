package networkcmd

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// TestUpstreamReadiness lists and describes networks on a cluster shaped like upstream
// OVN-Kubernetes': no node has an ovnk zone report, and upstream's cluster manager set
// the networks' NetworkCreated and NetworkAllocationSucceeded conditions. READY is "-"
// and STATUS follows the conditions: the allocated network is Ready, the one whose
// allocation failed on a node is Pending, and describe says where its state comes from.
func TestUpstreamReadiness(t *testing.T) {
	h := newHarness(t)
	h.Node("ups-n1", nil)
	h.Node("ups-n2", nil)
	ns := h.Namespace("", nil)
	ok := &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ok"},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
			Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: ovnkv1.DualStackCIDRs{"10.60.0.0/24"}}},
	}
	failing := ok.DeepCopy()
	failing.Name, failing.Spec.Layer2.Subnets = "failing", ovnkv1.DualStackCIDRs{"10.61.0.0/24"}
	h.Create(ok)
	h.Create(failing)
	created := metav1.Condition{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionTrue, Reason: "NetworkAttachmentDefinitionCreated",
		Message: "NetworkAttachmentDefinition has been created", LastTransitionTime: metav1.Now()}
	allocated := metav1.Condition{Type: netview.ConditionNetworkAllocationSucceeded, Status: metav1.ConditionTrue, Reason: "NetworkAllocationSucceeded",
		Message: "Network allocation succeeded for all synced nodes.", LastTransitionTime: metav1.Now()}
	failed := metav1.Condition{Type: netview.ConditionNetworkAllocationSucceeded, Status: metav1.ConditionFalse, Reason: "InternalError",
		Message: "Network allocation failed for at least one node: ups-n2, check UDN events for more info.", LastTransitionTime: metav1.Now()}
	ok.Status.Conditions = []metav1.Condition{created, allocated}
	failing.Status.Conditions = []metav1.Condition{created, failed}
	for _, obj := range []client.Object{ok, failing} {
		if err := h.C.Status().Update(h.Ctx(), obj); err != nil {
			t.Fatal(err)
		}
	}

	out := h.MustRun("list", "-n", ns)
	if row := clitest.TableRow(t, out, ns+"/ok"); !strings.Contains(strings.Join(row, "|"), "|-|Ready") {
		t.Errorf("ok's row %q: want READY - and STATUS Ready\n%s", row, out)
	}
	if row := clitest.TableRow(t, out, ns+"/failing"); !strings.Contains(strings.Join(row, "|"), "|-|Pending") {
		t.Errorf("failing's row %q: want READY - and STATUS Pending\n%s", row, out)
	}

	desc := h.MustRun("describe", ns+"/failing")
	for _, want := range []string{"NetworkAllocationSucceeded", "Network allocation failed for at least one node: ups-n2",
		"no node reports on its zone (no ovnk agent): the network is Pending by the conditions above"} {
		if !strings.Contains(strings.Join(strings.Fields(desc), " "), want) {
			t.Errorf("describe lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(desc, "no zone report yet") {
		t.Errorf("describe waits for zone reports no node writes:\n%s", desc)
	}
}
