package leader

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// clusterSnapshot is three nodes, a Layer3 CUDN for namespace blue, a Layer2 CUDN for
// green, a Layer3 UDN in red, a secondary Layer2 UDN in plain, and a pod on each node in
// each namespace.
func clusterSnapshot() *snapshot {
	s := &snapshot{
		nodes: []*corev1.Node{node("n1"), node("n2"), node("n3")},
		namespaces: []corev1.Namespace{
			namespace("blue", nil), namespace("green", nil), namespace("plain", nil), namespace("red", nil),
		},
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			cudn("blue", 1, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue"),
			cudn("green", 2, l2(ovnkv1.NetworkRolePrimary, "10.200.0.0/16"), "green"),
		},
		udns: []*ovnkv1.UserDefinedNetwork{
			udn("plain", "extra", 3, l2(ovnkv1.NetworkRoleSecondary, "10.50.0.0/24")),
			udn("red", "net", 4, l3(ovnkv1.NetworkRolePrimary, "10.150.0.0/16", 0)),
		},
	}
	for _, ns := range []string{"blue", "green", "plain", "red"} {
		for _, n := range []string{"n1", "n2", "n3"} {
			s.pods = append(s.pods, pod(ns, "p-"+n, n))
		}
	}
	return s
}

func TestPlanCluster(t *testing.T) {
	s := clusterSnapshot()
	p := newTestPlanner(t)
	if pl := converge(t, p, s); len(pl.warnings) > 0 {
		t.Fatalf("warnings: %+v", pl.warnings)
	}
	diffLines(t, "annotations", leaderAnnotations(s), clusterAnnotations)
	diffLines(t, "conditions", conditionsDump(s), clusterConditions)
}

