package connectcmd

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// goldenCluster creates a small cluster with fixed names: four networks and a
// secondary one, three connects (two made by `connect`, one by hand selecting a
// network that cannot be connected), allocations, conditions, zone reports of three
// nodes and events. It returns the clock the views are drawn at: 30 hours after the
// last connect was created, so every AGE is stable.
func goldenCluster(h *harness) func() time.Time {
	h.T.Helper()
	web := h.Namespace("golden-web", nil)
	h.cudn("golden-blue", ovnkv1.NetworkTopologyLayer3, []string{"10.10.0.0/16", "fd00:10:10::/48"}, networkID("1"))
	h.cudn("golden-green", ovnkv1.NetworkTopologyLayer2, []string{"10.20.0.0/16", "fd00:10:20::/64"}, networkID("2"))
	h.udn(web, "web", ovnkv1.NetworkTopologyLayer3, []string{"10.30.0.0/16", "fd00:10:30::/48"}, networkID("3"))
	h.cudn("golden-yellow", ovnkv1.NetworkTopologyLayer3, []string{"10.40.0.0/16"}, networkID("4"), withLabels("tier", "shared"))
	h.cudn("golden-storage", ovnkv1.NetworkTopologyLayer2, []string{"10.60.0.0/24"}, networkID("5"), withLabels("tier", "shared"), secondary)

	for _, n := range []struct {
		name   string
		report map[string]string
	}{
		{"golden-node-a", map[string]string{cluster.ConnectZoneStatusKey("golden-colors"): "", cluster.ConnectZoneStatusKey("golden-green-golden-yellow"): ""}},
		{"golden-node-b", map[string]string{cluster.ConnectZoneStatusKey("golden-colors"): "network golden-web_web is not programmed yet", cluster.ConnectZoneStatusKey("golden-green-golden-yellow"): ""}},
		{"golden-node-c", nil},
	} {
		var annotations map[string]string
		if n.report != nil {
			annotations = clitest.ZoneStatus(h.T, n.report)
		}
		h.Node(n.name, annotations)
	}

	h.MustRun("connect", "golden-blue", "golden-green", web+"/web", "--name", "golden-colors", "--subnet", "192.168.0.0/16,fd00:10::/112", "--connectivity", "pod,service")
	h.MustRun("connect", "golden-green", "golden-yellow", "--subnet", "172.31.0.0/16,fd00:31::/112", "--network-prefix", "26")
	hand := &ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "golden-shared-services"},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: cudnsLabelled("tier", "shared"),
			ConnectSubnets:   []ovnkv1.ConnectSubnet{{CIDR: "172.30.0.0/16", NetworkPrefix: 24}},
			Connectivity:     []ovnkv1.ConnectivityType{ovnkv1.ConnectivityClusterIPServiceNetwork},
		},
	}
	h.Create(hand)

	colors := h.getConnect("golden-colors")
	yellow := h.getConnect("golden-green-golden-yellow")
	now := hand.CreationTimestamp.Add(30*time.Hour + 30*time.Minute)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

	// The leader's allocations: golden-web/web has no block yet.
	blocks, err := cluster.ConnectSubnetsCodec.Format(map[string][]netip.Prefix{
		"layer3_1": {netip.MustParsePrefix("192.168.0.0/24"), netip.MustParsePrefix("fd00:10::/120")},
		"layer2_2": {netip.MustParsePrefix("192.168.1.0/24"), netip.MustParsePrefix("fd00:10::100/120")},
	})
	if err != nil {
		h.T.Fatal(err)
	}
	colors.Annotations = map[string]string{cluster.AnnotationConnectSubnets: blocks, cluster.AnnotationConnectRouterTunnelKey: "16711690"}
	if err := h.C.Update(h.Ctx(), colors); err != nil {
		h.T.Fatal(err)
	}
	colors.Status = ovnkv1.ClusterNetworkConnectStatus{Conditions: []metav1.Condition{
		{Type: ovnkv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: "Allocated", Message: "tunnel key 16711690; blocks for 2 of 3 networks", LastTransitionTime: ago(30 * time.Hour)},
		{Type: conditionReady, Status: metav1.ConditionFalse, Reason: "Pending", LastTransitionTime: ago(5 * time.Minute),
			Message: "ready on 1/3 nodes; node golden-node-b: network golden-web_web is not programmed yet; node golden-node-c: no zone report yet"},
	}}
	if err := h.C.Status().Update(h.Ctx(), colors); err != nil {
		h.T.Fatal(err)
	}
	yellow.Status = ovnkv1.ClusterNetworkConnectStatus{Status: ovnkv1.ConnectStatusSuccess, Conditions: []metav1.Condition{
		{Type: ovnkv1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: "Allocated", LastTransitionTime: ago(30 * time.Hour)},
		{Type: conditionReady, Status: metav1.ConditionTrue, Reason: "Programmed", Message: "ready on 3/3 nodes", LastTransitionTime: ago(29 * time.Hour)},
	}}
	if err := h.C.Status().Update(h.Ctx(), yellow); err != nil {
		h.T.Fatal(err)
	}
	hand.Status = ovnkv1.ClusterNetworkConnectStatus{Status: ovnkv1.ConnectStatusFailure, Conditions: []metav1.Condition{
		{Type: ovnkv1.ConditionAccepted, Status: metav1.ConditionFalse, Reason: "TooFewNetworks", LastTransitionTime: ago(30 * time.Hour),
			Message: "the connect selects one network that can be connected (golden-yellow); golden-storage is a secondary network"},
	}}
	if err := h.C.Status().Update(h.Ctx(), hand); err != nil {
		h.T.Fatal(err)
	}

	regarding := corev1.ObjectReference{APIVersion: ovnkv1.SchemeGroupVersion.String(), Kind: "ClusterNetworkConnect", Name: colors.Name, UID: colors.UID}
	h.Create(&eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "golden-colors.allocated"},
		EventTime:  metav1.NewMicroTime(now.Add(-30 * time.Hour)), ReportingController: "ovnk-leader", ReportingInstance: "golden-node-a",
		Action: "Allocate", Type: corev1.EventTypeNormal, Reason: "Allocated", Regarding: regarding,
		Note: "connect router tunnel key 16711690; blocks 192.168.0.0/24 and fd00:10::/120 for golden-blue, 192.168.1.0/24 and fd00:10::100/120 for golden-green",
	})
	h.Create(&eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "golden-colors.pending"},
		EventTime:  metav1.NewMicroTime(now.Add(-20 * time.Minute)), ReportingController: "ovnk-leader", ReportingInstance: "golden-node-a",
		Action: "Allocate", Type: corev1.EventTypeWarning, Reason: "NetworkNotReady", Regarding: regarding,
		Note:   "network golden-web/web has no network id yet; its block waits for it",
		Series: &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-5 * time.Minute))},
	})
	return func() time.Time { return now }
}

