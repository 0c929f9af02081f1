package leader

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Fixtures and planner tests of ClusterNetworkConnects.

// cncFixture is a ClusterNetworkConnect as the cache would hold it, connecting pods.
func cncFixture(name string, age int, selectors ovnkv1.NetworkSelectors, subnets ...ovnkv1.ConnectSubnet) *ovnkv1.ClusterNetworkConnect {
	return &ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1, CreationTimestamp: created(age), ResourceVersion: "1"},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: selectors,
			ConnectSubnets:   subnets,
			Connectivity:     []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork},
		},
	}
}

// byLabels selects ClusterUserDefinedNetworks by label and, with nsLabels, the primary
// UserDefinedNetworks of the namespaces with those labels.
func byLabels(cudnLabels, nsLabels map[string]string) ovnkv1.NetworkSelectors {
	var out ovnkv1.NetworkSelectors
	if cudnLabels != nil {
		out = append(out, ovnkv1.NetworkSelector{
			NetworkSelectionType:              ovnkv1.ClusterUserDefinedNetworks,
			ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{NetworkSelector: metav1.LabelSelector{MatchLabels: cudnLabels}},
		})
	}
	if nsLabels != nil {
		out = append(out, ovnkv1.NetworkSelector{
			NetworkSelectionType:              ovnkv1.PrimaryUserDefinedNetworks,
			PrimaryUserDefinedNetworkSelector: &ovnkv1.PrimaryUserDefinedNetworkSelector{NamespaceSelector: metav1.LabelSelector{MatchLabels: nsLabels}},
		})
	}
	return out
}

func connectSubnet(cidr string, networkPrefix int32) ovnkv1.ConnectSubnet {
	return ovnkv1.ConnectSubnet{CIDR: ovnkv1.ConnectCIDR(cidr), NetworkPrefix: networkPrefix}
}

// labelled sets a network object's labels and returns it.
func labelled[T interface{ SetLabels(map[string]string) }](obj T, labels map[string]string) T {
	obj.SetLabels(labels)
	return obj
}

var colors = map[string]string{"connect": "colors"}

// colorsSnapshot is clusterSnapshot with the CUDNs blue (Layer3) and green (Layer2) and
// the primary UDN of namespace red (Layer3) selected by the dual-stack connect "colors".
func colorsSnapshot() *snapshot {
	s := clusterSnapshot()
	for _, c := range s.cudns {
		c.Labels = colors
	}
	for i := range s.namespaces {
		if s.namespaces[i].Name == "red" {
			s.namespaces[i].Labels["connect"] = "colors"
		}
	}
	s.cncs = []*ovnkv1.ClusterNetworkConnect{cncFixture("colors", 5, byLabels(colors, colors),
		connectSubnet("192.168.0.0/16", 24), connectSubnet("fd00:10::/112", 120))}
	return s
}

// connectLines returns the lines of a dump about connects.
func connectLines(dump string) string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if strings.HasPrefix(l, "clusternetworkconnect/") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// reportZones sets every node's zone report: the connect's entry and the networks'.
func reportZones(s *snapshot, report string) {
	for _, n := range s.nodes {
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[cluster.AnnotationZoneStatus] = report
	}
}