// clusterAnnotations is what the leader writes for clusterSnapshot: ids in sorted
// owner order from the lowest, pod addresses from .3 of each subnet, MACs from the
// IPv4 addresses, tunnel ids from 3: first the nodes' gateway router ports on the Layer2
// network, then the pods'.
const clusterAnnotations = `node/n1 node-id=2 node-subnets={"cluster_udn_blue":["10.100.0.0/24"],"default":["10.244.0.0/24","fd00:10:244::/64"],"red_net":["10.150.0.0/24"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.2/16","ipv6":"fd97::2/64"} udn-layer2-node-gateway-router-lrp-tunnel-ids={"cluster_udn_green":"3"}
node/n2 node-id=3 node-subnets={"cluster_udn_blue":["10.100.1.0/24"],"default":["10.244.1.0/24","fd00:10:244:1::/64"],"red_net":["10.150.1.0/24"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.3/16","ipv6":"fd97::3/64"} udn-layer2-node-gateway-router-lrp-tunnel-ids={"cluster_udn_green":"4"}
node/n3 node-id=4 node-subnets={"cluster_udn_blue":["10.100.2.0/24"],"default":["10.244.2.0/24","fd00:10:244:2::/64"],"red_net":["10.150.2.0/24"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.4/16","ipv6":"fd97::4/64"} udn-layer2-node-gateway-router-lrp-tunnel-ids={"cluster_udn_green":"5"}
clusteruserdefinednetwork/blue network-id=1 tunnel-keys=[16711684]
clusteruserdefinednetwork/green network-id=2 tunnel-keys=[16711685,16715779]
userdefinednetwork/plain/extra network-id=3 tunnel-keys=[16711686]
userdefinednetwork/red/net network-id=4 tunnel-keys=[16711687]
pod/blue/p-n1 pod-networks={"blue/blue":{"ip_addresses":["10.100.0.3/24"],"mac_address":"0a:58:0a:64:00:03","gateway_ips":["10.100.0.1"],"ip_address":"10.100.0.3/24","gateway_ip":"10.100.0.1","role":"primary"},"default":{"ip_addresses":["10.244.0.3/24","fd00:10:244::3/64"],"mac_address":"0a:58:0a:f4:00:03","gateway_ips":["10.244.0.1","fd00:10:244::1"],"role":"infrastructure-locked"}}
pod/blue/p-n2 pod-networks={"blue/blue":{"ip_addresses":["10.100.1.3/24"],"mac_address":"0a:58:0a:64:01:03","gateway_ips":["10.100.1.1"],"ip_address":"10.100.1.3/24","gateway_ip":"10.100.1.1","role":"primary"},"default":{"ip_addresses":["10.244.1.3/24","fd00:10:244:1::3/64"],"mac_address":"0a:58:0a:f4:01:03","gateway_ips":["10.244.1.1","fd00:10:244:1::1"],"role":"infrastructure-locked"}}
pod/blue/p-n3 pod-networks={"blue/blue":{"ip_addresses":["10.100.2.3/24"],"mac_address":"0a:58:0a:64:02:03","gateway_ips":["10.100.2.1"],"ip_address":"10.100.2.3/24","gateway_ip":"10.100.2.1","role":"primary"},"default":{"ip_addresses":["10.244.2.3/24","fd00:10:244:2::3/64"],"mac_address":"0a:58:0a:f4:02:03","gateway_ips":["10.244.2.1","fd00:10:244:2::1"],"role":"infrastructure-locked"}}
pod/green/p-n1 pod-networks={"default":{"ip_addresses":["10.244.0.4/24","fd00:10:244::4/64"],"mac_address":"0a:58:0a:f4:00:04","gateway_ips":["10.244.0.1","fd00:10:244::1"],"role":"infrastructure-locked"},"green/green":{"ip_addresses":["10.200.0.3/16"],"mac_address":"0a:58:0a:c8:00:03","gateway_ips":["10.200.0.1"],"ip_address":"10.200.0.3/16","gateway_ip":"10.200.0.1","tunnel_id":6,"role":"primary"}}
pod/green/p-n2 pod-networks={"default":{"ip_addresses":["10.244.1.4/24","fd00:10:244:1::4/64"],"mac_address":"0a:58:0a:f4:01:04","gateway_ips":["10.244.1.1","fd00:10:244:1::1"],"role":"infrastructure-locked"},"green/green":{"ip_addresses":["10.200.0.4/16"],"mac_address":"0a:58:0a:c8:00:04","gateway_ips":["10.200.0.1"],"ip_address":"10.200.0.4/16","gateway_ip":"10.200.0.1","tunnel_id":7,"role":"primary"}}
pod/green/p-n3 pod-networks={"default":{"ip_addresses":["10.244.2.4/24","fd00:10:244:2::4/64"],"mac_address":"0a:58:0a:f4:02:04","gateway_ips":["10.244.2.1","fd00:10:244:2::1"],"role":"infrastructure-locked"},"green/green":{"ip_addresses":["10.200.0.5/16"],"mac_address":"0a:58:0a:c8:00:05","gateway_ips":["10.200.0.1"],"ip_address":"10.200.0.5/16","gateway_ip":"10.200.0.1","tunnel_id":8,"role":"primary"}}
pod/plain/p-n1 pod-networks={"default":{"ip_addresses":["10.244.0.5/24","fd00:10:244::5/64"],"mac_address":"0a:58:0a:f4:00:05","gateway_ips":["10.244.0.1","fd00:10:244::1"],"role":"primary"}}
pod/plain/p-n2 pod-networks={"default":{"ip_addresses":["10.244.1.5/24","fd00:10:244:1::5/64"],"mac_address":"0a:58:0a:f4:01:05","gateway_ips":["10.244.1.1","fd00:10:244:1::1"],"role":"primary"}}
pod/plain/p-n3 pod-networks={"default":{"ip_addresses":["10.244.2.5/24","fd00:10:244:2::5/64"],"mac_address":"0a:58:0a:f4:02:05","gateway_ips":["10.244.2.1","fd00:10:244:2::1"],"role":"primary"}}
pod/red/p-n1 pod-networks={"default":{"ip_addresses":["10.244.0.6/24","fd00:10:244::6/64"],"mac_address":"0a:58:0a:f4:00:06","gateway_ips":["10.244.0.1","fd00:10:244::1"],"role":"infrastructure-locked"},"red/net":{"ip_addresses":["10.150.0.3/24"],"mac_address":"0a:58:0a:96:00:03","gateway_ips":["10.150.0.1"],"ip_address":"10.150.0.3/24","gateway_ip":"10.150.0.1","role":"primary"}}
pod/red/p-n2 pod-networks={"default":{"ip_addresses":["10.244.1.6/24","fd00:10:244:1::6/64"],"mac_address":"0a:58:0a:f4:01:06","gateway_ips":["10.244.1.1","fd00:10:244:1::1"],"role":"infrastructure-locked"},"red/net":{"ip_addresses":["10.150.1.3/24"],"mac_address":"0a:58:0a:96:01:03","gateway_ips":["10.150.1.1"],"ip_address":"10.150.1.3/24","gateway_ip":"10.150.1.1","role":"primary"}}
pod/red/p-n3 pod-networks={"default":{"ip_addresses":["10.244.2.6/24","fd00:10:244:2::6/64"],"mac_address":"0a:58:0a:f4:02:06","gateway_ips":["10.244.2.1","fd00:10:244:2::1"],"role":"infrastructure-locked"},"red/net":{"ip_addresses":["10.150.2.3/24"],"mac_address":"0a:58:0a:96:02:03","gateway_ips":["10.150.2.1"],"ip_address":"10.150.2.3/24","gateway_ip":"10.150.2.1","role":"primary"}}`

