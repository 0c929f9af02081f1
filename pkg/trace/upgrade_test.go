package trace_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
)

// TestRollingLayer2Upgrade traces OKEP-5094's rolling upgrade across zones, at every
// step from all legacy to all upgraded: each pod reaches every other pod and every
// gateway router's join IP, and its traffic to the internet leaves through its own
// node's gateway router with the network's masquerade address. Between an upgraded and
// a legacy zone the packet crosses on the tunnel key of the legacy gateway port, which
// the upgraded zone gives its upgrade port.
func TestRollingLayer2Upgrade(t *testing.T) {
	joinIPs := map[string]string{"node1": "100.65.0.2", "node2": "100.65.0.3", "node3": "100.65.0.4"}
	podIPs := map[string]string{"green/pod-node1": "203.203.0.3", "green/pod-node2": "203.203.0.4", "green/pod-node3": "203.203.0.5"}
	for _, upgraded := range [][]string{nil, {"node1"}, {"node1", "node3"}, {"node1", "node2", "node3"}} {
		t.Run("upgraded="+strings.Join(upgraded, "+"), func(t *testing.T) {
			st := topologytest.Layer2Upgrade(upgraded...)
			c := compiled(t, st)
			sawUpgradePort := false
			for src := range podIPs {
				for dst, ip := range podIPs {
					if dst == src {
						continue
					}
					res := mustTrace(t, c, podRequest(t, c, src, "cluster_udn_green", ip))
					if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != dst {
						t.Errorf("%s to %s: %+v\n%s", src, dst, v, text(t, res))
					}
					if res.Reply == nil || res.Reply.Verdict.Kind != trace.Delivered || res.Reply.Verdict.Pod != src {
						t.Errorf("%s to %s: reply %+v\n%s", src, dst, res.Reply, text(t, res))
					}
				}
				for node, ip := range joinIPs {
					res := mustTrace(t, c, podRequest(t, c, src, "cluster_udn_green", ip))
					v := res.Forward.Verdict
					if v.Kind != trace.ToRouter || v.Zone != node || v.Datapath != "GR_cluster_udn_green_"+node {
						t.Errorf("%s to %s's join IP %s: %+v\n%s", src, node, ip, v, text(t, res))
					}
					if strings.Contains(text(t, res), "-upgrade") {
						sawUpgradePort = true
					}
				}
				res := mustTrace(t, c, podRequest(t, c, src, "cluster_udn_green", "8.8.8.8"))
				v := res.Forward.Verdict
				node := strings.TrimPrefix(src, "green/pod-")
				if v.Kind != trace.LeftCluster || v.Zone != node || v.Packet.IPSrc != "169.254.0.13" {
					t.Errorf("%s to the internet: %+v, want it out of %s as 169.254.0.13\n%s", src, v, node, text(t, res))
				}
			}
			mixed := len(upgraded) > 0 && len(upgraded) < 3
			if sawUpgradePort != mixed {
				t.Errorf("an upgrade port on a path: %v, want %v (only while some nodes are upgraded and some not)", sawUpgradePort, mixed)
			}
		})
	}
}

// TestConnectToALegacyNodesPodLeaksNothing: while ovn-worker2 is still legacy, blue's
// traffic to yellow's pod there is routed into yellow's switch by the upgraded zones,
// but the legacy gateway router drops the pod's reply instead of sending it out of the
// cluster; a pod of an upgraded node is reached and answers.
func TestConnectToALegacyNodesPodLeaksNothing(t *testing.T) {
	st := topologytest.MixedConnect()
	legacy := st.Node("ovn-worker2")
	legacy.Layer2TopologyVersion = ""
	for _, n := range st.Nodes {
		n.Layer2GatewayTunnelIDs = map[string]int{"yellow_yellow-network": 10 + n.ID}
	}
	c := compiled(t, st)
	res := mustTrace(t, c, podRequest(t, c, "blue/web", "blue_blue-network", "105.105.0.6"))
	if res.Reply == nil || res.Reply.Verdict.Kind != trace.Dropped || res.Reply.Verdict.Zone != "ovn-worker2" ||
		res.Reply.Hops[len(res.Reply.Hops)-1].Stage != trace.StagePolicy {
		t.Errorf("the reply from yellow/gw-b on the legacy node: %+v, want dropped by a policy on ovn-worker2\n%s", res.Reply, text(t, res))
	}
	res = mustTrace(t, c, podRequest(t, c, "blue/web", "blue_blue-network", "105.105.0.5"))
	if res.Reply == nil || res.Reply.Verdict.Kind != trace.Delivered || res.Reply.Verdict.Pod != "blue/web" {
		t.Errorf("to yellow/gw-a on an upgraded node: reply %+v\n%s", res.Reply, text(t, res))
	}
	// A blue pod on the legacy node: what it sends to yellow stops on its router, and so
	// does its reply to yellow's pods, instead of leaving the cluster.
	w2 := &cluster.Pod{Namespace: "blue", Name: "w2", Node: "ovn-worker2", Networks: map[string]cluster.PodInterface{
		"blue_blue-network": {IPs: []netip.Prefix{netip.MustParsePrefix("103.103.1.7/24")}, MAC: "0a:58:67:67:01:07", Role: "primary"},
	}}
	st.Pods = append(st.Pods, w2)
	c = compiled(t, st)
	res = mustTrace(t, c, podRequest(t, c, "blue/w2", "blue_blue-network", "105.105.0.5"))
	if v := res.Forward.Verdict; v.Kind != trace.Dropped || res.Forward.Hops[len(res.Forward.Hops)-1].Stage != trace.StagePolicy {
		t.Errorf("blue/w2 on the legacy node to yellow: %+v, want dropped by a policy\n%s", v, text(t, res))
	}
	res = mustTrace(t, c, podRequest(t, c, "yellow/gw-a", "yellow_yellow-network", "103.103.1.7"))
	if res.Reply == nil || res.Reply.Verdict.Kind != trace.Dropped || res.Reply.Hops[len(res.Reply.Hops)-1].Stage != trace.StagePolicy {
		t.Errorf("yellow/gw-a to blue/w2 on the legacy node: reply %+v, want dropped by a policy\n%s", res.Reply, text(t, res))
	}
}