func TestPlanConnects(t *testing.T) {
	s := colorsSnapshot()
	p := newTestPlanner(t)
	if pl := converge(t, p, s); len(pl.warnings) > 0 {
		t.Fatalf("warnings: %+v", pl.warnings)
	}
	// green's transit router took the first allocated key; the connect router has the
	// next. Blocks follow the networks' names, the same index in both families.
	diffLines(t, "annotations", connectLines(leaderAnnotations(s)), `clusternetworkconnect/colors connect-router-tunnel-key=16715780 `+
		`network-connect-subnet={"layer2_2":{"ipv4":"192.168.1.0/24","ipv6":"fd00:10::100/120"},"layer3_1":{"ipv4":"192.168.0.0/24","ipv6":"fd00:10::/120"},"layer3_4":{"ipv4":"192.168.2.0/24","ipv6":"fd00:10::200/120"}}`)
	diffLines(t, "conditions", connectLines(conditionsDump(s)), `clusternetworkconnect/colors Accepted True Allocated: connects 3 networks through connect router tunnel key 16715780: `+
		`"cluster_udn_blue" 192.168.0.0/24 and fd00:10::/120, "cluster_udn_green" 192.168.1.0/24 and fd00:10::100/120, "red_net" 192.168.2.0/24 and fd00:10::200/120
clusternetworkconnect/colors Ready False Pending: ready on 0/3 nodes; node n1: no zone report yet; node n2: no zone report yet; node n3: no zone report yet`)
	if got := s.cncs[0].Status.Status; got != "" {
		t.Fatalf("status.status is %q before the zones report, want none", got)
	}

	reportZones(s, `{"ClusterNetworkConnect/colors":""}`)
	s.nodes[2].Annotations[cluster.AnnotationZoneStatus] = `{"ClusterNetworkConnect/colors":"network red_net is not compiled yet"}`
	converge(t, p, s)
	diffLines(t, "Ready", connectLines(conditionsDump(s)), `clusternetworkconnect/colors Accepted True Allocated: connects 3 networks through connect router tunnel key 16715780: `+
		`"cluster_udn_blue" 192.168.0.0/24 and fd00:10::/120, "cluster_udn_green" 192.168.1.0/24 and fd00:10::100/120, "red_net" 192.168.2.0/24 and fd00:10::200/120
clusternetworkconnect/colors Ready False Pending: ready on 2/3 nodes; node n3: network red_net is not compiled yet`)
	reportZones(s, `{"ClusterNetworkConnect/colors":""}`)
	converge(t, p, s)
	if got := connectLines(conditionsDump(s)); !strings.HasSuffix(got, "Ready True Programmed: ready on 3/3 nodes") || s.cncs[0].Status.Status != ovnkv1.ConnectStatusSuccess {
		t.Fatalf("the connect is not ready everywhere (status %q):\n%s", s.cncs[0].Status.Status, got)
	}
}

// TestPlanConnectsResume: a new leader keeps every block and the key, and gives a
// network connected later the lowest free block, the one a disconnected network left.
func TestPlanConnectsResume(t *testing.T) {
	s := colorsSnapshot()
	converge(t, newTestPlanner(t), s)
	before := connectLines(leaderAnnotations(s))

	restarted := newTestPlanner(t)
	if pl := restarted.plan(s); len(pl.annotations) > 0 || len(pl.statuses) > 0 {
		t.Fatalf("a new leader rewrites %d annotations and %d statuses of a converged cluster", len(pl.annotations), len(pl.statuses))
	}

	s.cudns[1].Labels = nil // green is disconnected
	converge(t, restarted, s)
	want := strings.Replace(before, `"layer2_2":{"ipv4":"192.168.1.0/24","ipv6":"fd00:10::100/120"},`, "", 1)
	diffLines(t, "annotations after green left", connectLines(leaderAnnotations(s)), want)

	again := newTestPlanner(t)
	s.namespaces = append(s.namespaces, namespace("yellow", nil))
	s.cudns = append(s.cudns, labelled(cudn("yellow", 6, l3(ovnkv1.NetworkRolePrimary, "10.60.0.0/16", 24), "yellow"), colors))
	converge(t, again, s)
	want = strings.Replace(want, `"layer3_4":{"ipv4":"192.168.2.0/24","ipv6":"fd00:10::200/120"}`,
		`"layer3_4":{"ipv4":"192.168.2.0/24","ipv6":"fd00:10::200/120"},"layer3_5":{"ipv4":"192.168.1.0/24","ipv6":"fd00:10::100/120"}`, 1)
	diffLines(t, "annotations after yellow joined", connectLines(leaderAnnotations(s)), want)
}

