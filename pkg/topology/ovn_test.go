package topology_test

import (
	"context"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// loadZone writes a compiled zone into a real NB in one transaction, and starts
// ovn-northd on it.
func loadZone(t *testing.T, res *topology.Result) *testenv.Northd {
	t.Helper()
	return nbtest.WithNorthd(t, res.Rows)
}

// TestLayer3ZoneForwardsInRealOVN loads node1's zone of the Layer3 fixture into a real
// NB and follows packets with ovn-trace: east-west to another node leaves through that
// node's transit switch port, north-south through the gateway router with the right
// SNAT, host-bound through the management port, and networks stay apart: a default
// network pod cannot reach a primary-UDN pod's default-network address, nor can that
// port send, while the node (its management port, the kubelet's probes) reaches it.
func TestLayer3ZoneForwardsInRealOVN(t *testing.T) {
	res, err := topology.Compile(topologytest.Layer3(), "node1")
	if err != nil {
		t.Fatal(err)
	}
	northd := loadZone(t, res)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The gateway routers learn the external gateway's MAC by ARP; without it a trace
	// ends in the ARP request, before SNAT.
	for _, gr := range []string{"GR_node1", "GR_cluster_udn_blue_node1"} {
		if err := northd.LearnNeighbor(ctx, gr, "rtoe-"+gr, "172.18.0.1", "02:42:ac:12:00:01"); err != nil {
			t.Fatal(err)
		}
	}

	const (
		defPod  = `inport == "default_client" && eth.src == 0a:58:0a:f4:00:06 && eth.dst == 0a:58:0a:f4:00:01 && ip4.src == 10.244.0.6 && ip.ttl == 64 && icmp4.type == 8`
		locked  = `inport == "blue_web" && eth.src == 0a:58:0a:f4:00:05 && eth.dst == 0a:58:0a:f4:00:01 && ip4.src == 10.244.0.5 && ip.ttl == 64 && icmp4.type == 8`
		toWeb   = `eth.dst == 0a:58:0a:f4:00:05 && ip4.dst == 10.244.0.5 && ip.ttl == 64 && tcp && tcp.dst == 8080`
		isolate = "@" + "a8747502060113802905"
		bluePod = `inport == "blue.blue_blue_web" && eth.src == 0a:58:0a:0a:00:05 && eth.dst == 0a:58:0a:0a:00:01 && ip4.src == 10.10.0.5 && ip.ttl == 64 && icmp4.type == 8`
	)
	cases := []struct {
		name, datapath, flow, port, also string
	}{
		{"default pod to a pod on node2", "node1", defPod + ` && ip4.dst == 10.244.1.7`, "tstor-node2", ""},
		{"blue pod to a blue pod on node3", "cluster_udn_blue_node1", bluePod + ` && ip4.dst == 10.10.2.9`, "cluster_udn_blue_tstor-node3", ""},
		{"default pod to the internet", "node1", defPod + ` && ip4.dst == 8.8.8.8`, "breth0_node1", "ct_snat(172.18.0.2,32768-60999)"},
		{"blue pod to the internet", "cluster_udn_blue_node1", bluePod + ` && ip4.dst == 8.8.8.8`, "cluster_udn_blue_breth0_node1", "ct_snat(169.254.0.13,32768-60999)"},
		{"default pod to its own node", "node1", defPod + ` && ip4.dst == 172.18.0.2`, "k8s-node1", ""},
		{"blue pod cannot reach the default network's pods", "cluster_udn_blue_node1", bluePod + ` && ip4.dst == 10.244.1.7`, "cluster_udn_blue_breth0_node1", ""},
		{"a default pod cannot reach a primary-UDN pod's default address", "node1", `inport == "default_client" && eth.src == 0a:58:0a:f4:00:06 && ip4.src == 10.244.0.6 && ` + toWeb, "", "outport == " + isolate},
		{"the node reaches a primary-UDN pod's default address", "node1", `inport == "k8s-node1" && eth.src == 0a:58:0a:f4:00:02 && ip4.src == 10.244.0.2 && ` + toWeb, "blue_web", "outport == " + isolate + " && (ip4.src==10.244.0.2"},
		{"a primary-UDN pod's default port sends nothing", "node1", locked + ` && ip4.dst == 10.244.1.7`, "", "inport == " + isolate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := northd.Trace(ctx, tc.datapath, tc.flow)
			if err != nil {
				t.Fatal(err)
			}
			if res.FinalPort() != tc.port || (tc.port == "" && !res.Dropped) {
				t.Fatalf("packet left through %q (hops %v, dropped %v), want %q:\n%s", res.FinalPort(), res.Hops, res.Dropped, tc.port, res.Output)
			}
			if tc.also != "" && !strings.Contains(res.Output, tc.also) {
				t.Errorf("trace lacks %s:\n%s", tc.also, res.Output)
			}
		})
	}
}

// TestLayer2ZoneIsAcceptedByRealNB writes the OKEP-5094 zone into a real NB: every row
// and reference is valid for the schema. (Tracing it needs OVN 25.03's transit routers,
// which the Debian OVN on these machines predates.)
func TestLayer2ZoneIsAcceptedByRealNB(t *testing.T) {
	res, err := topology.Compile(topologytest.OKEP5094(), "ovn-control-plane")
	if err != nil {
		t.Fatal(err)
	}
	northd := loadZone(t, res)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := northd.NB.NBCtl(ctx, "lr-route-list", "test12_namespace.scoped_transit_router")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "100.88.0.9 src-ip") {
		t.Errorf("ovn-nbctl does not list the transit router's src-ip route:\n%s", out)
	}
}
