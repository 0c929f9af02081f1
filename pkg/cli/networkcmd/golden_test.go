package networkcmd

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// goldenCluster creates a small cluster with fixed names: three nodes in various states
// of readiness, four networks of every kind, a connect selecting two of them, status
// conditions and events. It returns the clock the views are drawn at: 30 hours after
// the networks were created, so every AGE is stable.
func goldenCluster(h *harness) func() time.Time {
	h.T.Helper()
	blue := h.Namespace("golden-blue", map[string]string{"tenant": "blue"})
	red := h.Namespace("golden-red", nil)

	shared := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "golden-shared", Labels: map[string]string{"network": "colored"}},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{red}},
			}},
			Network: ovnkv1.NetworkSpec{
				Topology: ovnkv1.NetworkTopologyLayer3,
				Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, MTU: 1500, Subnets: []ovnkv1.Layer3Subnet{
					{CIDR: "10.100.0.0/16", HostSubnet: 24}, {CIDR: "fd00:10:100::/48"},
				}},
				Transport: ovnkv1.TransportOptionNoOverlay,
				NoOverlay: &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATEnabled, Routing: ovnkv1.RoutingManaged},
			},
		},
	}
	tenant := &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: blue},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
			Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: "10.50.0.0/16"}},
			JoinSubnets: ovnkv1.DualStackCIDRs{"100.66.0.0/16"},
		}},
	}
	storage := &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "storage", Namespace: blue},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
			Role: ovnkv1.NetworkRoleSecondary, MTU: 9000, IPAM: &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled},
		}},
	}
	long := &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "replication-between-data-centres", Namespace: red},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
			Role: ovnkv1.NetworkRoleSecondary, Subnets: ovnkv1.DualStackCIDRs{"192.168.100.0/24", "fd00:192:168:100::/64"},
		}},
	}
	for _, n := range []client.Object{shared, tenant, storage, long} {
		h.Create(n)
	}
	created := shared.CreationTimestamp.Time
	for _, n := range []client.Object{tenant, storage, long} {
		if t := n.GetCreationTimestamp().Time; t.After(created) {
			created = t
		}
	}
	now := created.Add(30*time.Hour + 30*time.Minute)

	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	tenant.Status.Conditions = []metav1.Condition{
		{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionTrue, Reason: "Allocated", Message: "network id 2, tunnel keys 16711685", LastTransitionTime: ago(30 * time.Hour)},
		{Type: "NetworkReady", Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: ago(5 * time.Minute),
			Message: "ready on 1/3 nodes; node node-b: no k8s.ovn.org/l3-gateway-config yet; node node-c: no zone report yet"},
	}
	if err := h.C.Status().Update(h.Ctx(), tenant); err != nil {
		h.T.Fatal(err)
	}

	h.Node("node-a", clitest.ZoneStatus(h.T, map[string]string{
		cluster.CUDNNetworkName(shared.Name):       "",
		cluster.UDNNetworkName(blue, tenant.Name):  "",
		cluster.UDNNetworkName(blue, storage.Name): "",
		cluster.UDNNetworkName(red, long.Name):     "",
	}))
	h.Node("node-b", clitest.ZoneStatus(h.T, map[string]string{
		cluster.CUDNNetworkName(shared.Name):      "",
		cluster.UDNNetworkName(blue, tenant.Name): "no k8s.ovn.org/l3-gateway-config yet",
		cluster.UDNNetworkName(red, long.Name):    "",
	}))
	h.Node("node-c", nil)

	connect := &ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "golden-colored"},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: ovnkv1.NetworkSelectors{
				{NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks, ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{
					NetworkSelector: metav1.LabelSelector{MatchLabels: map[string]string{"network": "colored"}}}},
				{NetworkSelectionType: ovnkv1.PrimaryUserDefinedNetworks, PrimaryUserDefinedNetworkSelector: &ovnkv1.PrimaryUserDefinedNetworkSelector{
					NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "blue"}}}},
			},
			ConnectSubnets: []ovnkv1.ConnectSubnet{{CIDR: "192.168.0.0/16", NetworkPrefix: 24}},
			Connectivity:   []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork, ovnkv1.ConnectivityClusterIPServiceNetwork},
		},
	}
	h.Create(connect)
	connect.Status.Status = ovnkv1.ConnectStatusSuccess
	if err := h.C.Status().Update(h.Ctx(), connect); err != nil {
		h.T.Fatal(err)
	}

	regarding := corev1.ObjectReference{APIVersion: ovnkv1.SchemeGroupVersion.String(), Kind: "UserDefinedNetwork", Namespace: blue, Name: tenant.Name, UID: tenant.UID}
	h.Create(&eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: blue, Name: "tenant.overlap"},
		EventTime:  metav1.NewMicroTime(now.Add(-31 * time.Minute)), ReportingController: "ovnk-leader", ReportingInstance: "node-a",
		Action: "CreateNetwork", Type: corev1.EventTypeWarning, Reason: "SubnetOverlap", Regarding: regarding,
		Note:   `network "golden-blue_tenant" subnet 10.50.0.0/16 overlaps subnet 10.50.0.0/24 of network "golden-blue_old", which also serves namespace "golden-blue"; networks of the same namespace need subnets that do not overlap`,
		Series: &eventsv1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(now.Add(-25 * time.Minute))},
	})
	h.Create(&eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: blue, Name: "tenant.created"},
		EventTime:  metav1.NewMicroTime(now.Add(-20 * time.Minute)), ReportingController: "ovnk-leader", ReportingInstance: "node-a",
		Action: "CreateNetwork", Type: corev1.EventTypeNormal, Reason: "Allocated", Regarding: regarding,
		Note: "network id 2, tunnel keys 16711685",
	})
	// An event about another object of the same name must not show.
	other := regarding
	other.UID = "00000000-0000-0000-0000-000000000000"
	h.Create(&eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: blue, Name: "tenant.old"},
		EventTime:  metav1.NewMicroTime(now.Add(-40 * time.Hour)), ReportingController: "ovnk-leader", ReportingInstance: "node-a",
		Action: "CreateNetwork", Type: corev1.EventTypeNormal, Reason: "Deleted", Regarding: other, Note: "an earlier network of that name",
	})
	return func() time.Time { return now }
}

