package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/testenv"
)

const primaryLabel = "k8s.ovn.org/primary-user-defined-network"

// create creates objects in the test's cluster (which goes away with the test).
func (ec *e2eCluster) create(ctx context.Context, objs ...ctrlclient.Object) {
	ec.t.Helper()
	for _, o := range objs {
		if err := ec.c.Create(ctx, o); err != nil {
			ec.t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	l := map[string]string{primaryLabel: ""}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

// pod is a pod of the test application the scheduler places on node.
func pod(ns, name, node string) *corev1.Pod { return sandbox.TestPod(ns, name, node) }

func layer3CUDN(name, selector, cidr string) *ovnkv1.ClusterUserDefinedNetwork {
	return &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tenant": selector}},
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
				Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: ovnkv1.CIDR(cidr)}},
			}},
		},
	}
}

func layer2CUDN(name, selector, cidr string) *ovnkv1.ClusterUserDefinedNetwork {
	return &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tenant": selector}},
			Network: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
				Role: ovnkv1.NetworkRolePrimary, Subnets: ovnkv1.DualStackCIDRs{ovnkv1.CIDR(cidr)},
			}},
		},
	}
}

func layer2UDN(ns, name, cidr string) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: &ovnkv1.Layer2Config{
			Role: ovnkv1.NetworkRolePrimary, Subnets: ovnkv1.DualStackCIDRs{ovnkv1.CIDR(cidr)},
		}},
	}
}

// allCompiled requires every network to compile in the zone, and every pod running on
// the zone's node to have its addresses and, for each network it is on, its port.
func (ec *e2eCluster) allCompiled(networks ...string) func(string, *topology.Result) error {
	return func(node string, res *topology.Result) error {
		for name, err := range res.NotCompiled {
			return fmt.Errorf("zone %s: network %s not compiled: %v", node, name, err)
		}
		for ref, err := range res.Pods {
			return fmt.Errorf("zone %s: pod %s has no port: %v", node, ref, err)
		}
		have := map[string]bool{}
		for _, r := range res.Rows.Routers {
			have[r.ExternalIDs["k8s.ovn.org/network"]] = true
		}
		for _, n := range networks {
			if !have[n] {
				return fmt.Errorf("zone %s: network %s has no rows yet", node, n)
			}
		}
		return ec.podsHavePorts(node, res)
	}
}

// podsHavePorts requires every pod the scheduler placed on node, but those in the
// host's network, to have been allocated its addresses and to have a port in the
// compiled rows for each network the allocation names (PodPortName's names, from the
// attachment names it is keyed by).
func (ec *e2eCluster) podsHavePorts(node string, res *topology.Result) error {
	var pods corev1.PodList
	if err := ec.c.List(context.Background(), &pods); err != nil {
		return err
	}
	ports := map[string]bool{}
	for _, p := range res.Rows.SwitchPorts {
		ports[p.Name] = true
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != node || p.Spec.HostNetwork || p.DeletionTimestamp != nil {
			continue
		}
		ref := p.Namespace + "/" + p.Name
		nets, ok, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, p.Annotations)
		if err != nil || !ok {
			return fmt.Errorf("pod %s: no addresses yet (%v)", ref, err)
		}
		for nad := range nets {
			name := p.Namespace + "_" + p.Name
			if nad != cluster.DefaultNetworkName {
				name = cluster.OVNPrefix(nad) + name
			}
			if !ports[name] {
				return fmt.Errorf("zone %s: pod %s has no port %s on %s", node, ref, name, nad)
			}
		}
	}
	return nil
}

