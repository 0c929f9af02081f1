package leader

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

func TestZoneReadiness(t *testing.T) {
	reporting := func(name, report string) *corev1.Node {
		n := node(name)
		if report != "" {
			n.Annotations = map[string]string{cluster.AnnotationZoneStatus: report}
		}
		return n
	}
	for _, tc := range []struct {
		name   string
		nodes  []*corev1.Node
		status metav1.ConditionStatus
		want   string
	}{{
		name:   "all ready",
		nodes:  []*corev1.Node{reporting("a", `{"net":""}`), reporting("b", `{"net":"","other":"x"}`)},
		status: metav1.ConditionTrue, want: "Programmed: ready on 2/2 nodes",
	}, {
		name: "pending nodes are named, the first few",
		nodes: []*corev1.Node{
			reporting("a", `{"net":""}`), reporting("b", `{"net":"no gateway config yet"}`), reporting("c", ""),
			reporting("d", `{"other":""}`), reporting("e", `{"net":5}`), reporting("f", `{"net":"x"}`),
		},
		status: metav1.ConditionFalse,
		want: "Pending: ready on 1/6 nodes; node b: no gateway config yet; node c: no zone report yet; " +
			"node d: the zone has not reported on the network yet; and 2 more nodes",
	}, {
		name:   "unreadable report",
		nodes:  []*corev1.Node{reporting("a", `[`)},
		status: metav1.ConditionFalse, want: "Pending: ready on 0/1 nodes; node a: its ovnk.io/zone-status annotation is unreadable",
	}, {
		name:   "no nodes",
		status: metav1.ConditionFalse, want: "Pending: no nodes report on the network: the cluster has no nodes",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, msg := zoneReadiness("net", "network", tc.nodes)
			if status != tc.status || reason+": "+msg != tc.want {
				t.Fatalf("got %s %s: %s\nwant %s %s", status, reason, msg, tc.status, tc.want)
			}
		})
	}
}

func TestTransportAccepted(t *testing.T) {
	noOverlay := cudn("blue", 1, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "a")
	noOverlay.Labels = map[string]string{"network": "blue"}
	noOverlay.Spec.Network.Transport = ovnkv1.TransportOptionNoOverlay
	noOverlay.Spec.Network.NoOverlay = &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATEnabled, Routing: ovnkv1.RoutingUnmanaged}
	ra := func(name string, selected map[string]string, accepted bool, ads ...ovnkv1.AdvertisementType) *ovnkv1.RouteAdvertisements {
		r := &ovnkv1.RouteAdvertisements{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: ovnkv1.RouteAdvertisementsSpec{
				NetworkSelectors: ovnkv1.NetworkSelectors{{
					NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks,
					ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{
						NetworkSelector: metav1.LabelSelector{MatchLabels: selected}},
				}},
				Advertisements: ads,
			},
		}
		if accepted {
			r.Status.Conditions = []metav1.Condition{{Type: ovnkv1.ConditionAccepted, Status: metav1.ConditionTrue}}
		}
		return r
	}
	blue := map[string]string{"network": "blue"}
	for _, tc := range []struct {
		name string
		cudn *ovnkv1.ClusterUserDefinedNetwork
		ras  []*ovnkv1.RouteAdvertisements
		want string
	}{{
		name: "Geneve",
		cudn: cudn("g", 1, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "a"),
		want: "True GeneveTransportAccepted: Geneve transport has been configured.",
	}, {
		name: "NoOverlay without RouteAdvertisements",
		cudn: noOverlay,
		ras: []*ovnkv1.RouteAdvertisements{
			ra("other", map[string]string{"network": "red"}, true, ovnkv1.AdvertisePodNetwork),
			ra("egress-only", blue, true, ovnkv1.AdvertiseEgressIP),
		},
		want: "False NoOverlayRouteAdvertisementsIsMissing: No RouteAdvertisements CR is advertising the pod networks.",
	}, {
		name: "NoOverlay with RouteAdvertisements not accepted",
		cudn: noOverlay,
		ras:  []*ovnkv1.RouteAdvertisements{ra("blue", blue, false, ovnkv1.AdvertisePodNetwork)},
		want: "False NoOverlayRouteAdvertisementsNotAccepted: RouteAdvertisements CR blue advertises the pod subnets, but its status is not accepted.",
	}, {
		name: "NoOverlay accepted",
		cudn: noOverlay,
		ras:  []*ovnkv1.RouteAdvertisements{ra("a-pending", blue, false, ovnkv1.AdvertisePodNetwork), ra("blue", blue, true, ovnkv1.AdvertiseEgressIP, ovnkv1.AdvertisePodNetwork)},
		want: "True NoOverlayTransportAccepted: Transport has been configured as 'no-overlay': RouteAdvertisements blue advertises the pod subnets. " +
			"ovnk does not program NoOverlay networks yet: the network's zones still carry its traffic between nodes in Geneve tunnels.",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := transportAccepted(tc.cudn, tc.ras)
			if got := string(c.Status) + " " + c.Reason + ": " + c.Message; got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestPlanStatusWrittenOnce: conditions are written when they change, and not again.
func TestPlanStatusWrittenOnce(t *testing.T) {
	s := clusterSnapshot()
	p := newTestPlanner(t)
	converge(t, p, s)
	for _, n := range s.nodes {
		n.Annotations[cluster.AnnotationZoneStatus] = `{"cluster_udn_blue":""}`
	}
	pl := p.plan(s)
	if len(pl.statuses) != 4 { // every NetworkReady message changes
		t.Fatalf("status writes for %d networks, want 4", len(pl.statuses))
	}
	s.apply(pl)
	if got := conditionsDump(s); !strings.Contains(got, "clusteruserdefinednetwork/blue NetworkReady True Programmed: ready on 3/3 nodes\n") {
		t.Fatalf("blue is not ready:\n%s", got)
	}
	if pl := p.plan(s); len(pl.statuses) != 0 {
		t.Fatalf("%d status writes for unchanged conditions", len(pl.statuses))
	}
}