// TestPlanConnectDeleted: a deleted network's block and a deleted connect's key go
// back to their pools.
func TestPlanConnectDeleted(t *testing.T) {
	s := colorsSnapshot()
	p := newTestPlanner(t)
	converge(t, p, s)
	s.udns = s.udns[:1] // red/net is deleted
	converge(t, p, s)
	if got, want := s.cncs[0].Annotations[cluster.AnnotationConnectSubnets],
		`{"layer2_2":{"ipv4":"192.168.1.0/24","ipv6":"fd00:10::100/120"},"layer3_1":{"ipv4":"192.168.0.0/24","ipv6":"fd00:10::/120"}}`; got != want {
		t.Fatalf("blocks after red_net was deleted\n got %s\nwant %s", got, want)
	}
	s.cncs = nil
	converge(t, p, s)
	fresh := cncFixture("later", 9, byLabels(colors, nil), connectSubnet("192.168.0.0/16", 24))
	s.cncs = []*ovnkv1.ClusterNetworkConnect{fresh}
	converge(t, p, s)
	if got := fresh.Annotations[cluster.AnnotationConnectRouterTunnelKey]; got != "16715780" {
		t.Fatalf("the next connect got router key %s, want 16715780, the one the deleted connect released", got)
	}
}

// TestPlanConnectKeys: a persisted router key that a network holds, or that belongs to
// the range derived from network ids, is replaced; the network keeps its key.
func TestPlanConnectKeys(t *testing.T) {
	for _, tc := range []struct{ name, persisted, want string }{
		{"held by a network", "16715779", "16715780"},
		{"derived from a network id", "16711690", "16715780"},
		{"malformed", "x", "16715780"},
		{"free", "16715790", "16715790"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := colorsSnapshot()
			converge(t, newTestPlanner(t), s)
			s.cncs[0].Annotations[cluster.AnnotationConnectRouterTunnelKey] = tc.persisted
			converge(t, newTestPlanner(t), s)
			if got := s.cncs[0].Annotations[cluster.AnnotationConnectRouterTunnelKey]; got != tc.want {
				t.Fatalf("router key %s, want %s", got, tc.want)
			}
			if got := s.cudns[1].Annotations[cluster.AnnotationTunnelKeys]; got != "[16711685,16715779]" {
				t.Fatalf("green's keys changed to %s", got)
			}
		})
	}
}