const clusterConditions = `clusteruserdefinednetwork/blue NetworkCreated True Allocated: network id 1, tunnel keys 16711684
clusteruserdefinednetwork/blue NetworkReady False Pending: ready on 0/3 nodes; node n1: no zone report yet; node n2: no zone report yet; node n3: no zone report yet
clusteruserdefinednetwork/blue TransportAccepted True GeneveTransportAccepted: Geneve transport has been configured.
clusteruserdefinednetwork/green NetworkCreated True Allocated: network id 2, tunnel keys 16711685, 16715779
clusteruserdefinednetwork/green NetworkReady False Pending: ready on 0/3 nodes; node n1: no zone report yet; node n2: no zone report yet; node n3: no zone report yet
clusteruserdefinednetwork/green TransportAccepted True GeneveTransportAccepted: Geneve transport has been configured.
userdefinednetwork/plain/extra NetworkCreated True Allocated: network id 3, tunnel keys 16711686
userdefinednetwork/plain/extra NetworkReady False Pending: ready on 0/3 nodes; node n1: no zone report yet; node n2: no zone report yet; node n3: no zone report yet
userdefinednetwork/red/net NetworkCreated True Allocated: network id 4, tunnel keys 16711687
userdefinednetwork/red/net NetworkReady False Pending: ready on 0/3 nodes; node n1: no zone report yet; node n2: no zone report yet; node n3: no zone report yet`

// withoutPod returns pods without namespace/name.
func withoutPod(pods []*corev1.Pod, ns, name string) []*corev1.Pod {
	return slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool { return p.Namespace == ns && p.Name == name })
}

func findPod(t *testing.T, s *snapshot, ns, name string) *corev1.Pod {
	t.Helper()
	for _, p := range s.pods {
		if p.Namespace == ns && p.Name == name {
			return p
		}
	}
	t.Fatalf("no pod %s/%s", ns, name)
	return nil
}

func findNode(t *testing.T, s *snapshot, name string) *corev1.Node {
	t.Helper()
	for _, n := range s.nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s", name)
	return nil
}

