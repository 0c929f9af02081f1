package topology_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// withRed adds to OKEP-5224's cluster a third Layer3 network, red (150.10.0.0/16), that
// no connect selects, with a pod on ovn-worker.
func withRed(st *cluster.State) *cluster.State {
	red := &cluster.Network{
		Name: "red_red-network", Topology: cluster.Layer3, Role: cluster.Primary, MTU: 1400, Transport: cluster.Geneve,
		Subnets:     []cluster.Subnet{{CIDR: netip.MustParsePrefix("150.10.0.0/16"), HostSubnet: 24}},
		JoinSubnets: []netip.Prefix{netip.MustParsePrefix("100.65.0.0/16")}, TransitSubnets: []netip.Prefix{netip.MustParsePrefix("100.88.0.0/16")},
		ID: 3, TunnelKeys: []int{16711686}, Namespaces: []string{"red"},
		Owner: cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: "red", Name: "red-network"},
	}
	st.Networks = append(st.Networks, red)
	for i, n := range st.Nodes {
		n.Subnets[red.Name] = []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{150, 10, byte(i), 0}), 24)}
	}
	st.Pods = append(st.Pods, &cluster.Pod{Namespace: "red", Name: "api", Node: "ovn-worker", Networks: map[string]cluster.PodInterface{
		red.Name: {IPs: []netip.Prefix{netip.MustParsePrefix("150.10.1.7/24")}, MAC: "0a:58:96:0a:01:07", Role: "primary"},
	}})
	return st
}

// traceCase is a microflow, the datapath it enters, the port it must end in (the last
// hop, patch ports included) and ports it must pass.
type traceCase struct {
	name, datapath, flow, last string
	via                        []string
}

// traceZone loads a compiled zone into a real NB with ovn-northd and runs the cases
// through ovn-trace.
func traceZone(t *testing.T, res *topology.Result, gatewayRouters []string, cases []traceCase) {
	t.Helper()
	northd := loadZone(t, res)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The gateway routers learn the external gateway's MAC by ARP; without it a trace
	// ends in the ARP request.
	for _, gr := range gatewayRouters {
		if err := northd.LearnNeighbor(ctx, gr, "rtoe-"+gr, "172.18.0.1", "02:42:ac:12:00:01"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := northd.Trace(ctx, tc.datapath, tc.flow)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hops) == 0 || !strings.HasPrefix(res.Hops[len(res.Hops)-1], tc.last+" (") {
				t.Fatalf("the packet ended at %v, want %s:\n%s", res.Hops, tc.last, res.Output)
			}
			hops := strings.Join(res.Hops, " → ")
			for _, h := range tc.via {
				if !strings.Contains(hops, h+" (") {
					t.Errorf("the path %s does not pass %s", hops, h)
				}
			}
			if len(tc.via) == 0 && strings.Contains(hops, "crtor-") {
				t.Errorf("the packet went through a connect router: %s", hops)
			}
		})
	}
}

const (
	bluePod                 = `inport == "blue.blue.network_blue_web" && eth.src == 0a:58:64:0a:02:05 && eth.dst == 0a:58:64:0a:02:01 && ip4.src == 100.10.2.5 && ip.ttl == 64 && icmp4.type == 8`
	greenPod                = `inport == "green.green.network_green_db" && eth.src == 0a:58:c8:0a:02:06 && eth.dst == 0a:58:c8:0a:02:01 && ip4.src == 200.10.2.6 && ip.ttl == 64 && icmp4.type == 0`
	blueSwitch, greenSwitch = "blue_blue.network_ovn-worker", "green_green.network_ovn-worker"
)

var okepGatewayRouters = []string{"GR_blue_blue.network_ovn-worker", "GR_green_green.network_ovn-worker"}

