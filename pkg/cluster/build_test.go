package cluster

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// Fixtures: Kubernetes objects as the informers would hand them to Build.

func testNode(name string, labels, annotations map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
}

func testNamespace(name string, labels map[string]string) corev1.Namespace {
	return corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func testPod(namespace, name, node, podNetworks string) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name)},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if podNetworks != "" {
		p.Annotations = map[string]string{AnnotationPodNetworks: podNetworks}
	}
	return p
}

func testCUDN(name string, selector map[string]string, network ovnkv1.NetworkSpec, annotations map[string]string) *ovnkv1.ClusterUserDefinedNetwork {
	return &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: selector},
			Network:           network,
		},
	}
}

func testUDN(namespace, name string, spec ovnkv1.UserDefinedNetworkSpec, annotations map[string]string) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec:       spec,
	}
}

func layer3(role ovnkv1.NetworkRole, subnets ...ovnkv1.Layer3Subnet) *ovnkv1.Layer3Config {
	return &ovnkv1.Layer3Config{Role: role, Subnets: subnets}
}

func layer2(role ovnkv1.NetworkRole, subnets ...ovnkv1.CIDR) *ovnkv1.Layer2Config {
	return &ovnkv1.Layer2Config{Role: role, Subnets: subnets}
}

func networkAnnotations(id int, keys string) map[string]string {
	a := map[string]string{AnnotationNetworkID: fmt.Sprint(id)}
	if keys != "" {
		a[AnnotationTunnelKeys] = keys
	}
	return a
}

// clusterNode is node workerN of the three-node cluster, with every annotation a ready
// OVN-Kubernetes node has. Its id is N+1.
func clusterNode(n int) corev1.Node {
	id := n + 1
	return testNode(fmt.Sprintf("worker%d", n), map[string]string{"kubernetes.io/os": "linux"}, map[string]string{
		AnnotationNodeID:        fmt.Sprint(id),
		AnnotationNodeChassisID: fmt.Sprintf("chassis-%d", n),
		AnnotationNodeSubnets: fmt.Sprintf(`{"default":["10.244.%d.0/24","fd00:10:244:%d::/64"],"cluster_udn_blue":"10.100.%d.0/24"}`,
			n, n, n),
		AnnotationNodeTransitSwitchPortIfAddr: fmt.Sprintf(`{"ipv4":"100.88.0.%d/16","ipv6":"fd97::%d/64"}`, id, id),
		AnnotationNodePrimaryIfAddr:           fmt.Sprintf(`{"ipv4":"172.18.0.%d/16"}`, id),
		AnnotationHostCIDRs:                   fmt.Sprintf(`["172.18.0.%d/16"]`, id),
		AnnotationL3GatewayConfig: fmt.Sprintf(`{"default":{"mode":"shared","bridge-id":"breth0","interface-id":"breth0_worker%d",`+
			`"mac-address":"02:42:ac:12:00:0%d","ip-addresses":["172.18.0.%d/16"],"next-hops":["172.18.0.1"],"node-port-enable":"true","vlan-id":"0"}}`,
			n, id, id),
		AnnotationLayer2TopologyVersion: "2.0",
	})
}

