package cluster

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

var testCNCRef = ObjectRef{Kind: "ClusterNetworkConnect", Name: "colors"}

func TestConnectSubnetsCodec(t *testing.T) {
	runCodecCases(t, ConnectSubnetsCodec, testCNCRef, []codecCase[map[string][]netip.Prefix]{
		{name: "upstream's example", value: `{"layer3_1":{"ipv4":"192.168.0.0/24"},"layer3_2":{"ipv4":"192.168.1.0/24"}}`,
			want: map[string][]netip.Prefix{"layer3_1": pfxs("192.168.0.0/24"), "layer3_2": pfxs("192.168.1.0/24")}},
		{name: "dual-stack", value: `{"layer2_3":{"ipv6":"fd00:10::100/120","ipv4":"192.168.1.0/24"}}`,
			want: map[string][]netip.Prefix{"layer2_3": pfxs("192.168.1.0/24", "fd00:10::100/120")}},
		{name: "IPv6 only", value: `{"layer3_1":{"ipv6":"fd00:10::/120"}}`, want: map[string][]netip.Prefix{"layer3_1": pfxs("fd00:10::/120")}},
		{name: "unknown fields are ignored", value: `{"layer3_1":{"ipv4":"192.168.0.0/24","ipv5":"x"}}`, want: map[string][]netip.Prefix{"layer3_1": pfxs("192.168.0.0/24")}},
		{name: "empty", value: `{}`, want: nil},
		{name: "no block", value: `{"layer3_1":{}}`, wantErr: []string{`network "layer3_1" has no block`}},
		{name: "empty key", value: `{"":{"ipv4":"192.168.0.0/24"}}`, wantErr: []string{"a network key is empty"}},
		{name: "host bits", value: `{"layer3_1":{"ipv4":"192.168.0.1/24"}}`, wantErr: []string{`network "layer3_1": "192.168.0.1/24" is not a masked IPv4 prefix`}},
		{name: "family swapped", value: `{"layer3_1":{"ipv4":"fd00::/120"}}`, wantErr: []string{`"fd00::/120" is not a masked IPv4 prefix`}},
		{name: "IPv6 not a prefix", value: `{"layer3_1":{"ipv6":"fd00::1"}}`, wantErr: []string{`"fd00::1" is not a masked IPv6 prefix`}},
		{name: "block not an object", value: `{"layer3_1":"192.168.0.0/24"}`, wantErr: []string{`is a JSON string, want object`}},
		{name: "null", value: `null`, wantErr: []string{"value null is not a JSON object"}},
		{name: "malformed", value: `{"layer3_1":`, wantErr: []string{`malformed JSON`}},
	})
	runFormatCases(t, ConnectSubnetsCodec, []formatCase[map[string][]netip.Prefix]{
		{name: "sorted, IPv4 first", value: map[string][]netip.Prefix{"layer3_2": pfxs("fd00:10::100/120", "192.168.1.0/24"), "layer2_1": pfxs("192.168.0.0/24")},
			want: `{"layer2_1":{"ipv4":"192.168.0.0/24"},"layer3_2":{"ipv4":"192.168.1.0/24","ipv6":"fd00:10::100/120"}}`},
		{name: "none", value: nil, want: `{}`},
		{name: "empty key", value: map[string][]netip.Prefix{"": pfxs("192.168.0.0/24")}, wantErr: "a network key is empty"},
		{name: "no block", value: map[string][]netip.Prefix{"layer3_1": nil}, wantErr: `network "layer3_1" has no block`},
		{name: "two of a family", value: map[string][]netip.Prefix{"layer3_1": pfxs("192.168.0.0/24", "192.168.1.0/24")},
			wantErr: "192.168.0.0/24 and 192.168.1.0/24 are both IPv4; at most one per IP family"},
		{name: "host bits", value: map[string][]netip.Prefix{"layer3_1": {netip.MustParsePrefix("192.168.0.1/24")}},
			wantErr: `network "layer3_1": block 192.168.0.1/24 has host bits set; the block is 192.168.0.0/24`},
		{name: "invalid", value: map[string][]netip.Prefix{"layer3_1": {{}}}, wantErr: "invalid prefix"},
	})
}

