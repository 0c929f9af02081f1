package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// connectRouterKeys returns the connect router of cnc in a node's zone — its tunnel key
// and its ports with theirs — or ok false when the zone has none.
func connectRouterKeys(ctx context.Context, n *node, cnc string) (keys map[string]string, ok bool, err error) {
	snap, err := ovn.OwnedSnapshot(ctx, n.nbClient)
	if err != nil {
		return nil, false, err
	}
	ix := rows.NewIndex(snap)
	lr := ix.Router("connect_router_" + cnc)
	if lr == nil {
		return nil, false, nil
	}
	keys = map[string]string{"router": lr.Options["requested-tnl-key"]}
	for _, key := range lr.Ports {
		p := ix.RouterPorts[key]
		keys[p.Name] = fmt.Sprintf("%s %v key=%s", p.MAC, p.Networks, p.Options["requested-tnl-key"])
	}
	return keys, true, nil
}

// nodeSlots is how many links connect counts a Layer3 network's block must hold: one
// per node, or up to the highest node id if that is more (a link sits at twice the
// node's id).
func (ec *e2eCluster) nodeSlots(ctx context.Context) int {
	ec.t.Helper()
	var nodes corev1.NodeList
	if err := ec.c.List(ctx, &nodes); err != nil {
		ec.t.Fatal(err)
	}
	slots := len(nodes.Items)
	for _, n := range nodes.Items {
		id, ok, err := cluster.NodeIDCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		if err != nil || !ok {
			ec.t.Fatalf("node %s has no id yet (%v)", n.Name, err)
		}
		slots = max(slots, id+1)
	}
	return slots
}

