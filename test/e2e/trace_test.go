package e2e

import (
	"context"
	"encoding/json"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/trace"
)

// traceJSON runs `kubectl ovnk trace args… -o json` and decodes the result.
func (ec *e2eCluster) traceJSON(ctx context.Context, args ...string) *trace.Result {
	ec.t.Helper()
	out := ec.must(ctx, append(append([]string{"trace"}, args...), "-o", "json")...)
	var res trace.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Forward == nil {
		ec.t.Fatalf("trace %v -o json: %v\n%s", args, err, out)
	}
	return &res
}

// zonesOf lists the zones a path went through, in order, each once.
func zonesOf(p *trace.Path) []string {
	var zones []string
	for _, h := range p.Hops {
		if len(zones) == 0 || zones[len(zones)-1] != h.Zone {
			zones = append(zones, h.Zone)
		}
	}
	return zones
}

// TestTraceAcrossZonesThroughKubectl traces packets through the real kubectl across
// the zones of three agents: a Layer3 pod reaches a pod on another node and the reply
// comes back, a Layer2 pod reaches a pod on another node through the network's
// switch, a pod does not reach a pod of a network it is not connected to and the
// verdict says why, a packet to the internet leaves through its node's gateway
// router, and a saved trace replays without the cluster.
func TestTraceAcrossZonesThroughKubectl(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n1, n2, n3 := ec.nodes[0].name, ec.nodes[1].name, ec.nodes[2].name
	ec.create(ctx,
		namespace("l3-r", map[string]string{"tenant": "l3-r"}),
		namespace("l2-r", map[string]string{"tenant": "l2-r"}),
		namespace("iso-r", map[string]string{"tenant": "iso-r"}),
		layer3CUDN("l3-r", "l3-r", "10.70.0.0/16"),
		layer2CUDN("l2-r", "l2-r", "10.71.0.0/16"),
		layer3CUDN("iso-r", "iso-r", "10.72.0.0/16"),
		pod("l3-r", "a", n1), pod("l3-r", "b", n2),
		pod("l2-r", "a", n1), pod("l2-r", "b", n3),
		pod("iso-r", "c", n2),
	)
	ec.podIface(ctx, "l3-r", "a", "l3-r/l3-r")
	ec.podIface(ctx, "l3-r", "b", "l3-r/l3-r")
	ec.podIface(ctx, "l2-r", "a", "l2-r/l2-r")
	ec.podIface(ctx, "l2-r", "b", "l2-r/l2-r")
	c := ec.podIface(ctx, "iso-r", "c", "iso-r/iso-r")
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_l3-r", "cluster_udn_l2-r", "cluster_udn_iso-r"))

	t.Run("layer3 pod to a remote pod and back", func(t *testing.T) {
		res := ec.traceJSON(ctx, "l3-r/a", "l3-r/b")
		if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != "l3-r/b" || v.Zone != n2 {
			t.Fatalf("verdict %+v, want delivered to l3-r/b in %s's zone", v, n2)
		}
		if got := zonesOf(res.Forward); !slices.Equal(got, []string{n1, n2}) {
			t.Errorf("forward through zones %v, want %s then %s", got, n1, n2)
		}
		if res.Reply == nil || res.Reply.Verdict.Kind != trace.Delivered || res.Reply.Verdict.Pod != "l3-r/a" || res.Reply.Verdict.Zone != n1 {
			t.Errorf("the reply did not come back to l3-r/a: %+v", res.Reply)
		}
		text := ec.must(ctx, "trace", "a", "b", "-n", "l3-r")
		if !strings.Contains(text, "DELIVERED: delivered to pod l3-r/b on "+n2) || strings.Contains(text, "\x1b[") {
			t.Errorf("the text lacks the verdict line, or is coloured on a pipe:\n%s", text)
		}
	})

	t.Run("layer2 pod to a remote pod through the switch", func(t *testing.T) {
		res := ec.traceJSON(ctx, "l2-r/a", "l2-r/b")
		if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != "l2-r/b" || v.Zone != n3 {
			t.Fatalf("verdict %+v, want delivered to l2-r/b in %s's zone", v, n3)
		}
		for _, h := range res.Forward.Hops {
			if h.Datapath != "cluster_udn_l2.r_ovn_layer2_switch" {
				t.Errorf("hop %+v is not on the network's layer2 switch", h)
			}
		}
		if got := zonesOf(res.Forward); !slices.Equal(got, []string{n1, n3}) {
			t.Errorf("forward through zones %v, want %s then %s", got, n1, n3)
		}
		if res.Reply == nil || res.Reply.Verdict.Pod != "l2-r/a" {
			t.Errorf("the reply did not come back to l2-r/a: %+v", res.Reply)
		}
	})

	t.Run("layer2 pod to another node's gateway router through the transit router", func(t *testing.T) {
		// The gateway router of node3 keeps its join IP, 100.65.0.0/16 plus the node's
		// id; a pod on node1 reaches it over the transit router, which hands the packet
		// to node3's zone at its port for that gateway router (OKEP-5094).
		var n3obj corev1.Node
		if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Name: n3}, &n3obj); err != nil {
			t.Fatal(err)
		}
		id, ok, err := cluster.NodeIDCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n3}, n3obj.Annotations)
		if err != nil || !ok {
			t.Fatalf("node %s has no id (%v)", n3, err)
		}
		joinIP := netip.AddrFrom4([4]byte{100, 65, byte(id >> 8), byte(id)})
		res := ec.traceJSON(ctx, "l2-r/a", joinIP.String(), "--no-reply")
		v := res.Forward.Verdict
		if v.Kind != trace.ToRouter || v.Zone != n3 || v.Datapath != "GR_cluster_udn_l2.r_"+n3 {
			t.Fatalf("verdict %+v, want answered by %s's gateway router in its zone", v, n3)
		}
		handoff := slices.IndexFunc(res.Forward.Hops, func(h trace.Hop) bool {
			return h.Stage == trace.StageHandoff && h.Kind == "router" && h.Datapath == "cluster_udn_l2.r_transit_router"
		})
		if handoff < 0 || res.Forward.Hops[handoff].Zone != n1 {
			t.Errorf("no handoff from %s's transit router to %s: %+v", n1, n3, res.Forward.Hops)
		}
	})

	t.Run("pod to a pod of an unconnected network", func(t *testing.T) {
		res := ec.traceJSON(ctx, "l3-r/a", "iso-r/c")
		v := res.Forward.Verdict
		if res.Forward.Packet.IPDst != c.IPs[0].Addr().String() {
			t.Errorf("traced to %s, want iso-r/c's %s", res.Forward.Packet.IPDst, c.IPs[0].Addr())
		}
		if v.Kind == trace.Delivered || !strings.Contains(v.Reason, "iso-r/c") {
			t.Errorf("verdict %+v: want not delivered, with a reason naming iso-r/c", v)
		}
	})

	t.Run("pod to the internet leaves through its gateway router", func(t *testing.T) {
		res := ec.traceJSON(ctx, "l3-r/a", "8.8.8.8")
		v := res.Forward.Verdict
		if v.Kind != trace.LeftCluster || v.Zone != n1 || !strings.Contains(v.Reason, "left the cluster via "+n1) {
			t.Fatalf("verdict %+v, want left the cluster via %s", v, n1)
		}
		snat := slices.IndexFunc(res.Forward.Hops, func(h trace.Hop) bool {
			return h.Stage == trace.StageSNAT && h.Datapath == "GR_cluster_udn_l3.r_"+n1
		})
		if snat < 0 {
			t.Errorf("no SNAT on %s's gateway router: %+v", n1, res.Forward.Hops)
		}
	})

	t.Run("a saved trace replays without the cluster", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "trace.json")
		live := ec.must(ctx, "trace", "l3-r/a", "l3-r/b", "--save", file)
		r := ec.ovnk(ctx, []string{"KUBECONFIG=" + filepath.Join(t.TempDir(), "none")}, "trace", "--from-file", file)
		if r.err != nil || r.stdout != live {
			t.Errorf("replay: %v\n%s\nlive:\n%s", r.err, r.stdout+r.stderr, live)
		}
	})

	ec.refused(ctx, nil, `no pod "nope" in namespace "l3-r"`, "trace", "l3-r/nope", "l3-r/a")
	ec.refused(ctx, nil, "SRC 10.99.0.1 is no pod's address", "trace", "10.99.0.1", "l3-r/a")
}