func TestConnectTunnelKeyCodec(t *testing.T) {
	runCodecCases(t, ConnectTunnelKeyCodec, testCNCRef, []codecCase[int]{
		{name: "key", value: "16715779", want: 16715779},
		{name: "zero", value: "0", wantErr: []string{`"0" is not a tunnel key (an integer from 1 to 16777215)`}},
		{name: "too big", value: "16777216", wantErr: []string{`"16777216" is not a tunnel key`}},
		{name: "JSON", value: `"5"`, wantErr: []string{`"\"5\"" is not a tunnel key`}},
	})
	runFormatCases(t, ConnectTunnelKeyCodec, []formatCase[int]{
		{name: "key", value: 16715779, want: "16715779"},
		{name: "zero", value: 0, wantErr: "tunnel key 0 is outside 1-16777215"},
	})
}

func FuzzConnectSubnets(f *testing.F)   { fuzzCodec(f, ConnectSubnetsCodec) }
func FuzzConnectTunnelKey(f *testing.F) { fuzzCodec(f, ConnectTunnelKeyCodec) }

func TestConnectKeys(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{NetworkOwnerKey(&Network{Topology: Layer3, ID: 1}), "layer3_1"},
		{NetworkOwnerKey(&Network{Topology: Layer2, ID: 12}), "layer2_12"},
		{NetworkOwnerKeyOf(Layer2, 4095), "layer2_4095"},
		{ConnectZoneStatusKey("colors"), "ClusterNetworkConnect/colors"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// connectInputs is a cluster whose networks a connect may select:
//   - ClusterUserDefinedNetworks labelled connect=yes: blue (Layer3, id 1), flat
//     (no-overlay), extra (secondary), pending (no id yet); other is labelled connect=no;
//   - primary UserDefinedNetworks red/net (Layer2, id 2, namespace labelled connect=yes)
//     and plain/net (namespace not labelled), and the secondary gray/sec (namespace
//     labelled).
func connectInputs(cncs ...*ovnkv1.ClusterNetworkConnect) Inputs {
	yes, no := map[string]string{"connect": "yes"}, map[string]string{"connect": "no"}
	in := clusterInputs()
	in.Pods = nil
	in.Namespaces = []corev1.Namespace{
		testNamespace("blue-a", map[string]string{"tenant": "blue"}),
		testNamespace("red", yes), testNamespace("plain", nil), testNamespace("gray", yes), testNamespace("other", nil),
	}
	l3 := func(cidr ovnkv1.CIDR, role ovnkv1.NetworkRole) ovnkv1.NetworkSpec {
		return ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: layer3(role, ovnkv1.Layer3Subnet{CIDR: cidr, HostSubnet: 24})}
	}
	flat := l3("10.70.0.0/16", ovnkv1.NetworkRolePrimary)
	flat.Transport = ovnkv1.TransportOptionNoOverlay
	flat.NoOverlay = &ovnkv1.NoOverlayConfig{OutboundSNAT: ovnkv1.SNATEnabled, Routing: ovnkv1.RoutingUnmanaged}
	labelled := func(c *ovnkv1.ClusterUserDefinedNetwork, labels map[string]string) *ovnkv1.ClusterUserDefinedNetwork {
		c.Labels = labels
		return c
	}
	tenant := map[string]string{"tenant": "blue"}
	in.CUDNs = []*ovnkv1.ClusterUserDefinedNetwork{
		labelled(testCUDN("blue", tenant, l3("10.100.0.0/16", ovnkv1.NetworkRolePrimary), networkAnnotations(1, "[16711684]")), yes),
		labelled(testCUDN("flat", map[string]string{"kubernetes.io/metadata.name": "other"}, flat, networkAnnotations(5, "[16711688]")), yes),
		labelled(testCUDN("extra", tenant, ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: layer2(ovnkv1.NetworkRoleSecondary, "10.50.0.0/24")},
			networkAnnotations(6, "[16711689]")), yes),
		labelled(testCUDN("pending", map[string]string{"kubernetes.io/metadata.name": "plain"}, l3("10.80.0.0/16", ovnkv1.NetworkRoleSecondary), nil), yes),
		labelled(testCUDN("other", map[string]string{"kubernetes.io/metadata.name": "other"}, l3("10.90.0.0/16", ovnkv1.NetworkRoleSecondary), networkAnnotations(7, "[16711690]")), no),
	}
	in.UDNs = []*ovnkv1.UserDefinedNetwork{
		testUDN("red", "net", ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: layer2(ovnkv1.NetworkRolePrimary, "10.200.0.0/16")},
			networkAnnotations(2, "[16711685,16715779]")),
		testUDN("plain", "net", ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: layer3(ovnkv1.NetworkRolePrimary, ovnkv1.Layer3Subnet{CIDR: "10.150.0.0/16"})},
			networkAnnotations(3, "[16711686]")),
		testUDN("gray", "sec", ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: layer2(ovnkv1.NetworkRoleSecondary, "10.60.0.0/24")},
			networkAnnotations(4, "[16711687]")),
	}
	in.CNCs = cncs
	return in
}

