package networkcmd

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
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

// TestCreateSeniorityByNADIDs checks create's conflict check where two networks of a
// namespace overlap: a-plain (older, or first by name) holds no id, b-upstream holds the
// one upstream's cluster manager wrote on its NAD. The leader keeps the network holding
// an id and refuses the other, which then takes nothing: a subnet overlapping only
// a-plain is accepted, and one overlapping both is refused in b-upstream's name.
func TestCreateSeniorityByNADIDs(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	secondaryUDN := func(name, subnet string) *ovnkv1.UserDefinedNetwork {
		u := &ovnkv1.UserDefinedNetwork{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
				Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRoleSecondary, Subnets: ovnkv1.DualStackCIDRs{ovnkv1.CIDR(subnet)}}},
		}
		h.Create(u)
		return u
	}
	secondaryUDN("a-plain", "10.80.0.0/16")
	upstream := secondaryUDN("b-upstream", "10.80.0.0/17")
	h.Create(&nadv1.NetworkAttachmentDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: upstream.Name,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: ovnkv1.SchemeGroupVersion.String(), Kind: "UserDefinedNetwork",
				Name: upstream.Name, UID: upstream.UID, Controller: ptr(true),
			}},
			Annotations: map[string]string{cluster.AnnotationNetworkID: "9", cluster.AnnotationTunnelKeys: "[]"},
		},
		Spec: nadv1.NetworkAttachmentDefinitionSpec{Config: `{"cniVersion":"1.0.0","type":"ovn-k8s-cni-overlay","topology":"layer2"}`},
	})

	create := func(subnet string) (string, error) {
		_, errOut, err := h.Run("create", "newcomer", "-n", ns, "--topology", "layer2", "--role", "secondary", "--subnet", subnet, "--dry-run=server")
		return errOut, err
	}
	if errOut, err := create("10.80.128.0/17"); err != nil {
		t.Errorf("a subnet overlapping only a-plain, which b-upstream's id outranks: %v\n%s", err, errOut)
	}
	want := fmt.Sprintf("--subnet 10.80.0.0/18: overlaps subnet 10.80.0.0/17 of UserDefinedNetwork %s/b-upstream", ns)
	if _, err := create("10.80.0.0/18"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a subnet overlapping both: %v; want %q", err, want)
	}
}