// podIPs returns the addresses of the pod's entry on nad.
func podIPs(t *testing.T, p *corev1.Pod, nad string) []string {
	t.Helper()
	ifaces, err := cluster.PodNetworksCodec.Parse(cluster.ObjectRef{Kind: "Pod", Name: p.Name}, p.Annotations[cluster.AnnotationPodNetworks])
	if err != nil {
		t.Fatalf("pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	var out []string
	for _, ip := range ifaces[nad].IPs {
		out = append(out, ip.String())
	}
	return out
}

// TestPlanResumes is a new leader taking over: it writes nothing for what is
// persisted, and newcomers, even those that sort first, get values nobody holds.
func TestPlanResumes(t *testing.T) {
	s := clusterSnapshot()
	converge(t, newTestPlanner(t), s)

	if pl := newTestPlanner(t).plan(s); len(pl.annotations)+len(pl.statuses) > 0 {
		t.Fatalf("a new leader rewrites persisted state: %d annotation and %d status writes", len(pl.annotations), len(pl.statuses))
	}

	before := strings.Split(leaderAnnotations(s), "\n")
	s.nodes = append([]*corev1.Node{node("a0")}, s.nodes...)
	s.pods = append([]*corev1.Pod{pod("blue", "a0", "n1"), pod("green", "a0", "n2")}, s.pods...)
	p := newTestPlanner(t)
	converge(t, p, s)
	after := leaderAnnotations(s)
	for _, line := range before {
		if !strings.Contains(after, line) {
			t.Errorf("the new leader changed persisted state; missing now:\n%s", line)
		}
	}
	for _, want := range []string{
		`node/a0 node-id=5 node-subnets={"cluster_udn_blue":["10.100.3.0/24"],"default":["10.244.3.0/24","fd00:10:244:3::/64"],"red_net":["10.150.3.0/24"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.5/16","ipv6":"fd97::5/64"} udn-layer2-node-gateway-router-lrp-tunnel-ids={"cluster_udn_green":"9"}`,
		`pod/blue/a0 pod-networks={"blue/blue":{"ip_addresses":["10.100.0.4/24"]`,
		`"default":{"ip_addresses":["10.244.0.7/24","fd00:10:244::7/64"]`,
		`pod/green/a0 pod-networks={"default":{"ip_addresses":["10.244.1.7/24","fd00:10:244:1::7/64"],"mac_address":"0a:58:0a:f4:01:07","gateway_ips":["10.244.1.1","fd00:10:244:1::1"],"role":"infrastructure-locked"},"green/green":{"ip_addresses":["10.200.0.6/16"],"mac_address":"0a:58:0a:c8:00:06","gateway_ips":["10.200.0.1"],"ip_address":"10.200.0.6/16","gateway_ip":"10.200.0.1","tunnel_id":10,"role":"primary"}}`,
	} {
		if !strings.Contains(after, want) {
			t.Errorf("missing:\n%s\nin:\n%s", want, after)
		}
	}
}

// TestPlanReleases checks that what deleted or finished owners held is handed out again.
func TestPlanReleases(t *testing.T) {
	s := clusterSnapshot()
	p := newTestPlanner(t)
	converge(t, p, s)

	// A deleted pod's and a finished pod's addresses go to new pods.
	s.pods = withoutPod(s.pods, "green", "p-n1") // 10.200.0.3, tunnel id 6
	findPod(t, s, "plain", "p-n2").Status.Phase = corev1.PodSucceeded
	s.pods = append(s.pods, pod("green", "q", "n3"), pod("plain", "q", "n2"))
	sortPods(s)
	converge(t, p, s)
	if got := podIPs(t, findPod(t, s, "green", "q"), "green/green"); !slices.Equal(got, []string{"10.200.0.3/16"}) {
		t.Errorf("green/q got %v, want the deleted pod's 10.200.0.3/16", got)
	}
	if !strings.Contains(findPod(t, s, "green", "q").Annotations[cluster.AnnotationPodNetworks], `"tunnel_id":6,`) {
		t.Errorf("green/q did not get the deleted pod's tunnel id 6: %s", findPod(t, s, "green", "q").Annotations[cluster.AnnotationPodNetworks])
	}
	if got := podIPs(t, findPod(t, s, "plain", "q"), "default"); !slices.Equal(got, []string{"10.244.1.5/24", "fd00:10:244:1::5/64"}) {
		t.Errorf("plain/q got %v, want the finished pod's addresses", got)
	}

	// A deleted node's id and subnets go to a new node.
	s.nodes = []*corev1.Node{findNode(t, s, "n1"), findNode(t, s, "n3"), node("n4")}
	converge(t, p, s)
	n4 := findNode(t, s, "n4")
	if n4.Annotations[cluster.AnnotationNodeID] != "3" ||
		n4.Annotations[cluster.AnnotationNodeSubnets] != `{"cluster_udn_blue":["10.100.1.0/24"],"default":["10.244.1.0/24","fd00:10:244:1::/64"],"red_net":["10.150.1.0/24"]}` {
		t.Errorf("n4 did not get the deleted n2's id and subnets: %v", n4.Annotations)
	}

	// A deleted network's id, keys and node subnets are released, and its entries are
	// dropped from its pods, which keep the rest as they were wired.
	s.cudns = s.cudns[1:] // blue
	converge(t, p, s)
	if got := findNode(t, s, "n1").Annotations[cluster.AnnotationNodeSubnets]; strings.Contains(got, "cluster_udn_blue") {
		t.Errorf("n1 still has a subnet of the deleted network: %s", got)
	}
	const wired = `{"default":{"ip_addresses":["10.244.0.3/24","fd00:10:244::3/64"],"mac_address":"0a:58:0a:f4:00:03","gateway_ips":["10.244.0.1","fd00:10:244::1"],"role":"infrastructure-locked"}}`
	if got := findPod(t, s, "blue", "p-n1").Annotations[cluster.AnnotationPodNetworks]; got != wired {
		t.Errorf("blue/p-n1 after its network was deleted:\n%s\nwant\n%s", got, wired)
	}

	// A namespace that gains a primary network: its wired pods keep what they have, new
	// pods get the network.
	s.cudns = append(s.cudns, cudn("azure", 9, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue"))
	s.pods = append(s.pods, pod("blue", "z", "n1"))
	converge(t, p, s)
	azure := s.cudns[len(s.cudns)-1]
	if azure.Annotations[cluster.AnnotationNetworkID] != "1" || azure.Annotations[cluster.AnnotationTunnelKeys] != "[16711684]" {
		t.Errorf("a new network did not get the deleted one's id 1: %v", azure.Annotations)
	}
	if got := findPod(t, s, "blue", "p-n1").Annotations[cluster.AnnotationPodNetworks]; got != wired {
		t.Errorf("a wired pod changed when its namespace gained a network:\n%s", got)
	}
	if got := podIPs(t, findPod(t, s, "blue", "z"), "blue/azure"); !slices.Equal(got, []string{"10.100.0.3/24"}) {
		t.Errorf("a new pod got %v on the namespace's new network, want [10.100.0.3/24]", got)
	}
}

func sortPods(s *snapshot) {
	slices.SortFunc(s.pods, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}

// TestPlanConflictingPersistedValues: two owners claim one value (a hand edit, a split
// brain); the first by name keeps it and the other gets the lowest free one.
func TestPlanConflictingPersistedValues(t *testing.T) {
	n1, n2 := node("n1"), node("n2")
	n1.Annotations = map[string]string{cluster.AnnotationNodeID: "7", cluster.AnnotationNodeSubnets: `{"default":["10.244.5.0/24","fd00:10:244:5::/64"]}`}
	n2.Annotations = map[string]string{cluster.AnnotationNodeID: "7", cluster.AnnotationNodeSubnets: `{"default":["10.244.5.0/24","fd00:10:244:9::/64"]}`}
	a, b := pod("ns", "a", "n1"), pod("ns", "b", "n1")
	const dup = `{"default":{"ip_addresses":["10.244.5.9/24","fd00:10:244:5::9/64"],"mac_address":"0a:58:0a:f4:05:09","gateway_ips":["10.244.5.1","fd00:10:244:5::1"],"role":"primary"}}`
	a.Annotations = map[string]string{cluster.AnnotationPodNetworks: dup}
	b.Annotations = map[string]string{cluster.AnnotationPodNetworks: dup}
	s := &snapshot{nodes: []*corev1.Node{n1, n2}, namespaces: []corev1.Namespace{namespace("ns", nil)}, pods: []*corev1.Pod{a, b}}
	converge(t, newTestPlanner(t), s)
	want := `node/n1 node-id=7 node-subnets={"default":["10.244.5.0/24","fd00:10:244:5::/64"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.7/16","ipv6":"fd97::7/64"}
node/n2 node-id=2 node-subnets={"default":["10.244.0.0/24","fd00:10:244:9::/64"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.2/16","ipv6":"fd97::2/64"}
pod/ns/a pod-networks=` + dup + `
pod/ns/b pod-networks={"default":{"ip_addresses":["10.244.5.3/24","fd00:10:244:5::3/64"],"mac_address":"0a:58:0a:f4:05:03","gateway_ips":["10.244.5.1","fd00:10:244:5::1"],"role":"primary"}}`
	diffLines(t, "annotations", leaderAnnotations(s), want)
}

// TestPlanHandEdits: a running leader treats edited annotations as a new leader would.
// A valid value nobody else holds is kept; a value the object cannot have (tunnel keys
// that do not match its id) is written again, without disturbing anything else.
func TestPlanHandEdits(t *testing.T) {
	s := clusterSnapshot()
	p := newTestPlanner(t)
	converge(t, p, s)

	s.cudns[0].Annotations[cluster.AnnotationTunnelKeys] = "[16711999]"
	converge(t, p, s)
	diffLines(t, "annotations after the keys were edited", leaderAnnotations(s), clusterAnnotations)

	findNode(t, s, "n2").Annotations[cluster.AnnotationNodeID] = "9"
	converge(t, p, s)
	want := strings.Replace(clusterAnnotations,
		`node/n2 node-id=3 node-subnets={"cluster_udn_blue":["10.100.1.0/24"],"default":["10.244.1.0/24","fd00:10:244:1::/64"],"red_net":["10.150.1.0/24"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.3/16","ipv6":"fd97::3/64"} udn-layer2-node-gateway-router-lrp-tunnel-ids={"cluster_udn_green":"4"}`,
		`node/n2 node-id=9 node-subnets={"cluster_udn_blue":["10.100.1.0/24"],"default":["10.244.1.0/24","fd00:10:244:1::/64"],"red_net":["10.150.1.0/24"]} node-transit-switch-port-ifaddr={"ipv4":"100.88.0.9/16","ipv6":"fd97::9/64"} udn-layer2-node-gateway-router-lrp-tunnel-ids={"cluster_udn_green":"4"}`, 1)
	diffLines(t, "annotations after a node id was edited", leaderAnnotations(s), want)
	if pl := newTestPlanner(t).plan(s); len(pl.annotations) > 0 {
		t.Errorf("a new leader would write %d annotations where the running one wrote none", len(pl.annotations))
	}
}

// TestPlanGatewayTunnelIDs: every node gets a tunnel id for its gateway router port on
// each primary Layer2 network from the pool the network's pods draw from, so the two
// never collide; a persisted id is kept, and a node that leaves gives its id back.
func TestPlanGatewayTunnelIDs(t *testing.T) {
	s := clusterSnapshot()
	n2 := findNode(t, s, "n2")
	n2.Annotations = map[string]string{cluster.AnnotationLayer2GatewayTunnelIDs: `{"cluster_udn_green":"40","gone_net":"41"}`}
	p := newTestPlanner(t)
	converge(t, p, s)
	ids := func(node string) string {
		return findNode(t, s, node).Annotations[cluster.AnnotationLayer2GatewayTunnelIDs]
	}
	if got := ids("n2"); got != `{"cluster_udn_green":"40"}` {
		t.Errorf("n2's persisted id: %s, want 40 kept and the entry of a network that does not exist dropped", got)
	}
	if got := ids("n1") + ids("n3"); got != `{"cluster_udn_green":"3"}{"cluster_udn_green":"4"}` {
		t.Errorf("n1 and n3: %s, want the lowest free ids 3 and 4", got)
	}
	seen := map[string]string{"3": "node n1", "4": "node n3", "40": "node n2"}
	for _, ns := range []string{"green"} {
		for _, pod := range s.pods {
			if pod.Namespace != ns {
				continue
			}
			ifaces, _, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod"}, pod.Annotations)
			if err != nil {
				t.Fatal(err)
			}
			id := strconv.Itoa(ifaces["green/green"].TunnelID)
			if owner, dup := seen[id]; dup {
				t.Errorf("pod %s has tunnel id %s, which %s holds", pod.Name, id, owner)
			}
			seen[id] = "pod " + pod.Name
		}
	}

	s.nodes = slices.DeleteFunc(s.nodes, func(n *corev1.Node) bool { return n.Name == "n1" })
	s.nodes = append(s.nodes, node("n4"))
	converge(t, p, s)
	if got := ids("n4"); got != `{"cluster_udn_green":"3"}` {
		t.Errorf("n4: %s, want the deleted node n1's id 3", got)
	}
}

// TestPlanGatewayTunnelIDConflicts: a node's id that a running pod holds too goes to the
// pod, for a running leader and a new one alike, and the node gets another; a bad entry
// is allocated again while the node's valid entries stay.
func TestPlanGatewayTunnelIDConflicts(t *testing.T) {
	s := clusterSnapshot()
	p := newTestPlanner(t)
	converge(t, p, s)
	podNetworks := findPod(t, s, "green", "p-n1").Annotations[cluster.AnnotationPodNetworks]
	if !strings.Contains(podNetworks, `"tunnel_id":6,`) {
		t.Fatalf("fixture changed: green/p-n1 is %s", podNetworks)
	}
	for _, leader := range []struct {
		name string
		p    *planner
	}{{"running leader", p}, {"new leader", newTestPlanner(t)}} {
		findNode(t, s, "n2").Annotations[cluster.AnnotationLayer2GatewayTunnelIDs] = `{"cluster_udn_green":"6"}`
		converge(t, leader.p, s)
		if got := findPod(t, s, "green", "p-n1").Annotations[cluster.AnnotationPodNetworks]; got != podNetworks {
			t.Errorf("%s: the running pod lost its tunnel id: %s", leader.name, got)
		}
		if got := findNode(t, s, "n2").Annotations[cluster.AnnotationLayer2GatewayTunnelIDs]; got == `{"cluster_udn_green":"6"}` {
			t.Errorf("%s: node n2 keeps the pod's id 6", leader.name)
		}
	}
	findNode(t, s, "n3").Annotations[cluster.AnnotationLayer2GatewayTunnelIDs] = `{"cluster_udn_green":"5","gone":"x"}`
	converge(t, newTestPlanner(t), s)
	if got := findNode(t, s, "n3").Annotations[cluster.AnnotationLayer2GatewayTunnelIDs]; got != `{"cluster_udn_green":"5"}` {
		t.Errorf("n3: %s, want its valid id 5 kept and the bad entry dropped", got)
	}
}