// colorsCNC selects the ClusterUserDefinedNetworks labelled connect=yes and the primary
// UserDefinedNetworks of the namespaces labelled so.
func colorsCNC(annotations map[string]string) *ovnkv1.ClusterNetworkConnect {
	yes := metav1.LabelSelector{MatchLabels: map[string]string{"connect": "yes"}}
	return &ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: "colors", Annotations: annotations},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: ovnkv1.NetworkSelectors{
				{NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks, ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{NetworkSelector: yes}},
				{NetworkSelectionType: ovnkv1.PrimaryUserDefinedNetworks, PrimaryUserDefinedNetworkSelector: &ovnkv1.PrimaryUserDefinedNetworkSelector{NamespaceSelector: yes}},
			},
			ConnectSubnets: []ovnkv1.ConnectSubnet{{CIDR: "192.168.0.0/16", NetworkPrefix: 24}, {CIDR: "fd00:10::/112", NetworkPrefix: 120}},
			Connectivity:   []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork, ovnkv1.ConnectivityClusterIPServiceNetwork},
		},
	}
}

// colorsSpec is what colorsCNC asks for of connectInputs' networks.
func colorsSpec() *Connect {
	return &Connect{
		Name:     "colors",
		Networks: []string{"cluster_udn_blue", "red_net"},
		Refused: map[string]string{
			"cluster_udn_extra": "a secondary network cannot be connected; only primary networks can",
			"cluster_udn_flat":  "a no-overlay network cannot be connected: connect routers need the Geneve overlay",
		},
		Subnets:        []ConnectSubnet{{CIDR: pfx("192.168.0.0/16"), NetworkPrefix: 24}, {CIDR: pfx("fd00:10::/112"), NetworkPrefix: 120}},
		PodNetwork:     true,
		ServiceNetwork: true,
		Blocks:         map[string][]netip.Prefix{},
	}
}

// TestBuildConnects: Build selects the primary networks on Geneve by CUDN labels and by
// namespace, refuses the others, and reads the leader's allocations by owner key.
func TestBuildConnects(t *testing.T) {
	cnc := colorsCNC(map[string]string{
		AnnotationConnectRouterTunnelKey: "16715790",
		// layer3_7 (other, not selected) and layer2_9 (no such network) are left out.
		AnnotationConnectSubnets: `{"layer3_1":{"ipv4":"192.168.0.0/24","ipv6":"fd00:10::/120"},"layer2_2":{"ipv4":"192.168.1.0/24","ipv6":"fd00:10::100/120"},` +
			`"layer3_7":{"ipv4":"192.168.2.0/24"},"layer2_9":{"ipv4":"192.168.3.0/24"}}`,
	})
	st, errs := Build(connectInputs(cnc))
	for _, err := range errs {
		if !errors.Is(err, ErrNotReady) { // the CUDN pending waits for its id
			t.Errorf("unexpected error: %v", err)
		}
	}
	want := colorsSpec()
	want.TunnelKey = 16715790
	want.Blocks = map[string][]netip.Prefix{
		"cluster_udn_blue": pfxs("192.168.0.0/24", "fd00:10::/120"),
		"red_net":          pfxs("192.168.1.0/24", "fd00:10::100/120"),
	}
	if len(st.Connects) != 1 || !reflect.DeepEqual(st.Connects[0], want) {
		t.Fatalf("Connects =\n%#v\nwant\n%#v", st.Connects, want)
	}
}

