package trace_test

import (
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
)

// A primary UDN pod's packet to its own node's address is rerouted to the network's
// management port and SNATed to the network's management masquerade address on the
// way. The host answers from its own address, which no router port of the network
// serves, to the masquerade address, through the management port's gateway (the
// router port that answers ARP for that address: the sandbox's real packets show the
// host's neighbour entry). The reply is traced from there, un-SNATed and delivered
// back to the pod, on Layer3 and Layer2, IPv4 and IPv6. Before, the reply stopped at
// once: "switch … has neither 169.254.0.12 nor a router port serving 172.18.0.2".
func TestUDNPodToItsNodeIsAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fixture  func() *cluster.State
		pod, dst string
	}{
		{"layer3", topologytest.Layer3, "blue/web", "172.18.0.2"},
		{"layer3 ipv6", topologytest.Layer3, "blue/web", "fc00:f853:ccd:e793::2"},
		{"layer2", topologytest.OKEP5094, "test12/vm-a", "172.18.0.3"},
		{"layer2 ipv6", topologytest.OKEP5094, "test12/vm-a", "fc00:f853:ccd:e793::3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compiled(t, tc.fixture())
			res := mustTrace(t, c, podRequest(t, c, tc.pod, "", tc.dst))
			fwd := res.Forward.Verdict
			if fwd.Kind != trace.Delivered || fwd.Pod != "" || fwd.Packet.IPSrc == res.Forward.Packet.IPSrc {
				t.Fatalf("forward verdict %+v, want delivered to the management port, SNATed:\n%s", fwd, text(t, res))
			}
			if res.Reply == nil {
				t.Fatalf("no reply traced:\n%s", text(t, res))
			}
			start, back := res.Reply.Packet, res.Reply.Verdict
			if start.InPort != fwd.Port || start.IPSrc != tc.dst || start.IPDst != fwd.Packet.IPSrc {
				t.Errorf("reply starts as %+v, want %s → %s from port %s", start, tc.dst, fwd.Packet.IPSrc, fwd.Port)
			}
			if back.Kind != trace.Delivered || back.Pod != tc.pod || back.Packet.IPDst != res.Forward.Packet.IPSrc {
				t.Errorf("the node's answer ends %+v, want delivered to %s at %s:\n%s", back, tc.pod, res.Forward.Packet.IPSrc, text(t, res))
			}
		})
	}
}