// TestConnectThroughKubectl connects two networks with `kubectl ovnk connect` and follows
// packets with ovn-trace in one zone: a blue pod reaches a green pod only while the
// networks are connected, a third network is never reached (connectivity is not
// transitive), every zone holds the same connect router, and disconnect removes it
// everywhere.
func TestConnectThroughKubectl(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n1 := ec.nodes[0]
	ec.create(ctx,
		namespace("blue-c", map[string]string{"tenant": "blue-c"}),
		namespace("green-c", map[string]string{"tenant": "green-c"}),
		namespace("red-c", map[string]string{"tenant": "red-c"}),
		layer3CUDN("blue-c", "blue-c", "10.60.0.0/16"),
		layer3CUDN("green-c", "green-c", "10.61.0.0/16"),
		layer3CUDN("red-c", "red-c", "10.62.0.0/16"),
		pod("blue-c", "a", n1.name), pod("green-c", "b", n1.name), pod("red-c", "r", n1.name),
		pod("blue-c", "a2", ec.nodes[1].name), pod("green-c", "b2", ec.nodes[2].name),
	)
	nets := []string{"cluster_udn_blue-c", "cluster_udn_green-c", "cluster_udn_red-c"}
	ec.requireZonesMatch(ctx, ec.allCompiled(nets...))
	a := ec.podIface(ctx, "blue-c", "a", "blue-c/blue-c")
	b := ec.podIface(ctx, "green-c", "b", "green-c/green-c")
	r := ec.podIface(ctx, "red-c", "r", "red-c/red-c")
	// The node's own northd: a second one on the same NB would make nbctl --wait=sb
	// (Trace's sync) return when either SB caught up.
	northd := n1.northd

	sw := "cluster_udn_blue.c_" + n1.name
	portA, portB := "blue.c.blue.c_blue-c_a", "green.c.green.c_green-c_b"
	gwMAC := macOf(a.Gateways[0].String())
	// A packet blue's routers have no route for leaves the cluster through the node's
	// gateway, as to any address outside blue.
	uplink := "cluster_udn_blue.c_" + sandbox.GatewayBridge + "_" + n1.name
	// lands says which port a ping from blue's pod a to dst leaves through last.
	lands := func(dst string) (string, string) {
		t.Helper()
		flow := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && icmp4.type == 8`,
			portA, a.MAC, gwMAC, a.IPs[0].Addr(), dst)
		res, err := northd.Trace(ctx, sw, flow)
		if err != nil {
			t.Fatal(err)
		}
		return res.FinalPort(), res.Output
	}
	if port, out := lands(b.IPs[0].Addr().String()); port != uplink {
		t.Fatalf("blue's packet to green before any connect left through %q, want %s:\n%s", port, uplink, out)
	}

	ec.must(ctx, "connect", "blue-c", "green-c", "--name", "bg", "--subnet", "192.168.0.0/16", "--network-prefix", "24")
	ec.requireZonesMatch(ctx, ec.allCompiled(nets...))
	var first map[string]string
	for _, n := range ec.nodes {
		err := testenv.Eventually(ctx, 60*time.Second, "connect router in zone "+n.name, func(ctx context.Context) error {
			keys, ok, err := connectRouterKeys(ctx, n, "bg")
			if err != nil || !ok {
				return fmt.Errorf("no connect_router_bg yet: %v", err)
			}
			if first == nil {
				first = keys
				return nil
			}
			for name, want := range first {
				if got, ok := keys[name]; ok && got != want {
					return fmt.Errorf("port %s is %q in %s, %q in %s", name, got, n.name, want, ec.nodes[0].name)
				}
			}
			if keys["router"] != first["router"] || keys["router"] == "" {
				return fmt.Errorf("router tunnel key %q in %s, %q in the first zone", keys["router"], n.name, first["router"])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if port, out := lands(b.IPs[0].Addr().String()); port != portB {
		t.Errorf("blue's packet to green after connect left through %q, want %s:\n%s", port, portB, out)
	}
	if port, out := lands(r.IPs[0].Addr().String()); port != uplink {
		t.Errorf("blue's packet to red, which is in no connect with it, left through %q, want %s:\n%s", port, uplink, out)
	}
	listed := ec.must(ctx, "connections")
	if !strings.Contains(listed, "bg") {
		t.Errorf("connections does not list bg:\n%s", listed)
	}

	// A second connect of green with red: blue still does not reach red through green.
	ec.must(ctx, "connect", "green-c", "red-c", "--name", "gr", "--subnet", "192.169.0.0/16", "--network-prefix", "24")
	ec.requireZonesMatch(ctx, ec.allCompiled(nets...))
	if port, out := lands(r.IPs[0].Addr().String()); port != uplink {
		t.Errorf("blue's packet to red left through %q, want %s (connectivity must not be transitive):\n%s", port, uplink, out)
	}
	describe := ec.must(ctx, "connections", "describe", "gr")
	if !strings.Contains(describe, "green-c") || !strings.Contains(describe, "red-c") {
		t.Errorf("describe gr lacks its networks:\n%s", describe)
	}

	ec.refused(ctx, nil, "nope", "connect", "blue-c", "nope")
	ec.refused(ctx, nil, "192.168.0.0/16", "connect", "blue-c", "red-c", "--subnet", "192.168.0.0/16")
	ec.refused(ctx, nil, "10.60.0.0/16", "connect", "blue-c", "red-c", "--subnet", "10.60.0.0/16")
	// The join, transit, service and masquerade ranges are refused too.
	for _, reserved := range []string{"100.65.0.0/16", "100.88.0.0/16", "10.96.0.0/16", "169.254.0.0/17"} {
		ec.refused(ctx, nil, reserved, "connect", "blue-c", "red-c", "--subnet", reserved)
	}
	// A /30 block holds 4 addresses, but a Layer3 network needs a link of 2 addresses
	// per node (up to the highest node id): the message names how many.
	need := 2 * ec.nodeSlots(ctx)
	ec.refusedWith(ctx, nil, []string{"--subnet 192.170.0.0/28", "a block of 4 addresses", fmt.Sprintf("need 2 per node, %d ", need)},
		"connect", "blue-c", "red-c", "--subnet", "192.170.0.0/28", "--network-prefix", "30")

	// Networks that cannot be connected. Each is removed once refused: ovnk does not
	// program secondary networks, and the zones are compared again below.
	secondary := layer3CUDN("sec-c", "sec-c", "10.63.0.0/16")
	secondary.Spec.Network.Layer3.Role = ovnkv1.NetworkRoleSecondary
	inner := layer3CUDN("inner-c", "inner-c", "10.60.128.0/17") // inside blue-c's 10.60.0.0/16
	noOverlay := layer3CUDN("nooverlay-c", "nooverlay-c", "10.64.0.0/16")
	noOverlay.Spec.Network.Transport = ovnkv1.TransportOptionNoOverlay
	noOverlay.Spec.Network.NoOverlay = &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATEnabled, Routing: ovnkv1.RoutingManaged}
	ec.create(ctx, secondary, inner, noOverlay)
	ec.refused(ctx, nil, "secondary", "connect", "blue-c", "sec-c")
	ec.refusedWith(ctx, nil, []string{"networks blue-c (10.60.0.0/16) and inner-c (10.60.128.0/17) overlap"}, "connect", "blue-c", "inner-c")
	// Both networks and both CIDRs, whichever is named first.
	ec.refusedWith(ctx, nil, []string{"inner-c (10.60.128.0/17)", "blue-c (10.60.0.0/16)", "overlap"}, "connect", "inner-c", "green-c", "blue-c")
	ec.refusedWith(ctx, nil, []string{"network nooverlay-c cannot be connected: it uses transport NoOverlay", "leave it out"}, "connect", "blue-c", "nooverlay-c")
	for _, o := range []*ovnkv1.ClusterUserDefinedNetwork{secondary, inner, noOverlay} {
		if err := ec.c.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	ec.must(ctx, "disconnect", "bg")
	ec.requireZonesMatch(ctx, ec.allCompiled(nets...))
	for _, n := range ec.nodes {
		err := testenv.Eventually(ctx, 60*time.Second, "connect router gone from zone "+n.name, func(ctx context.Context) error {
			if _, ok, err := connectRouterKeys(ctx, n, "bg"); err != nil || ok {
				return fmt.Errorf("connect_router_bg still there (%v)", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if port, out := lands(b.IPs[0].Addr().String()); port != uplink {
		t.Errorf("blue's packet to green after disconnect left through %q, want %s:\n%s", port, uplink, out)
	}
}