// clusterInputs is a three-node cluster with the default network (dual-stack), the
// Layer3 CUDN "blue" (IPv4, namespaces blue-a and blue-b) and the Layer2 UDN green/net,
// and a pod on each.
func clusterInputs() Inputs {
	w2 := clusterNode(2)
	w2.Labels[LabelEgressAssignable] = ""
	return Inputs{
		Config: Config{ServiceSubnets: pfxs("10.96.0.0/16")},
		DefaultNetwork: DefaultNetworkConfig{Subnets: []Subnet{
			{CIDR: pfx("10.244.0.0/16"), HostSubnet: 24},
			{CIDR: pfx("fd00:10:244::/48"), HostSubnet: 64},
		}},
		Nodes: []corev1.Node{clusterNode(1), w2, clusterNode(3)},
		Namespaces: []corev1.Namespace{
			testNamespace("default", nil),
			testNamespace("blue-a", map[string]string{"tenant": "blue"}),
			testNamespace("blue-b", map[string]string{"tenant": "blue"}),
			testNamespace("green", nil),
		},
		CUDNs: []*ovnkv1.ClusterUserDefinedNetwork{
			testCUDN("blue", map[string]string{"tenant": "blue"}, ovnkv1.NetworkSpec{
				Topology: ovnkv1.NetworkTopologyLayer3,
				Layer3:   layer3(ovnkv1.NetworkRolePrimary, ovnkv1.Layer3Subnet{CIDR: "10.100.0.0/16", HostSubnet: 24}),
			}, networkAnnotations(1, "[16711681]")),
		},
		UDNs: []*ovnkv1.UserDefinedNetwork{
			testUDN("green", "net", ovnkv1.UserDefinedNetworkSpec{
				Topology: ovnkv1.NetworkTopologyLayer2,
				Layer2:   &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRolePrimary, MTU: 1300, Subnets: ovnkv1.DualStackCIDRs{"10.200.0.0/16"}},
			}, networkAnnotations(2, "[16711688,16715780]")),
		},
		Pods: []corev1.Pod{
			testPod("default", "dns", "worker1",
				`{"default":{"ip_addresses":["10.244.1.5/24","fd00:10:244:1::5/64"],"mac_address":"0a:58:0a:f4:01:05","gateway_ips":["10.244.1.1","fd00:10:244:1::1"]}}`),
			testPod("blue-a", "web", "worker2",
				`{"default":{"ip_addresses":["10.244.2.6/24","fd00:10:244:2::6/64"],"mac_address":"0a:58:0a:f4:02:06","role":"infrastructure-locked"},`+
					`"blue-a/blue":{"ip_addresses":["10.100.2.6/24"],"mac_address":"0a:58:0a:64:02:06","gateway_ips":["10.100.2.1"],"role":"primary"}}`),
			testPod("green", "db", "worker3",
				`{"default":{"ip_addresses":["10.244.3.7/24","fd00:10:244:3::7/64"],"mac_address":"0a:58:0a:f4:03:07","role":"infrastructure-locked"},`+
					`"green/net":{"ip_addresses":["10.200.0.7/16"],"mac_address":"0a:58:0a:c8:00:07","gateway_ips":["10.200.0.1"],"tunnel_id":5,"role":"primary"}}`),
		},
	}
}

func wantClusterNode(n int, labels map[string]string) *Node {
	id := n + 1
	return &Node{
		Name:      fmt.Sprintf("worker%d", n),
		ID:        id,
		ChassisID: fmt.Sprintf("chassis-%d", n),
		Subnets: map[string][]netip.Prefix{
			"default":          pfxs(fmt.Sprintf("10.244.%d.0/24", n), fmt.Sprintf("fd00:10:244:%d::/64", n)),
			"cluster_udn_blue": pfxs(fmt.Sprintf("10.100.%d.0/24", n)),
		},
		TransitSwitchIPs: pfxs(fmt.Sprintf("100.88.0.%d/16", id), fmt.Sprintf("fd97::%d/64", id)),
		PrimaryIfAddrs:   pfxs(fmt.Sprintf("172.18.0.%d/16", id)),
		HostCIDRs:        pfxs(fmt.Sprintf("172.18.0.%d/16", id)),
		Gateway: Gateway{
			Mode:           GatewayModeShared,
			BridgeID:       "breth0",
			InterfaceID:    fmt.Sprintf("breth0_worker%d", n),
			MAC:            fmt.Sprintf("02:42:ac:12:00:0%d", id),
			IPs:            pfxs(fmt.Sprintf("172.18.0.%d/16", id)),
			NextHops:       []netip.Addr{addr("172.18.0.1")},
			NodePortEnable: true,
		},
		Layer2TopologyVersion: "2.0",
		Labels:                labels,
	}
}