// TestBuildConnectNotAllocated: a connect the leader has not allocated yet has no key
// and no blocks; connects are sorted by name.
func TestBuildConnectNotAllocated(t *testing.T) {
	other := colorsCNC(nil)
	other.Name = "a-first"
	st, _ := Build(connectInputs(colorsCNC(nil), other))
	if len(st.Connects) != 2 || st.Connects[0].Name != "a-first" {
		t.Fatalf("connects %+v, want a-first then colors", st.Connects)
	}
	if c := st.Connects[1]; !reflect.DeepEqual(c, colorsSpec()) {
		t.Fatalf("connect =\n%#v\nwant\n%#v", c, colorsSpec())
	}
}

// TestBuildConnectErrors: a connect with a malformed annotation or selector is left out
// with an error naming it; the others are built.
func TestBuildConnectErrors(t *testing.T) {
	badKey := colorsCNC(map[string]string{AnnotationConnectRouterTunnelKey: "0"})
	badKey.Name = "bad-key"
	badBlocks := colorsCNC(map[string]string{AnnotationConnectSubnets: `{"layer3_1":{"ipv4":"192.168.0.1/24"}}`})
	badBlocks.Name = "bad-blocks"
	badSelector := colorsCNC(nil)
	badSelector.Name = "bad-selector"
	badSelector.Spec.NetworkSelectors[0].ClusterUserDefinedNetworkSelector.NetworkSelector = metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "connect", Operator: "Near"}}}
	st, errs := Build(connectInputs(badKey, badBlocks, badSelector, colorsCNC(nil)))
	if len(st.Connects) != 1 || st.Connects[0].Name != "colors" {
		t.Fatalf("connects %+v, want only colors", st.Connects)
	}
	var got []string
	for _, err := range errs {
		if !errors.Is(err, ErrNotReady) {
			got = append(got, err.Error())
		}
	}
	want := []string{
		`clusternetworkconnect/bad-blocks: annotation k8s.ovn.org/network-connect-subnet: network "layer3_1": "192.168.0.1/24" is not a masked IPv4 prefix`,
		`clusternetworkconnect/bad-key: annotation k8s.ovn.org/connect-router-tunnel-key: "0" is not a tunnel key (an integer from 1 to 16777215)`,
		`clusternetworkconnect/bad-selector: network selector: "Near" is not a valid label selector operator`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestConnectSpec: the leader's view selects networks that have no id yet, and reads no
// annotation.
func TestConnectSpec(t *testing.T) {
	in := connectInputs()
	for _, c := range in.CUDNs {
		if c.Name == "pending" {
			c.Spec.Network.Layer3.Role = ovnkv1.NetworkRolePrimary
		}
	}
	networks, _ := SpecNetworks(in)
	cnc := colorsCNC(map[string]string{AnnotationConnectRouterTunnelKey: "16715790"})
	got, err := ConnectSpec(cnc, networks, in.Namespaces, in.CUDNs)
	if err != nil {
		t.Fatal(err)
	}
	want := colorsSpec()
	want.Networks = []string{"cluster_udn_blue", "cluster_udn_pending", "red_net"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ConnectSpec =\n%#v\nwant\n%#v", got, want)
	}

	cnc.Spec.ConnectSubnets[0].CIDR = "192.168.0.1/16"
	if _, err := ConnectSpec(cnc, networks, in.Namespaces, in.CUDNs); err == nil || err.Error() != `connect subnet "192.168.0.1/16" is not a network address in CIDR notation such as 192.168.0.0/16` {
		t.Fatalf("ConnectSpec of a bad subnet: %v", err)
	}
}