// TestNetworksProgrammedInEveryZone creates a Layer3 CUDN, a Layer2 CUDN and a
// namespaced Layer2 UDN with pods on every node, and requires every zone's NB to equal
// what the compiler derives from the cluster's objects, keys to agree across zones, and
// the allocations and status to be published.
func TestNetworksProgrammedInEveryZone(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ec.requireZonesMatch(ctx, ec.allCompiled("default"))

	ec.create(ctx,
		namespace("blue-a", map[string]string{"tenant": "blue-a"}),
		namespace("green-a", map[string]string{"tenant": "green-a"}),
		namespace("solo-a", nil),
		layer3CUDN("blue-a", "blue-a", "10.10.0.0/16"),
		layer2CUDN("green-a", "green-a", "10.20.0.0/16"),
		layer2UDN("solo-a", "net", "10.30.0.0/16"),
	)
	for _, n := range ec.nodes {
		ec.create(ctx, pod("blue-a", "web-"+n.name, n.name), pod("green-a", "db-"+n.name, n.name), pod("solo-a", "app-"+n.name, n.name))
	}
	ec.requireZonesMatch(ctx, ec.allCompiled("default", "cluster_udn_blue-a", "cluster_udn_green-a", "solo-a_net"))

	// Every zone has the Layer2 networks' transit routers, with the same keys.
	for _, tr := range []string{"cluster_udn_green.a_transit_router", "solo.a_net_transit_router"} {
		keys := map[string]string{} // node → the router's key there
		for _, n := range ec.nodes {
			s, err := ovn.OwnedSnapshot(ctx, n.nbClient)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(s.Routers, func(r *nbdb.LogicalRouter) bool { return r.Name == tr })
			if i < 0 {
				t.Errorf("zone %s has no %s", n.name, tr)
				continue
			}
			keys[n.name] = s.Routers[i].Options["requested-tnl-key"]
		}
		first := keys[ec.nodes[0].name]
		for node, key := range keys {
			if key == "" || key != first {
				t.Errorf("%s's key in each zone: %v; want one key, the same everywhere (zone %s)", tr, keys, node)
				break
			}
		}
	}

	// Allocations are published on the nodes, and status on the networks.
	for _, n := range ec.nodes {
		var obj corev1.Node
		if err := ec.c.Get(ctx, types.NamespacedName{Name: n.name}, &obj); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{cluster.AnnotationNodeID, cluster.AnnotationNodeSubnets, cluster.AnnotationNodeTransitSwitchPortIfAddr, cluster.AnnotationZoneStatus} {
			if obj.Annotations[a] == "" {
				t.Errorf("node %s lacks %s", n.name, a)
			}
		}
	}
	err := testenv.Eventually(ctx, 60*time.Second, "networks ready on every node", func(ctx context.Context) error {
		var cudn ovnkv1.ClusterUserDefinedNetwork
		if err := ec.c.Get(ctx, types.NamespacedName{Name: "green-a"}, &cudn); err != nil {
			return err
		}
		var udn ovnkv1.UserDefinedNetwork
		if err := ec.c.Get(ctx, types.NamespacedName{Namespace: "solo-a", Name: "net"}, &udn); err != nil {
			return err
		}
		for _, conds := range [][]metav1.Condition{cudn.Status.Conditions, udn.Status.Conditions} {
			for _, typ := range []string{"NetworkCreated", "NetworkReady"} {
				if !meta.IsStatusConditionTrue(conds, typ) {
					return fmt.Errorf("condition %s not true: %+v", typ, conds)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// podIPs waits for a pod's address on a network (NAD key in k8s.ovn.org/pod-networks).
func (ec *e2eCluster) podIface(ctx context.Context, ns, name, nad string) cluster.PodInterface {
	ec.t.Helper()
	var iface cluster.PodInterface
	err := testenv.Eventually(ctx, 60*time.Second, "addresses of pod "+ns+"/"+name, func(ctx context.Context) error {
		var p corev1.Pod
		if err := ec.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &p); err != nil {
			return err
		}
		nets, ok, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod", Namespace: ns, Name: name}, p.Annotations)
		if err != nil || !ok {
			return fmt.Errorf("pod-networks: %v (set %v)", err, ok)
		}
		if iface, ok = nets[nad]; !ok {
			return fmt.Errorf("no entry %s in %v", nad, nets)
		}
		return nil
	})
	if err != nil {
		ec.t.Fatal(err)
	}
	return iface
}

// TestTraceOneZone attaches ovn-northd to one zone and follows packets with ovn-trace: a
// pod reaches its gateway and a pod of its network on the same node, and not a pod of
// another network.
func TestTraceOneZone(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n1 := ec.nodes[0]
	ec.create(ctx,
		namespace("blue-t", map[string]string{"tenant": "blue-t"}),
		namespace("green-t", map[string]string{"tenant": "green-t"}),
		layer3CUDN("blue-t", "blue-t", "10.40.0.0/16"),
		layer3CUDN("green-t", "green-t", "10.41.0.0/16"),
		pod("blue-t", "a", n1.name), pod("blue-t", "b", n1.name), pod("green-t", "c", n1.name),
	)
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_blue-t", "cluster_udn_green-t"))
	a := ec.podIface(ctx, "blue-t", "a", "blue-t/blue-t")
	b := ec.podIface(ctx, "blue-t", "b", "blue-t/blue-t")
	c := ec.podIface(ctx, "green-t", "c", "green-t/green-t")
	// The node's own northd: a second one on the same NB would make nbctl --wait=sb
	// (Trace's sync) return when either SB caught up.
	northd := n1.northd

	sw := "cluster_udn_blue.t_" + n1.name
	portA := "blue.t.blue.t_blue-t_a"
	gw := a.Gateways[0]
	gwMAC := macOf(gw.String())
	ping := func(dst string) string {
		return fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && icmp4.type == 8`,
			portA, a.MAC, gwMAC, a.IPs[0].Addr(), dst)
	}
	res, err := northd.Trace(ctx, sw, ping(gw.String()))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalPort() != portA || !strings.Contains(res.Output, "icmp4.type = 0") {
		t.Errorf("pod a's ping to its gateway %s was not answered (final port %q):\n%s", gw, res.FinalPort(), res.Output)
	}
	res, err = northd.Trace(ctx, sw, ping(b.IPs[0].Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalPort() != "blue.t.blue.t_blue-t_b" {
		t.Errorf("pod a did not reach pod b of its network on the same node (final port %q):\n%s", res.FinalPort(), res.Output)
	}
	// Blue's routers know no route to green's subnet: the packet leaves the cluster
	// through the node's gateway, as any address outside blue would, and never enters
	// green.
	res, err = northd.Trace(ctx, sw, ping(c.IPs[0].Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.OutputPorts {
		if strings.Contains(p, "green") {
			t.Errorf("pod a reached the other network's port %s:\n%s", p, res.Output)
		}
	}
	if uplink := "cluster_udn_blue.t_" + sandbox.GatewayBridge + "_" + n1.name; res.FinalPort() != uplink {
		t.Errorf("pod a's packet to green's pod c left through %q, want the node's gateway %s:\n%s", res.FinalPort(), uplink, res.Output)
	}
}

func macOf(ip string) string {
	var o [4]int
	fmt.Sscanf(ip, "%d.%d.%d.%d", &o[0], &o[1], &o[2], &o[3])
	return fmt.Sprintf("0a:58:%02x:%02x:%02x:%02x", o[0], o[1], o[2], o[3])
}