func TestBuildThreeNodeCluster(t *testing.T) {
	st, errs := Build(clusterInputs())
	if len(errs) != 0 {
		t.Fatalf("Build errors: %v", errs)
	}
	want := &State{
		Config: Config{ServiceSubnets: pfxs("10.96.0.0/16"), DefaultJoinSubnets: pfxs("100.64.0.0/16", "fd98::/64")},
		Nodes: []*Node{
			wantClusterNode(1, map[string]string{"kubernetes.io/os": "linux"}),
			wantClusterNode(2, map[string]string{"kubernetes.io/os": "linux", LabelEgressAssignable: ""}),
			wantClusterNode(3, map[string]string{"kubernetes.io/os": "linux"}),
		},
		Networks: []*Network{
			{
				Name: "cluster_udn_blue", Topology: Layer3, Role: Primary, MTU: 1400, Transport: Geneve,
				Subnets:        []Subnet{{CIDR: pfx("10.100.0.0/16"), HostSubnet: 24}},
				JoinSubnets:    pfxs("100.65.0.0/16"),
				TransitSubnets: pfxs("100.88.0.0/16"),
				ID:             1, TunnelKeys: []int{16711681},
				Namespaces: []string{"blue-a", "blue-b"},
				Owner:      ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "blue"},
			},
			{
				Name: "default", Topology: Layer3, Role: Primary, MTU: 1400, Transport: Geneve,
				Subnets:        []Subnet{{CIDR: pfx("10.244.0.0/16"), HostSubnet: 24}, {CIDR: pfx("fd00:10:244::/48"), HostSubnet: 64}},
				JoinSubnets:    pfxs("100.64.0.0/16", "fd98::/64"),
				TransitSubnets: pfxs("100.88.0.0/16", "fd97::/64"),
				Namespaces:     []string{"blue-a", "blue-b", "default", "green"},
			},
			{
				Name: "green_net", Topology: Layer2, Role: Primary, MTU: 1300, Transport: Geneve,
				Subnets:        []Subnet{{CIDR: pfx("10.200.0.0/16")}},
				JoinSubnets:    pfxs("100.65.0.0/16"),
				TransitSubnets: pfxs("100.88.0.0/16"),
				ID:             2, TunnelKeys: []int{16711688, 16715780},
				Namespaces: []string{"green"},
				Owner:      ObjectRef{Kind: "UserDefinedNetwork", Namespace: "green", Name: "net"},
			},
		},
		Pods: []*Pod{
			{Namespace: "blue-a", Name: "web", UID: "uid-blue-a-web", Node: "worker2", Running: true, Networks: map[string]PodInterface{
				"default": {IPs: pfxs("10.244.2.6/24", "fd00:10:244:2::6/64"), MAC: "0a:58:0a:f4:02:06", Role: PodRoleInfrastructureLocked},
				"cluster_udn_blue": {IPs: pfxs("10.100.2.6/24"), MAC: "0a:58:0a:64:02:06",
					Gateways: []netip.Addr{addr("10.100.2.1")}, Role: PodRolePrimary},
			}},
			{Namespace: "default", Name: "dns", UID: "uid-default-dns", Node: "worker1", Running: true, Networks: map[string]PodInterface{
				"default": {IPs: pfxs("10.244.1.5/24", "fd00:10:244:1::5/64"), MAC: "0a:58:0a:f4:01:05",
					Gateways: []netip.Addr{addr("10.244.1.1"), addr("fd00:10:244:1::1")}},
			}},
			{Namespace: "green", Name: "db", UID: "uid-green-db", Node: "worker3", Running: true, Networks: map[string]PodInterface{
				"default": {IPs: pfxs("10.244.3.7/24", "fd00:10:244:3::7/64"), MAC: "0a:58:0a:f4:03:07", Role: PodRoleInfrastructureLocked},
				"green_net": {IPs: pfxs("10.200.0.7/16"), MAC: "0a:58:0a:c8:00:07",
					Gateways: []netip.Addr{addr("10.200.0.1")}, TunnelID: 5, Role: PodRolePrimary},
			}},
		},
	}
	compareStates(t, st, want)
}

// compareStates reports the first differing part of two States.
func compareStates(t *testing.T, got, want *State) {
	t.Helper()
	if !reflect.DeepEqual(got.Config, want.Config) {
		t.Errorf("Config =\n%+v\nwant\n%+v", got.Config, want.Config)
	}
	parts := []struct {
		what      string
		got, want any
		n, wn     int
	}{
		{"Nodes", got.Nodes, want.Nodes, len(got.Nodes), len(want.Nodes)},
		{"Networks", got.Networks, want.Networks, len(got.Networks), len(want.Networks)},
		{"Pods", got.Pods, want.Pods, len(got.Pods), len(want.Pods)},
	}
	for _, p := range parts {
		if p.n != p.wn {
			t.Errorf("%d %s, want %d", p.n, p.what, p.wn)
			continue
		}
		g, w := reflect.ValueOf(p.got), reflect.ValueOf(p.want)
		for i := range p.n {
			if !reflect.DeepEqual(g.Index(i).Interface(), w.Index(i).Interface()) {
				t.Errorf("%s[%d] =\n%+v\nwant\n%+v", p.what, i, g.Index(i).Elem().Interface(), w.Index(i).Elem().Interface())
			}
		}
	}
}