// TestConnectForwardsInRealOVN loads ovn-worker's zone of OKEP-5224's cluster, with a
// third network red that no connect selects, into a real NB and follows packets with
// ovn-trace: a blue pod reaches the green pod on its node through blue's 9001 policy,
// the link, the connect router's route and green's router, and the reply comes back the
// same way; a packet for a green pod on another node leaves by that node's link. Red
// stays unreachable: connects are not transitive, and red is in none.
//
// The connect router is a transit router: its port towards another node is remote, and
// a trace in this one zone ends in the ARP/ND request for the next hop that the zone
// sends through the tunnel, out of that port. Every hop inside the zone is real.
func TestConnectForwardsInRealOVN(t *testing.T) {
	res, err := topology.Compile(withRed(topologytest.OKEP5224()), "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	traceZone(t, res, okepGatewayRouters, []traceCase{
		{"blue pod to green pod", blueSwitch, bluePod + ` && ip4.dst == 200.10.2.6`, "green.green.network_green_db",
			[]string{"rtocr-blue_blue.network_ovn-worker_colored-enterprise", "crtor-colored-enterprise_green_green.network_ovn-worker", "rtos-green_green.network_ovn-worker"}},
		{"green pod replies to blue pod", greenSwitch, greenPod + ` && ip4.dst == 100.10.2.5`, "blue.blue.network_blue_web",
			[]string{"rtocr-green_green.network_ovn-worker_colored-enterprise", "crtor-colored-enterprise_blue_blue.network_ovn-worker", "rtos-blue_blue.network_ovn-worker"}},
		{"blue pod to a green pod on ovn-control-plane", blueSwitch, bluePod + ` && ip4.dst == 200.10.0.9`, "crtor-colored-enterprise_green_green.network_ovn-control-plane",
			[]string{"rtocr-blue_blue.network_ovn-worker_colored-enterprise"}},
		{"blue pod to red pod, red not connected", blueSwitch, bluePod + ` && ip4.dst == 150.10.1.7`, "blue_blue.network_breth0_ovn-worker", nil},
	})
}

// TestDisconnectedNetworksStayApartInRealOVN is the same zone without the connect: the
// blue pod's packet for the green pod leaves by blue's gateway router like any traffic
// for an address outside the network, and is never delivered to green.
func TestDisconnectedNetworksStayApartInRealOVN(t *testing.T) {
	st := withRed(topologytest.OKEP5224())
	st.Connects = nil
	res, err := topology.Compile(st, "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	traceZone(t, res, okepGatewayRouters, []traceCase{
		{"blue pod to green pod", blueSwitch, bluePod + ` && ip4.dst == 200.10.2.6`, "blue_blue.network_breth0_ovn-worker", nil},
		{"green pod to blue pod", greenSwitch, greenPod + ` && ip4.dst == 100.10.2.5`, "green_green.network_breth0_ovn-worker", nil},
	})
}

// TestMixedConnectForwardsInRealOVN follows packets between the Layer3 network blue and
// the Layer2 network yellow in ovn-worker's zone: through blue's cluster router, the
// connect router and yellow's transit router to the yellow pod on this node, or to the
// remote port of the yellow pod on ovn-worker2; and back from yellow's transit router.
func TestMixedConnectForwardsInRealOVN(t *testing.T) {
	res, err := topology.Compile(topologytest.MixedConnect(), "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	const (
		blue   = `inport == "blue.blue.network_blue_web" && eth.src == 0a:58:67:67:02:05 && eth.dst == 0a:58:67:67:02:01 && ip4.src == 103.103.2.5 && ip.ttl == 64 && icmp4.type == 8`
		yellow = `inport == "yellow.yellow.network_yellow_gw-a" && eth.src == 0a:58:69:69:00:05 && eth.dst == 0a:58:69:69:00:01 && ip4.src == 105.105.0.5 && ip.ttl == 64 && icmp4.type == 0`
	)
	traceZone(t, res, nil, []traceCase{
		{"blue pod to yellow pod on this node", "blue_blue.network_ovn-worker", blue + ` && ip4.dst == 105.105.0.5`, "yellow.yellow.network_yellow_gw-a",
			[]string{"rtocr-blue_blue.network_ovn-worker_mixed", "crtor-mixed_yellow_yellow.network", "trtos-yellow_yellow.network_ovn_layer2_switch"}},
		{"blue pod to yellow pod on ovn-worker2", "blue_blue.network_ovn-worker", blue + ` && ip4.dst == 105.105.0.6`, "yellow.yellow.network_yellow_gw-b",
			[]string{"crtor-mixed_yellow_yellow.network"}},
		{"yellow pod replies to blue pod", "yellow_yellow.network_ovn_layer2_switch", yellow + ` && ip4.dst == 103.103.2.5`, "blue.blue.network_blue_web",
			[]string{"rtocr-yellow_yellow.network_mixed", "crtor-mixed_blue_blue.network_ovn-worker", "rtos-blue_blue.network_ovn-worker"}},
	})
}
