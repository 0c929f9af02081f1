package topology_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// upgradeTrace is one microflow traced by the real ovn-trace in one zone of the
// rolling upgrade, and where it must go.
type upgradeTrace struct {
	name, datapath, flow string
	// port is the last port the packet leaves through.
	port string
	// via are ports the path must cross, in any order (patch ports included).
	via []string
	// also is text the trace must contain (a rewritten MAC, a NAT).
	also string
}

// Pods of the Layer2Upgrade fixture, sending from their own ports.
const (
	l2Switch = "cluster_udn_green_ovn_layer2_switch"
	pod1     = `inport == "green.green_green_pod-node1" && eth.src == 0a:58:cb:cb:00:03 && ip4.src == 203.203.0.3 && ip.ttl == 64 && icmp4.type == 8`
	pod2     = `inport == "green.green_green_pod-node2" && eth.src == 0a:58:cb:cb:00:04 && ip4.src == 203.203.0.4 && ip.ttl == 64 && icmp4.type == 8`
	// pod1's gateway on an upgraded node is the transit router's port; pod2's on a
	// legacy node is its gateway router's.
	toTransitGW = ` && eth.dst == 0a:58:cb:cb:00:01`
	toLegacyGW2 = ` && eth.dst == 0a:58:64:41:00:03`
)

// TestRollingUpgradeForwardsInRealOVN follows OKEP-5094's walk-through of a cluster
// mid-upgrade with the real ovn-trace, in the zone of an upgraded node (node1) and of a
// legacy one (node2): pod to pod across the two, and a pod to every gateway router's
// join IP, which is what service replies and EgressIP traffic use.
func TestRollingUpgradeForwardsInRealOVN(t *testing.T) {
	st := topologytest.Layer2Upgrade("node1")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	zones := map[string][]upgradeTrace{
		"node1": {
			{name: "pod to a legacy node's pod", datapath: l2Switch, flow: pod1 + ` && eth.dst == 0a:58:cb:cb:00:04 && ip4.dst == 203.203.0.4`,
				port: "green.green_green_pod-node2"},
			// pod1 -> 100.65.0.3: the /32 route via the upgrade port, resolved by the
			// legacy gateway router's remote port, out with its tunnel key.
			{name: "pod to a legacy node's join IP", datapath: l2Switch, flow: pod1 + toTransitGW + ` && ip4.dst == 100.65.0.3`,
				port: "stor-GR_cluster_udn_green_node2", via: []string{"trtos-" + l2Switch + "-upgrade"},
				also: "eth.dst = 0a:58:64:41:00:03"},
			{name: "pod to another legacy node's join IP", datapath: l2Switch, flow: pod1 + toTransitGW + ` && ip4.dst == 100.65.0.4`,
				port: "stor-GR_cluster_udn_green_node3", via: []string{"trtos-" + l2Switch + "-upgrade"}},
			// What a legacy node sends to node1's gateway router (its join IP and MAC, as
			// it still knows them) arrives on the upgrade port and reaches the gateway
			// router through the transit router's peer pair; the gateway router answers
			// the ping, and the reply goes back to the pod's node.
			{name: "a legacy node's pod to this node's join IP", datapath: l2Switch,
				flow: pod2 + ` && eth.dst == 0a:58:64:41:00:02 && ip4.dst == 100.65.0.2`,
				port: "green.green_green_pod-node2", via: []string{"stotr-" + l2Switch + "-upgrade", "trtor-GR_cluster_udn_green_node1", "rtotr-GR_cluster_udn_green_node1"},
				also: "icmp4.type = 0"},
			{name: "pod to its own gateway router's join IP", datapath: l2Switch, flow: pod1 + toTransitGW + ` && ip4.dst == 100.65.0.2`,
				port: "green.green_green_pod-node1", via: []string{"trtor-GR_cluster_udn_green_node1", "rtotr-GR_cluster_udn_green_node1"},
				also: "icmp4.type = 0"},
			{name: "pod to the internet", datapath: l2Switch, flow: pod1 + toTransitGW + ` && ip4.dst == 8.8.8.8`,
				port: "cluster_udn_green_breth0_node1", also: "ct_snat(169.254.0.13,32768-60999)"},
		},
		"node2": {
			{name: "pod to an upgraded node's pod", datapath: l2Switch, flow: pod2 + ` && eth.dst == 0a:58:cb:cb:00:03 && ip4.dst == 203.203.0.3`,
				port: "green.green_green_pod-node1"},
			// pod2 -> 100.65.0.2: the gateway router's connected join subnet, resolved by
			// the upgraded node's remote gateway port, out with its old tunnel key (4),
			// which node1 now gives its upgrade port.
			{name: "pod to an upgraded node's join IP", datapath: l2Switch, flow: pod2 + toLegacyGW2 + ` && ip4.dst == 100.65.0.2`,
				port: "stor-GR_cluster_udn_green_node1", via: []string{"rtos-" + l2Switch}, also: "eth.dst = 0a:58:64:41:00:02"},
			{name: "pod to a legacy node's join IP", datapath: l2Switch, flow: pod2 + toLegacyGW2 + ` && ip4.dst == 100.65.0.4`,
				port: "stor-GR_cluster_udn_green_node3"},
			// The legacy gateway router holds the management port's SNAT too (169.254.0.14,
			// matched on the management port's MAC): a pod's packet, which the match
			// excludes, leaves with the network's masquerade address.
			{name: "pod to the internet", datapath: l2Switch, flow: pod2 + toLegacyGW2 + ` && ip4.dst == 8.8.8.8`,
				port: "cluster_udn_green_breth0_node2", via: []string{"stor-GR_cluster_udn_green_node2", "rtoe-GR_cluster_udn_green_node2"},
				also: "ct_snat(169.254.0.13,32768-60999)"},
		},
	}
	for node, cases := range zones {
		t.Run(node, func(t *testing.T) {
			res, err := topology.Compile(st, node)
			if err != nil {
				t.Fatal(err)
			}
			northd := loadZone(t, res)
			gr := "GR_cluster_udn_green_" + node
			if err := northd.LearnNeighbor(ctx, gr, "rtoe-"+gr, "172.18.0.1", "02:42:ac:12:00:01"); err != nil {
				t.Fatal(err)
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					got, err := northd.Trace(ctx, tc.datapath, tc.flow)
					if err != nil {
						t.Fatal(err)
					}
					checkUpgradeTrace(t, tc, got)
				})
			}
		})
	}
}

func checkUpgradeTrace(t *testing.T, tc upgradeTrace, got testenv.TraceResult) {
	t.Helper()
	if got.FinalPort() != tc.port {
		t.Fatalf("packet left through %q (hops %v), want %s:\n%s", got.FinalPort(), got.Hops, tc.port, got.Output)
	}
	for _, via := range tc.via {
		if !strings.Contains(strings.Join(got.Hops, " "), via+" (") {
			t.Errorf("path %v does not cross %s:\n%s", got.Hops, via, got.Output)
		}
	}
	if tc.also != "" && !strings.Contains(got.Output, tc.also) {
		t.Errorf("trace lacks %s:\n%s", tc.also, got.Output)
	}
}