// TestGoldenViews compares the connections table and describe, with and without
// colour, at 80 and 200 columns, with testdata/*.golden.
func TestGoldenViews(t *testing.T) {
	h := newHarness(t)
	h.Now = goldenCluster(h)
	h.GoldenViews(t, []clitest.View{
		{Name: "connections", Args: []string{"connections"}},
		{Name: "describe-colors", Args: []string{"connections", "describe", "golden-colors"}},
		{Name: "describe-yellow", Args: []string{"connections", "describe", "golden-green-golden-yellow"}},
		{Name: "describe-hand", Args: []string{"connections", "describe", "golden-shared-services"}},
	})
	// Columns of the user's choosing, the same on an 80-column terminal (neither
	// fitted nor coloured) as piped: the example of docs/connect-commands.md.
	columns := []string{"connections", "--sort-by", ".metadata.creationTimestamp", "-o", "custom-columns=NAME:.metadata.name,SUBNETS:.spec.connectSubnets[*].cidr"}
	for _, tty := range []bool{true, false} {
		t.Run(fmt.Sprintf("connections-custom-columns-tty-%t", tty), func(t *testing.T) {
			h.T, h.Width, h.TTY = t, 80, tty
			clitest.Golden(t, "connections-custom-columns", h.MustRun(columns...))
		})
	}
}
