package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// The Layer2 network of the upgrade test: a /24, longer than the join subnet's /16, so
// that the per-join-IP routes of the upgrade topology are what makes join IPs reachable.
const (
	upgradeNS      = "l2-u"
	upgradeNetwork = "cluster_udn_l2-u"
	upgradeNAD     = "l2-u/l2-u"
	upgradePrefix  = "cluster_udn_l2.u_"
	upgradeSwitch  = upgradePrefix + "ovn_layer2_switch"
	upgradeCIDR    = "10.74.0.0/24"
)

// TestLayer2RollingUpgrade is OKEP-5094's rolling upgrade across three zones. Every node
// starts on the legacy Layer2 topology (agents with --layer2-topology=v1) with a pod of
// the network on every node. One node at a time is drained and its agent restarted on
// v2; after each step pods reach each other across a legacy and an upgraded node and
// every gateway router's join IP (the cross-zone trace through the real kubectl, and
// ovn-trace inside the upgraded zone along the OKEP's walk-through), and
// `kubectl ovnk upgrade-status` shows where things stand. A node whose Layer2 pod still
// runs is never converted, and an agent killed halfway through a conversion converges.
// At the end no zone holds an upgrade artifact, and reconciling again changes nothing.
func TestLayer2RollingUpgrade(t *testing.T) {
	ec := newCluster(t, "--layer2-topology="+config.Layer2TopologyV1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n1, n2, n3 := ec.nodes[0], ec.nodes[1], ec.nodes[2]
	ec.create(ctx,
		namespace(upgradeNS, map[string]string{"tenant": upgradeNS}),
		layer2CUDN(upgradeNS, upgradeNS, upgradeCIDR),
		pod(upgradeNS, "a", n1.name), pod(upgradeNS, "b", n2.name), pod(upgradeNS, "c", n3.name),
	)
	u := &upgradeRun{ec: ec, pods: map[string]string{"a": n1.name, "b": n2.name, "c": n3.name}}
	for name := range u.pods {
		ec.podIface(ctx, upgradeNS, name, upgradeNAD)
		u.waitRunning(ctx, name)
	}
	ec.requireZonesMatch(ctx, ec.allCompiled(upgradeNetwork))
	u.check(ctx, "all legacy")
	if r := u.status(ctx); r.Upgraded != 0 || !strings.Contains(strings.Join(r.Next, "\n"), "roll out the new agent on node "+n1.name) {
		t.Errorf("upgrade-status before the upgrade: %+v", r)
	}

	{ // a drained node converts
		u.deletePod(ctx, "a")
		u.restartOnV2(ctx, n1, nil)
		u.waitUpgraded(ctx, n1)
		// A pod started after the conversion is wired into the new topology.
		u.addPod(ctx, "a2", n1)
		u.check(ctx, n1.name+" upgraded")
	}

	{ // a node with a running Layer2 pod is not converted
		u.restartOnV2(ctx, n2, nil)
		u.waitPhase(ctx, n2, l2upgrade.PhaseBlocked)
		var node corev1.Node
		if err := ec.c.Get(ctx, types.NamespacedName{Name: n2.name}, &node); err != nil {
			t.Fatal(err)
		}
		if v, ok := node.Annotations[cluster.AnnotationLayer2TopologyVersion]; ok {
			t.Errorf("node %s was annotated %q while pod %s/b runs on it", n2.name, v, upgradeNS)
		}
		ec.requireZonesMatch(ctx, ec.allCompiled(upgradeNetwork)) // still the legacy zone
		r := u.status(ctx)
		if got := r.Nodes[1]; got.Phase != l2upgrade.PhaseBlocked || !slices.Equal(got.Blocking, []string{upgradeNS + "/b"}) {
			t.Errorf("upgrade-status shows %s as %+v, want blocked by %s/b", n2.name, got, upgradeNS)
		}
		text := ec.must(ctx, "upgrade-status")
		t.Logf("kubectl ovnk upgrade-status, %s blocked:\n%s", n2.name, text)
		for _, want := range []string{upgradeNS + "/b", "drain node " + n2.name} {
			if !strings.Contains(text, want) {
				t.Errorf("upgrade-status does not say %q:\n%s", want, text)
			}
		}
		u.deletePod(ctx, "b")
		u.waitUpgraded(ctx, n2)
		u.addPod(ctx, "b2", n2)
		u.check(ctx, n1.name+" and "+n2.name+" upgraded")
	}

	{ // an agent killed halfway through a conversion converges
		u.deletePod(ctx, "c")
		// Even with transactions this small, a conversion is one transaction.
		u.restartOnV2(ctx, n3, []string{"--nb-max-operations=4"})
		err := testenv.Eventually(ctx, 60*time.Second, "the conversion under way", func(ctx context.Context) error {
			out, err := n3.nb.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Router", "name="+upgradePrefix+"transit_router")
			if err != nil || strings.TrimSpace(out) == "" {
				return fmt.Errorf("no transit router yet (%v)", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ec.crashAgent(ctx, n3)
		ports, err := n3.nb.NBCtl(ctx, "--bare", "--columns=name", "list", "Logical_Router_Port")
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(strings.Fields(ports), "rtos-"+upgradeSwitch) {
			t.Errorf("the zone holds the legacy gateway port beside the transit router: the conversion was not one transaction:\n%s", ports)
		}
		if u.annotated(ctx, n3) {
			// The agent annotated the node (before the kill, or restarted since): take
			// the annotation back, which leaves the zone converted and the node not
			// saying so, as a kill between the NB transaction and the annotation would.
			t.Logf("the node is annotated 2.0 already; removing its annotation")
			patch := []byte(`{"metadata":{"annotations":{"` + cluster.AnnotationLayer2TopologyVersion + `":null}}}`)
			if err := ec.c.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n3.name}}, ctrlclient.RawPatch(types.MergePatchType, patch)); err != nil {
				t.Fatal(err)
			}
		}
		// A pod that arrives meanwhile waits for the conversion to finish, then is wired.
		ec.create(ctx, pod(upgradeNS, "c2", n3.name))
		u.pods["c2"] = n3.name
		u.waitUpgraded(ctx, n3)
		ec.podIface(ctx, upgradeNS, "c2", upgradeNAD)
		u.waitRunning(ctx, "c2")
		u.check(ctx, "all upgraded")
	}

	// Nothing of the upgrade is left, and a second reconcile of any zone writes nothing.
	for _, n := range ec.nodes {
		out, err := n.nb.NBCtl(ctx, "--bare", "--columns=name", "list", "Logical_Switch_Port")
		if err != nil {
			t.Fatal(err)
		}
		out2, err := n.nb.NBCtl(ctx, "--bare", "--columns=name", "list", "Logical_Router_Port")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out+out2, "-upgrade") || strings.Contains(out, "stor-GR_") {
			t.Errorf("zone %s still holds upgrade or legacy ports:\n%s%s", n.name, out, out2)
		}
		_, res, err := ec.expected(ctx, n.name)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := (&ovn.Reconciler{Client: n.nbClient}).Reconcile(ctx, res.Rows, nil)
		if err != nil || stats.Operations != 0 {
			t.Errorf("reconciling zone %s again: %d operations (%v), want none", n.name, stats.Operations, err)
		}
	}
	if r := u.status(ctx); !r.Complete || r.Upgraded != 3 || len(r.Next) != 0 {
		t.Errorf("upgrade-status at the end: %+v", r)
	}
	if text := ec.must(ctx, "upgrade-status"); !strings.Contains(text, "complete") {
		t.Errorf("upgrade-status does not say the upgrade is complete:\n%s", text)
	}
}

// upgradeRun is the state of one rolling upgrade: which pod of the network runs where.
type upgradeRun struct {
	ec   *e2eCluster
	pods map[string]string // pod name → node
}

// deletePod deletes a pod of the network and waits until its kubelet has stopped it
// and it is gone, as `kubectl drain` waits for the node's pods.
func (u *upgradeRun) deletePod(ctx context.Context, name string) {
	u.ec.t.Helper()
	p := pod(upgradeNS, name, u.pods[name])
	if err := u.ec.c.Delete(ctx, p); err != nil {
		u.ec.t.Fatalf("delete pod %s: %v", name, err)
	}
	err := testenv.Eventually(ctx, 2*time.Minute, "pod "+name+" gone", func(ctx context.Context) error {
		err := u.ec.c.Get(ctx, ctrlclient.ObjectKeyFromObject(p), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there")
	})
	if err != nil {
		u.ec.t.Fatal(err)
	}
	delete(u.pods, name)
}

func (u *upgradeRun) addPod(ctx context.Context, name string, n *node) {
	u.ec.t.Helper()
	u.ec.create(ctx, pod(upgradeNS, name, n.name))
	u.pods[name] = n.name
	u.ec.podIface(ctx, upgradeNS, name, upgradeNAD)
	u.waitRunning(ctx, name)
	u.ec.requireZonesMatch(ctx, u.ec.allCompiled(upgradeNetwork))
}

// waitRunning waits until kubelet reports the pod Running: only running pods hold a
// node on the legacy topology.
func (u *upgradeRun) waitRunning(ctx context.Context, name string) {
	u.ec.t.Helper()
	err := testenv.Eventually(ctx, 2*time.Minute, "pod "+name+" running", func(ctx context.Context) error {
		var p corev1.Pod
		if err := u.ec.c.Get(ctx, types.NamespacedName{Namespace: upgradeNS, Name: name}, &p); err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	if err != nil {
		u.ec.t.Fatal(err)
	}
}

// restartOnV2 rolls the transit-router topology out to a node's agent, with flags
// besides.
func (u *upgradeRun) restartOnV2(ctx context.Context, n *node, flags []string) {
	u.ec.t.Helper()
	u.ec.rollOut(ctx, n, append([]string{"--layer2-topology=" + config.Layer2TopologyV2}, flags...)...)
}

func (u *upgradeRun) annotated(ctx context.Context, n *node) bool {
	var obj corev1.Node
	err := u.ec.c.Get(ctx, types.NamespacedName{Name: n.name}, &obj)
	return err == nil && obj.Annotations[cluster.AnnotationLayer2TopologyVersion] == cluster.Layer2TopologyVersionTransitRouter
}

// waitUpgraded waits until the node says it runs the transit router and every zone is
// what the compiler makes of that.
func (u *upgradeRun) waitUpgraded(ctx context.Context, n *node) {
	u.ec.t.Helper()
	err := testenv.Eventually(ctx, 60*time.Second, "node "+n.name+" annotated 2.0", func(ctx context.Context) error {
		if !u.annotated(ctx, n) {
			return fmt.Errorf("not annotated yet")
		}
		return nil
	})
	if err != nil {
		u.ec.t.Fatalf("%v\n%s", err, u.ec.agentLog(n))
	}
	u.ec.requireZonesMatch(ctx, u.ec.allCompiled(upgradeNetwork))
}

// waitPhase waits until the node's agent reports the phase in its heartbeat.
func (u *upgradeRun) waitPhase(ctx context.Context, n *node, want l2upgrade.Phase) {
	u.ec.t.Helper()
	err := testenv.Eventually(ctx, 60*time.Second, "node "+n.name+" "+string(want), func(ctx context.Context) error {
		var lease coordinationv1.Lease
		if err := u.ec.c.Get(ctx, types.NamespacedName{Namespace: leaseNamespace, Name: cluster.HeartbeatLeaseName(n.name)}, &lease); err != nil {
			return err
		}
		s, err := cluster.ParseHeartbeat(&lease)
		if err != nil {
			return err
		}
		if s.Layer2Phase != string(want) {
			return fmt.Errorf("phase %q", s.Layer2Phase)
		}
		return nil
	})
	if err != nil {
		u.ec.t.Fatalf("%v\n%s", err, u.ec.agentLog(n))
	}
}

func (u *upgradeRun) status(ctx context.Context) l2upgrade.Report {
	u.ec.t.Helper()
	out := u.ec.must(ctx, "upgrade-status", "-o", "json")
	var r l2upgrade.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		u.ec.t.Fatalf("upgrade-status -o json: %v\n%s", err, out)
	}
	return r
}

// joinIP is a node's gateway router join IP on the network: 100.65.0.0/16 + its id.
func (u *upgradeRun) joinIP(ctx context.Context, n *node) netip.Addr {
	u.ec.t.Helper()
	var obj corev1.Node
	if err := u.ec.c.Get(ctx, ctrlclient.ObjectKey{Name: n.name}, &obj); err != nil {
		u.ec.t.Fatal(err)
	}
	id, ok, err := cluster.NodeIDCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.name}, obj.Annotations)
	if err != nil || !ok {
		u.ec.t.Fatalf("node %s has no id (%v)", n.name, err)
	}
	ip, err := alloc.GatewayRouterJoinIP(netip.MustParsePrefix("100.65.0.0/16"), id)
	if err != nil {
		u.ec.t.Fatal(err)
	}
	return ip.Addr()
}

// check verifies one step of the upgrade: every pod reaches every other pod and back,
// and every gateway router's join IP; in each upgraded zone, ovn-trace follows a pod to
// each legacy node's join IP through the upgrade port, and the transit router holds a
// host route per legacy join IP; upgrade-status counts the upgraded nodes.
func (u *upgradeRun) check(ctx context.Context, step string) {
	ec := u.ec
	t := ec.t
	t.Helper()
	var upgraded, legacy []*node
	for _, n := range ec.nodes {
		if u.annotated(ctx, n) {
			upgraded = append(upgraded, n)
		} else {
			legacy = append(legacy, n)
		}
	}
	pods := make([]string, 0, len(u.pods))
	for name := range u.pods {
		pods = append(pods, name)
	}
	slices.Sort(pods)
	for _, src := range pods {
		for _, dst := range pods {
			if src == dst || u.pods[src] == u.pods[dst] {
				continue
			}
			res := ec.traceJSON(ctx, upgradeNS+"/"+src, upgradeNS+"/"+dst)
			if v := res.Forward.Verdict; v.Kind != trace.Delivered || v.Pod != upgradeNS+"/"+dst {
				t.Errorf("%s: %s to %s: %+v", step, src, dst, v)
			}
			if res.Reply == nil || res.Reply.Verdict.Pod != upgradeNS+"/"+src {
				t.Errorf("%s: %s to %s: the reply did not come back: %+v", step, src, dst, res.Reply)
			}
		}
		for _, n := range ec.nodes {
			res := ec.traceJSON(ctx, upgradeNS+"/"+src, u.joinIP(ctx, n).String(), "--no-reply")
			if v := res.Forward.Verdict; v.Kind != trace.ToRouter || v.Zone != n.name || v.Datapath != "GR_"+upgradePrefix+n.name {
				t.Errorf("%s: %s to %s's join IP: %+v", step, src, n.name, v)
			}
		}
	}
	for _, up := range upgraded {
		if len(legacy) == 0 {
			break
		}
		u.traceUpgradeZone(ctx, step, up, legacy)
	}
	if r := u.status(ctx); r.Upgraded != len(upgraded) || r.Total != 3 {
		t.Errorf("%s: upgrade-status counts %d of %d upgraded, want %d of 3", step, r.Upgraded, r.Total, len(upgraded))
	}
	t.Logf("kubectl ovnk upgrade-status, %s:\n%s", step, ec.must(ctx, "upgrade-status"))
}

// traceUpgradeZone loads an upgraded node's zone into ovn-northd and follows a local
// pod to each legacy node's join IP with ovn-trace: the transit router's host route
// sends it out of the upgrade port (the dummy join IP's connected subnet), the legacy
// gateway router's remote port answers for the address, and the packet leaves on that
// port's tunnel key.
func (u *upgradeRun) traceUpgradeZone(ctx context.Context, step string, up *node, legacy []*node) {
	ec := u.ec
	t := ec.t
	t.Helper()
	var src string
	for name, on := range u.pods {
		if on == up.name {
			src = name
		}
	}
	if src == "" {
		return
	}
	iface := ec.podIface(ctx, upgradeNS, src, upgradeNAD)
	snap, err := ovn.OwnedSnapshot(ctx, up.nbClient)
	if err != nil {
		t.Fatal(err)
	}
	northd := nbtest.WithNorthd(t, snap)
	routes, err := northd.NB.NBCtl(ctx, "lr-route-list", upgradePrefix+"transit_router")
	if err != nil {
		t.Fatal(err)
	}
	// The upgrade port: the gateway router's MAC and the dummy join IP.
	upJoin := u.joinIP(ctx, up)
	port, err := northd.NB.NBCtl(ctx, "--bare", "--columns=mac,networks", "list", "Logical_Router_Port", "trtos-"+upgradeSwitch+"-upgrade")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(port); len(f) < 2 || f[0] != alloc.MACFromIP(upJoin).String() || f[1] != "100.65.255.254/16" {
		t.Errorf("%s: %s's upgrade port has %q, want the gateway router's MAC %s and 100.65.255.254/16", step, up.name, port, alloc.MACFromIP(upJoin))
	}
	gwMAC := alloc.MACFromIP(netip.MustParseAddr("10.74.0.1"))
	for _, l := range legacy {
		// What a legacy node's pod sends to this node's gateway router — to its join IP
		// and MAC, as the legacy zone still resolves them — comes in on the upgrade
		// port and reaches the gateway router, which answers.
		for name, on := range u.pods {
			if on != l.name {
				continue
			}
			remote := ec.podIface(ctx, upgradeNS, name, upgradeNAD)
			flow := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && icmp4.type == 8`,
				cluster.OVNPrefix(upgradeNAD)+upgradeNS+"_"+name, remote.MAC, alloc.MACFromIP(upJoin), remote.IPs[0].Addr(), upJoin)
			res, err := northd.Trace(ctx, upgradeSwitch, flow)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(res.Hops, "stotr-"+upgradeSwitch+"-upgrade (patch)") || !slices.Contains(res.Hops, "rtotr-GR_"+upgradePrefix+up.name+" (l3gateway)") {
				t.Errorf("%s: in %s's zone, %s's ping to %s did not enter through the upgrade port to the gateway router: %v\n%s",
					step, up.name, name, upJoin, res.Hops, res.Output)
			}
		}
	}
	for _, l := range legacy {
		join := u.joinIP(ctx, l)
		if !strings.Contains(strings.Join(strings.Fields(routes), " "), join.String()+" "+join.String()+" dst-ip") {
			t.Errorf("%s: %s's transit router has no route for %s's join IP via itself:\n%s", step, up.name, l.name, routes)
		}
		flow := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && icmp4.type == 8`,
			cluster.OVNPrefix(upgradeNAD)+upgradeNS+"_"+src, iface.MAC, gwMAC, iface.IPs[0].Addr(), join)
		res, err := northd.Trace(ctx, upgradeSwitch, flow)
		if err != nil {
			t.Fatal(err)
		}
		want := "stor-GR_" + upgradePrefix + l.name
		if res.FinalPort() != want || !slices.Contains(res.Hops, "trtos-"+upgradeSwitch+"-upgrade (patch)") {
			t.Errorf("%s: in %s's zone, %s to %s's join IP left through %q via %v; want %s via the upgrade port:\n%s",
				step, up.name, src, l.name, res.FinalPort(), res.Hops, want, res.Output)
		}
	}
}