func TestBuildNetworkDefaults(t *testing.T) {
	v4v6 := []ovnkv1.Layer3Subnet{{CIDR: "10.100.0.0/16"}, {CIDR: "fd00:100::/48"}}
	cases := []struct {
		name string
		spec ovnkv1.NetworkSpec
		want Network
	}{
		{name: "Layer3 dual-stack, everything omitted",
			spec: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: layer3(ovnkv1.NetworkRolePrimary, v4v6...)},
			want: Network{Topology: Layer3, Role: Primary, MTU: 1400, Transport: Geneve,
				Subnets:        []Subnet{{CIDR: pfx("10.100.0.0/16"), HostSubnet: 24}, {CIDR: pfx("fd00:100::/48"), HostSubnet: 64}},
				JoinSubnets:    pfxs("100.65.0.0/16", "fd99::/64"),
				TransitSubnets: pfxs("100.88.0.0/16", "fd97::/64")}},
		{name: "IPv6 only gets IPv6 defaults",
			spec: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: layer2(ovnkv1.NetworkRolePrimary, "fd00:200::/64")},
			want: Network{Topology: Layer2, Role: Primary, MTU: 1400, Transport: Geneve,
				Subnets: []Subnet{{CIDR: pfx("fd00:200::/64")}}, JoinSubnets: pfxs("fd99::/64"), TransitSubnets: pfxs("fd97::/64")}},
		{name: "Secondary has no join subnets",
			spec: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: layer3(ovnkv1.NetworkRoleSecondary, v4v6[0])},
			want: Network{Topology: Layer3, Role: Secondary, MTU: 1400, Transport: Geneve,
				Subnets: []Subnet{{CIDR: pfx("10.100.0.0/16"), HostSubnet: 24}}, TransitSubnets: pfxs("100.88.0.0/16")}},
		{name: "explicit values, host bits masked, NoOverlay",
			spec: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Transport: ovnkv1.TransportOptionNoOverlay,
				Layer3: &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, MTU: 9000,
					Subnets:     []ovnkv1.Layer3Subnet{{CIDR: "10.100.7.0/16", HostSubnet: 26}},
					JoinSubnets: ovnkv1.DualStackCIDRs{"100.70.0.0/16", "fd70::/64"}}},
			want: Network{Topology: Layer3, Role: Primary, MTU: 9000, Transport: NoOverlay,
				Subnets:        []Subnet{{CIDR: pfx("10.100.0.0/16"), HostSubnet: 26}},
				JoinSubnets:    pfxs("100.70.0.0/16"),
				TransitSubnets: pfxs("100.88.0.0/16")}},
		{name: "Layer2 overlapping the default transit subnet gets another (OKEP-5094 option 4)",
			spec: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: layer2(ovnkv1.NetworkRolePrimary, "100.88.0.0/16", "fd97::/60")},
			want: Network{Topology: Layer2, Role: Primary, MTU: 1400, Transport: Geneve,
				Subnets:     []Subnet{{CIDR: pfx("100.88.0.0/16")}, {CIDR: pfx("fd97::/60")}},
				JoinSubnets: pfxs("100.65.0.0/16", "fd99::/64"), TransitSubnets: pfxs("100.89.0.0/16", "fd97:0:0:10::/64"),
				TransitSubnetsChanged: true}},
		{name: "Layer2 without IPAM",
			spec: ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2,
				Layer2: &ovnkv1.Layer2Config{Role: ovnkv1.NetworkRoleSecondary, IPAM: &ovnkv1.IPAMConfig{Mode: ovnkv1.IPAMDisabled}}},
			want: Network{Topology: Layer2, Role: Secondary, MTU: 1400, Transport: Geneve}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := Inputs{
				DefaultNetwork: DefaultNetworkConfig{Subnets: []Subnet{{CIDR: pfx("10.244.0.0/16"), HostSubnet: 24}}},
				Namespaces:     []corev1.Namespace{testNamespace("ns", map[string]string{"x": "y"})},
				CUDNs:          []*ovnkv1.ClusterUserDefinedNetwork{testCUDN("n", map[string]string{"x": "y"}, tc.spec, networkAnnotations(3, ""))},
			}
			st, errs := Build(in)
			if len(errs) != 0 || len(st.Networks) != 2 {
				t.Fatalf("Build: %d networks, errors %v", len(st.Networks), errs)
			}
			want := tc.want
			want.Name, want.ID, want.Namespaces = "cluster_udn_n", 3, []string{"ns"}
			want.Owner = ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "n"}
			if got := *st.Networks[0]; !reflect.DeepEqual(got, want) {
				t.Fatalf("network =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestBuildDefaultNetworkConfig(t *testing.T) {
	in := Inputs{
		Config: Config{DefaultJoinSubnets: pfxs("100.99.0.0/16")},
		DefaultNetwork: DefaultNetworkConfig{
			Subnets:        []Subnet{{CIDR: pfx("10.128.0.0/14")}},
			MTU:            8900,
			TransitSubnets: pfxs("100.90.0.0/16"),
		},
	}
	st, errs := Build(in)
	if len(errs) != 0 {
		t.Fatalf("Build errors: %v", errs)
	}
	want := &Network{Name: "default", Topology: Layer3, Role: Primary, MTU: 8900, Transport: Geneve,
		Subnets:     []Subnet{{CIDR: pfx("10.128.0.0/14"), HostSubnet: 24}},
		JoinSubnets: pfxs("100.99.0.0/16"), TransitSubnets: pfxs("100.90.0.0/16")}
	if len(st.Networks) != 1 || !reflect.DeepEqual(st.Networks[0], want) {
		t.Fatalf("networks = %+v, want [%+v]", st.Networks, want)
	}
	if !reflect.DeepEqual(st.Config.DefaultJoinSubnets, pfxs("100.99.0.0/16")) {
		t.Errorf("Config.DefaultJoinSubnets = %v, want the configured ones", st.Config.DefaultJoinSubnets)
	}
}

func TestBuildDoesNotAliasInputs(t *testing.T) {
	in := clusterInputs()
	st, _ := Build(in)
	in.Nodes[0].Labels["changed"] = "yes"
	in.Config.ServiceSubnets[0] = pfx("10.0.0.0/8")
	if _, ok := st.Nodes[0].Labels["changed"]; ok {
		t.Error("the State shares a node's labels with the input")
	}
	if st.Config.ServiceSubnets[0] != pfx("10.96.0.0/16") {
		t.Error("the State shares Config slices with the input")
	}
}

// TestBuildKeepsTheNodeOfABadGatewayTunnelID: a bad entry of the gateway tunnel ids is
// reported and dropped, and the node with its valid entries stays in the state.
func TestBuildKeepsTheNodeOfABadGatewayTunnelID(t *testing.T) {
	in := clusterInputs()
	in.Nodes[0].Annotations[AnnotationLayer2GatewayTunnelIDs] = `{"green_net":"4","blue":"0","red":5}`
	st, errs := Build(in)
	node := st.Node(in.Nodes[0].Name)
	if node == nil {
		t.Fatalf("node %s left out: %v", in.Nodes[0].Name, errs)
	}
	if len(node.Layer2GatewayTunnelIDs) != 1 || node.Layer2GatewayTunnelIDs["green_net"] != 4 {
		t.Errorf("ids %v, want only green_net's 4", node.Layer2GatewayTunnelIDs)
	}
	var text []string
	for _, err := range errs {
		text = append(text, err.Error())
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{AnnotationLayer2GatewayTunnelIDs, `network "blue"`, `network "red"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
}

// TestBuildPodRunning: a pod runs when its phase says so, or while its phase is still
// Pending but an init or sidecar container runs.
func TestBuildPodRunning(t *testing.T) {
	in := clusterInputs()
	p := &in.Pods[0]
	for _, tc := range []struct {
		name   string
		status corev1.PodStatus
		want   bool
	}{
		{"running", corev1.PodStatus{Phase: corev1.PodRunning}, true},
		{"pending", corev1.PodStatus{Phase: corev1.PodPending}, false},
		{"pending, an init container runs", corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}, true},
		{"pending, a container waits", corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}}}}, false},
	} {
		p.Status = tc.status
		st, _ := Build(in)
		var got *Pod
		for _, q := range st.Pods {
			if q.Namespace == p.Namespace && q.Name == p.Name {
				got = q
			}
		}
		if got == nil || got.Running != tc.want {
			t.Errorf("%s: pod %+v, want running %v", tc.name, got, tc.want)
		}
	}
}