// TestGoldenViews compares list and describe, with and without colour, at 80 and 200
// columns, with testdata/*.golden.
func TestGoldenViews(t *testing.T) {
	h := newHarness(t)
	h.Now = goldenCluster(h)
	h.GoldenViews(t, []clitest.View{
		{Name: "list", Args: []string{"list"}},
		{Name: "list-namespace", Args: []string{"list", "-n", "golden-blue"}},
		{Name: "describe-udn", Args: []string{"describe", "golden-blue/tenant"}},
		{Name: "describe-cudn", Args: []string{"describe", "golden-shared"}},
		{Name: "describe-no-ipam", Args: []string{"describe", "storage", "-n", "golden-blue"}},
	})
	// -o wide shows every column, even wider than a terminal: piped, it is pinned.
	t.Run("list-wide", func(t *testing.T) {
		h.T, h.Width, h.TTY = t, 80, false
		clitest.Golden(t, "list-wide", h.MustRun("list", "-o", "wide"))
	})
	// Columns of the user's choosing, the same on an 80-column terminal (neither
	// fitted nor coloured) as piped.
	columns := []string{"list", "--sort-by", ".metadata.name", "-o", "custom-columns=NAME:.metadata.name,NAMESPACE:.metadata.namespace,KIND:.kind,LABELS:.metadata.labels"}
	for _, tty := range []bool{true, false} {
		t.Run(fmt.Sprintf("list-custom-columns-tty-%t", tty), func(t *testing.T) {
			h.T, h.Width, h.TTY = t, 80, tty
			clitest.Golden(t, "list-custom-columns", h.MustRun(columns...))
		})
	}
}

// TestListStatus: a network the leader refused shows the reason of its NetworkCreated
// condition in STATUS, where READY alone said only that no zone had it.
func TestListStatus(t *testing.T) {
	h := newHarness(t)
	refused := &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: "status-refused"},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "none"}},
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
				Role: ovnkv1.NetworkRoleSecondary, Subnets: ovnkv1.DualStackCIDRs{"10.90.0.0/24"},
			}},
		},
	}
	h.Create(refused)
	refused.Status.Conditions = []metav1.Condition{{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionFalse,
		Reason: "SubnetOverlap", Message: "overlaps", LastTransitionTime: metav1.Now()}}
	if err := h.C.Status().Update(h.Ctx(), refused); err != nil {
		t.Fatal(err)
	}
	row := clitest.TableRow(t, h.MustRun("list"), "status-refused")
	if len(row) < 6 || row[5] != "SubnetOverlap" {
		t.Errorf("list row %q, want STATUS SubnetOverlap", row)
	}
}