// TestPlanConnectBlocksRepaired: persisted blocks that do not fit are replaced by the
// lowest free, and blocks two networks claim go to the first by name.
func TestPlanConnectBlocksRepaired(t *testing.T) {
	for _, tc := range []struct{ name, persisted, want string }{{
		name:      "outside the connect subnets",
		persisted: `{"layer3_1":{"ipv4":"10.1.0.0/24"},"layer2_2":{"ipv4":"192.168.5.0/24","ipv6":"fd00:10::500/120"}}`,
		want:      `{"layer2_2":{"ipv4":"192.168.5.0/24","ipv6":"fd00:10::500/120"},"layer3_1":{"ipv4":"192.168.0.0/24","ipv6":"fd00:10::/120"}}`,
	}, {
		name:      "one family: the other gets the same index",
		persisted: `{"layer3_1":{"ipv6":"fd00:10::700/120"}}`,
		want:      `{"layer2_2":{"ipv4":"192.168.0.0/24","ipv6":"fd00:10::/120"},"layer3_1":{"ipv4":"192.168.7.0/24","ipv6":"fd00:10::700/120"}}`,
	}, {
		name:      "claimed twice",
		persisted: `{"layer3_1":{"ipv4":"192.168.3.0/24"},"layer2_2":{"ipv4":"192.168.3.0/24"}}`,
		want:      `{"layer2_2":{"ipv4":"192.168.0.0/24","ipv6":"fd00:10::/120"},"layer3_1":{"ipv4":"192.168.3.0/24","ipv6":"fd00:10::300/120"}}`,
	}, {
		name:      "malformed",
		persisted: `{"layer3_1":`,
		want:      `{"layer2_2":{"ipv4":"192.168.1.0/24","ipv6":"fd00:10::100/120"},"layer3_1":{"ipv4":"192.168.0.0/24","ipv6":"fd00:10::/120"}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := colorsSnapshot()
			s.cncs[0].Spec.NetworkSelectors = byLabels(colors, nil)
			converge(t, newTestPlanner(t), s)
			s.cncs[0].Annotations[cluster.AnnotationConnectSubnets] = tc.persisted
			converge(t, newTestPlanner(t), s)
			if got := s.cncs[0].Annotations[cluster.AnnotationConnectSubnets]; got != tc.want {
				t.Fatalf("blocks\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// problemCluster is one node with id 2 (n1) and the Layer3 CUDN blue (10.100.0.0/16) in
// namespace blue, labelled to be connected.
func problemCluster() *snapshot {
	return &snapshot{
		nodes:      []*corev1.Node{node("n1")},
		namespaces: []corev1.Namespace{namespace("blue", nil), namespace("green", nil), namespace("red", colors)},
		cudns:      []*ovnkv1.ClusterUserDefinedNetwork{labelled(cudn("blue", 1, l3(ovnkv1.NetworkRolePrimary, "10.100.0.0/16", 24), "blue"), colors)},
	}
}

// TestPlanConnectProblems checks the Accepted condition of what cannot be connected,
// and what the connect still does.
func TestPlanConnectProblems(t *testing.T) {
	primary, secondary := ovnkv1.NetworkRolePrimary, ovnkv1.NetworkRoleSecondary
	noOverlay := l3(primary, "10.70.0.0/16", 24)
	noOverlay.Transport = ovnkv1.TransportOptionNoOverlay
	noOverlay.NoOverlay = &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATEnabled, Routing: ovnkv1.RoutingUnmanaged}
	v4 := func(cidr string, prefix int32) []ovnkv1.ConnectSubnet {
		return []ovnkv1.ConnectSubnet{connectSubnet(cidr, prefix)}
	}
	const (
		blueOnly    = `connects 1 network through connect router tunnel key 16715779: "cluster_udn_blue" 192.168.0.0/24`
		recreate    = "delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed)"
		clusterWide = ", overlapping none of the cluster's subnets"
		perNetwork  = ", overlapping none of the networks' subnets, or select other networks"
	)
	for _, tc := range []struct {
		name    string
		cudns   []*ovnkv1.ClusterUserDefinedNetwork
		udns    []*ovnkv1.UserDefinedNetwork
		nodeIDs []int // ids of the nodes n1, n2, ... persisted before the leader runs
		subnets []ovnkv1.ConnectSubnet
		// want is the Accepted condition: "Status Reason: message".
		want string
	}{{
		name:  "a secondary network",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{labelled(cudn("sec", 2, l2(secondary, "10.50.0.0/24"), "green"), colors)},
		want: `False NetworkRefused: network "cluster_udn_sec" is not connected: a secondary network cannot be connected; only primary networks can; ` +
			blueOnly,
	}, {
		name:  "a no-overlay network",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{labelled(cudn("flat", 2, noOverlay, "green"), colors)},
		want: `False NetworkRefused: network "cluster_udn_flat" is not connected: a no-overlay network cannot be connected: connect routers need the Geneve overlay; ` +
			blueOnly,
	}, {
		name:  "networks whose subnets overlap",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{labelled(cudn("teal", 2, l3(primary, "10.100.128.0/17", 24), "green"), colors)},
		want: `False SubnetOverlap: network "cluster_udn_teal" is not connected: its subnet 10.100.128.0/17 overlaps subnet 10.100.0.0/16 of network "cluster_udn_blue", which is connected; ` +
			`connected networks need subnets that do not overlap, so select only one of them; ` + blueOnly,
	}, {
		name:  "the older network stays connected, whatever the names",
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{labelled(cudn("azure", 2, l3(primary, "10.100.0.0/24", 26), "green"), colors)},
		want: `False SubnetOverlap: network "cluster_udn_azure" is not connected: its subnet 10.100.0.0/24 overlaps subnet 10.100.0.0/16 of network "cluster_udn_blue", which is connected; ` +
			`connected networks need subnets that do not overlap, so select only one of them; ` + blueOnly,
	}, {
		name:    "overlaps the service subnet",
		subnets: v4("10.96.0.0/16", 24),
		want: `False ConnectSubnetOverlap: connect subnet 10.96.0.0/16 overlaps service subnet 10.96.0.0/16, so nothing is connected; ` +
			`delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed), overlapping none of the cluster's subnets`,
	}, {
		name:    "overlaps the masquerade subnet",
		subnets: v4("169.254.0.0/16", 24),
		want:    `False ConnectSubnetOverlap: connect subnet 169.254.0.0/16 overlaps masquerade subnet 169.254.0.0/17, so nothing is connected; ` + recreate + clusterWide,
	}, {
		name:    "overlaps the default join subnet",
		subnets: v4("100.64.0.0/20", 24),
		want:    `False ConnectSubnetOverlap: connect subnet 100.64.0.0/20 overlaps join subnet 100.64.0.0/16 of network "default", so nothing is connected; ` + recreate + clusterWide,
	}, {
		name:    "overlaps the transit subnet",
		subnets: v4("100.88.0.0/16", 24),
		want:    `False ConnectSubnetOverlap: connect subnet 100.88.0.0/16 overlaps transit subnet 100.88.0.0/16, so nothing is connected; ` + recreate + clusterWide,
	}, {
		name:    "overlaps the cluster subnet",
		subnets: []ovnkv1.ConnectSubnet{connectSubnet("192.168.0.0/16", 24), connectSubnet("fd00:10:244::/112", 120)},
		want:    `False ConnectSubnetOverlap: connect subnet fd00:10:244::/112 overlaps cluster subnet fd00:10:244::/48 of network "default", so nothing is connected; ` + recreate + clusterWide,
	}, {
		name:    "overlaps a connected network's subnet",
		subnets: v4("10.100.0.0/16", 24),
		want: `False ConnectSubnetOverlap: network "cluster_udn_blue" is not connected: connect subnet 10.100.0.0/16 overlaps its subnet 10.100.0.0/16; ` +
			`delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed), overlapping none of the networks' subnets, or select other networks; ` +
			`no network is connected yet; connect router tunnel key 16715779`,
	}, {
		name:    "overlaps a network's join subnet",
		udns:    []*ovnkv1.UserDefinedNetwork{udn("red", "net", 2, l3(primary, "10.150.0.0/16", 24))},
		subnets: v4("100.65.0.0/16", 24),
		want: `False ConnectSubnetOverlap: network "cluster_udn_blue" is not connected: connect subnet 100.65.0.0/16 overlaps its join subnet 100.65.0.0/16; ` + recreate + perNetwork + `; ` +
			`network "red_net" is not connected: connect subnet 100.65.0.0/16 overlaps its join subnet 100.65.0.0/16; ` + recreate + perNetwork + `; ` +
			`no network is connected yet; connect router tunnel key 16715779`,
	}, {
		name: "too small for the networks",
		udns: []*ovnkv1.UserDefinedNetwork{udn("red", "net", 2, l3(primary, "10.150.0.0/16", 24))},
		cudns: []*ovnkv1.ClusterUserDefinedNetwork{
			labelled(cudn("green", 3, l2(primary, "10.200.0.0/16"), "green"), colors),
		},
		subnets: v4("192.168.0.0/25", 26),
		want: `False ConnectSubnetTooSmall: connect subnet 192.168.0.0/25 holds 2 blocks of /26 (64 addresses each), but 3 networks are connected: they need 3 × 64 = 192 addresses; ` +
			`network "red_net" has no block; delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed), larger, or select fewer networks; ` +
			`connects 2 networks through connect router tunnel key 16715780: "cluster_udn_blue" 192.168.0.0/26, "cluster_udn_green" 192.168.0.64/26`,
	}, {
		name:    "blocks too small for the node ids",
		nodeIDs: []int{2, 9},
		subnets: []ovnkv1.ConnectSubnet{connectSubnet("192.168.0.0/24", 28), connectSubnet("fd00:10::/120", 124)},
		want: `False BlockTooSmall: blocks of /28 and /124 hold 8 links, for node ids 0 to 7, but node n2 has id 9: a Layer3 network needs 20 addresses in its block, 2 per node id from 0 to 9, ` +
			`so nodes with ids above 7 are not connected; delete this ClusterNetworkConnect and create it again with networkPrefix 27 for 192.168.0.0/24 and 123 for fd00:10::/120 or less; ` +
			`connects 1 network through connect router tunnel key 16715779: "cluster_udn_blue" 192.168.0.0/28 and fd00:10::/124`,
	}, {
		name:    "Layer2 networks need one link whatever the node ids",
		cudns:   []*ovnkv1.ClusterUserDefinedNetwork{labelled(cudn("blue", 1, l2(primary, "10.100.0.0/16"), "blue"), colors)},
		nodeIDs: []int{2, 900},
		subnets: v4("192.168.0.0/24", 31),
		want:    `True Allocated: connects 1 network through connect router tunnel key 16715780: "cluster_udn_blue" 192.168.0.0/31`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := problemCluster()
			for i, id := range tc.nodeIDs {
				n := node(fmt.Sprintf("n%d", i+1))
				n.Annotations = map[string]string{cluster.AnnotationNodeID: fmt.Sprint(id)}
				if i == 0 {
					s.nodes = nil
				}
				s.nodes = append(s.nodes, n)
			}
			for _, c := range tc.cudns {
				s.cudns = slices.DeleteFunc(s.cudns, func(o *ovnkv1.ClusterUserDefinedNetwork) bool { return o.Name == c.Name })
				s.cudns = append(s.cudns, c)
			}
			s.udns = tc.udns
			subnets := tc.subnets
			if subnets == nil {
				subnets = v4("192.168.0.0/16", 24)
			}
			s.cncs = []*ovnkv1.ClusterNetworkConnect{cncFixture("c", 9, byLabels(colors, colors), subnets...)}
			converge(t, newTestPlanner(t), s)
			got := acceptedOf(s.cncs[0])
			if got != tc.want {
				t.Fatalf("Accepted\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// acceptedOf returns a connect's Accepted condition: "Status Reason: message".
func acceptedOf(c *ovnkv1.ClusterNetworkConnect) string {
	for _, cond := range c.Status.Conditions {
		if cond.Type == ConditionConnectAccepted {
			return fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
		}
	}
	return "no Accepted condition"
}

// TestPlanConnectsConflict: of two connects whose subnets overlap and that share a
// network, the younger holds nothing until the older is gone; connects that share no
// network may overlap.
func TestPlanConnectsConflict(t *testing.T) {
	s := problemCluster()
	s.udns = []*ovnkv1.UserDefinedNetwork{udn("red", "net", 2, l3(ovnkv1.NetworkRolePrimary, "10.150.0.0/16", 24))}
	older := cncFixture("z-older", 3, byLabels(colors, nil), connectSubnet("192.168.0.0/16", 24))
	younger := cncFixture("a-younger", 4, byLabels(colors, colors), connectSubnet("192.168.128.0/17", 24))
	apart := cncFixture("apart", 5, byLabels(nil, colors), connectSubnet("192.168.0.0/17", 24))
	s.cncs = []*ovnkv1.ClusterNetworkConnect{younger, apart, older}
	p := newTestPlanner(t)
	converge(t, p, s)
	diffLines(t, "conditions", connectLines(conditionsDump(s)), `clusternetworkconnect/a-younger Accepted False ConnectSubnetConflict: connect subnet 192.168.128.0/17 overlaps connect subnet 192.168.0.0/16 of ClusterNetworkConnect "z-older", `+
		`which was created first and also connects network "cluster_udn_blue", so nothing is connected; delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed), not overlapping "z-older"'s, or select networks "z-older" does not
clusternetworkconnect/a-younger Ready False NotAccepted: nothing is programmed: see condition Accepted
clusternetworkconnect/apart Accepted True Allocated: connects 1 network through connect router tunnel key 16715780: "red_net" 192.168.0.0/24
clusternetworkconnect/apart Ready False Pending: ready on 0/1 nodes; node n1: no zone report yet
clusternetworkconnect/z-older Accepted True Allocated: connects 1 network through connect router tunnel key 16715779: "cluster_udn_blue" 192.168.0.0/24
clusternetworkconnect/z-older Ready False Pending: ready on 0/1 nodes; node n1: no zone report yet`)
	if younger.Annotations != nil || younger.Status.Status != ovnkv1.ConnectStatusFailure {
		t.Fatalf("the refused connect has annotations %v and status %q", younger.Annotations, younger.Status.Status)
	}

	s.cncs = []*ovnkv1.ClusterNetworkConnect{younger, apart}
	converge(t, p, s)
	if got := acceptedOf(younger); !strings.HasPrefix(got, "True Allocated: connects 2 networks through connect router tunnel key 16715779: "+
		`"cluster_udn_blue" 192.168.128.0/24, "red_net" 192.168.129.0/24`) {
		t.Fatalf("once the older connect is gone, Accepted is %s", got)
	}
}

// TestPlanConnectServices: ClusterIPServiceNetwork is accepted, and status says that
// only pods are connected.
func TestPlanConnectServices(t *testing.T) {
	s := problemCluster()
	c := cncFixture("svc", 3, byLabels(colors, nil), connectSubnet("192.168.0.0/16", 24))
	c.Spec.Connectivity = append(c.Spec.Connectivity, ovnkv1.ConnectivityClusterIPServiceNetwork)
	s.cncs = []*ovnkv1.ClusterNetworkConnect{c}
	converge(t, newTestPlanner(t), s)
	want := `True Allocated: connects 1 network through connect router tunnel key 16715779: "cluster_udn_blue" 192.168.0.0/24; ` +
		`ClusterIPServiceNetwork connectivity is accepted, but only pod connectivity is programmed: ovnk does not program services yet`
	if got := acceptedOf(c); got != want {
		t.Fatalf("Accepted\n got %s\nwant %s", got, want)
	}
}

// TestPlanConnectPending: a selected network that is not created yet is named, and gets
// its block once it is.
func TestPlanConnectPending(t *testing.T) {
	s := problemCluster()
	s.udns = []*ovnkv1.UserDefinedNetwork{udn("red", "net", 2, l3(ovnkv1.NetworkRolePrimary, "10.150.0.0/16", 24))}
	s.cncs = []*ovnkv1.ClusterNetworkConnect{cncFixture("c", 3, byLabels(colors, colors), connectSubnet("192.168.0.0/16", 24))}
	p := newTestPlanner(t)
	s.apply(p.plan(s)) // the networks' ids are allocated and written in this pass
	if got, want := acceptedOf(s.cncs[0]), `True Allocated: no network is connected yet; connect router tunnel key 16715779; `+
		`networks "cluster_udn_blue", "red_net" are connected once created (see condition NetworkCreated)`; got != want {
		t.Fatalf("Accepted\n got %s\nwant %s", got, want)
	}
	converge(t, p, s)
	blocks, _, err := cluster.ConnectSubnetsCodec.Lookup(connectRef(s.cncs[0]), s.cncs[0].Annotations)
	if err != nil || len(blocks) != 2 {
		t.Fatalf("blocks %v (%v), want both networks'", blocks, err)
	}
}

// TestHighestNodeID: node ids come from the allocator, persisted or not.
func TestHighestNodeID(t *testing.T) {
	p := newTestPlanner(t)
	if top := p.highestNodeID([]*corev1.Node{node("a")}); top.name != "" {
		t.Fatalf("highest node %+v before any id", top)
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := p.nodeIDs.Allocate(n); err != nil {
			t.Fatal(err)
		}
	}
	if top := p.highestNodeID([]*corev1.Node{node("a"), node("c"), node("b")}); top != (nodeWithID{"c", alloc.MinNodeID + 2}) {
		t.Fatalf("highest node %+v, want c with id %d", top, alloc.MinNodeID+2)
	}
}

// TestIPv4First: the annotation's order, whatever the spec's.
func TestIPv4First(t *testing.T) {
	got := ipv4First([]netip.Prefix{pfx("fd00::/120"), pfx("192.168.0.0/24")})
	if !slices.Equal(got, []netip.Prefix{pfx("192.168.0.0/24"), pfx("fd00::/120")}) {
		t.Fatalf("ipv4First = %v", got)
	}
}
