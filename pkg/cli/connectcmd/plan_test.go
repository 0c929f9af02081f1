package connectcmd

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// planCUDN is a primary ClusterUserDefinedNetwork of a snapshot, not on any server.
func planCUDN(name string, topology ovnkv1.NetworkTopology, subnets ...string) netview.Network {
	return netview.Network{CUDN: &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ovnkv1.ClusterUserDefinedNetworkSpec{Network: spec(topology, subnets...)}}}
}

// TestPlanSubnets checks the connect subnets chosen for the networks' IP families:
// the defaults, and --network-prefix given for IPv4 or IPv6.
func TestPlanSubnets(t *testing.T) {
	snap := &snapshot{networks: []netview.Network{
		planCUDN("v4", ovnkv1.NetworkTopologyLayer3, "10.1.0.0/16"),
		planCUDN("v6", ovnkv1.NetworkTopologyLayer3, "fd00:1::/48"),
		planCUDN("v6b", ovnkv1.NetworkTopologyLayer2, "fd00:2::/64"),
		planCUDN("dual", ovnkv1.NetworkTopologyLayer2, "10.2.0.0/16", "fd00:3::/64"),
	}}
	snap.model = netview.NewModel(snap.networks, nil)
	for _, tc := range []struct {
		name    string
		args    []string
		subnets []netip.Prefix
		prefix  int
		want    []ovnkv1.ConnectSubnet
	}{
		{"an IPv4 and a dual-stack network", []string{"v4", "dual"}, nil, 24,
			[]ovnkv1.ConnectSubnet{{CIDR: "192.168.0.0/16", NetworkPrefix: 24}, {CIDR: "fd00:10::/112", NetworkPrefix: 120}}},
		{"IPv6 only", []string{"v6", "v6b"}, nil, 24,
			[]ovnkv1.ConnectSubnet{{CIDR: "fd00:10::/112", NetworkPrefix: 120}}},
		{"IPv6 prefix given", []string{"v6", "v6b"}, nil, 122,
			[]ovnkv1.ConnectSubnet{{CIDR: "fd00:10::/112", NetworkPrefix: 122}}},
		{"IPv6 prefix given for both", []string{"v4", "dual"}, []netip.Prefix{netip.MustParsePrefix("fd00:20::/112"), netip.MustParsePrefix("172.31.0.0/16")}, 122,
			[]ovnkv1.ConnectSubnet{{CIDR: "172.31.0.0/16", NetworkPrefix: 26}, {CIDR: "fd00:20::/112", NetworkPrefix: 122}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &request{args: tc.args, subnets: tc.subnets, networkPrefix: tc.prefix, connectivity: []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork}}
			p, err := r.planConnect(snap, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.connect.Spec.ConnectSubnets, tc.want) {
				t.Errorf("connect subnets %v, want %v", p.connect.Spec.ConnectSubnets, tc.want)
			}
		})
	}
}

// TestConnectName checks derived names: the networks' names joined, a free suffix when
// taken, and a digest keeping long ones DNS labels that differ.
func TestConnectName(t *testing.T) {
	long := strings.Repeat("a", 40)
	snap := &snapshot{
		networks: []netview.Network{
			planCUDN("blue", ovnkv1.NetworkTopologyLayer3, "10.1.0.0/16"),
			planCUDN("green.example", ovnkv1.NetworkTopologyLayer3, "10.2.0.0/16"),
			planCUDN(long+"-x", ovnkv1.NetworkTopologyLayer3, "10.3.0.0/16"),
			planCUDN(long+"-y", ovnkv1.NetworkTopologyLayer3, "10.4.0.0/16"),
			{UDN: &ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "web"}, Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: spec(ovnkv1.NetworkTopologyLayer3, "10.5.0.0/16").Layer3}}},
		},
		connects: []ovnkv1.ClusterNetworkConnect{{ObjectMeta: metav1.ObjectMeta{Name: "blue-tenant-web"}}, {ObjectMeta: metav1.ObjectMeta{Name: "blue-tenant-web-2"}}},
	}
	snap.model = netview.NewModel(snap.networks, nil)
	name := func(args ...string) string {
		t.Helper()
		var nets []netview.Network
		for _, a := range args {
			n, err := resolve(snap.networks, a)
			if err != nil {
				t.Fatal(err)
			}
			nets = append(nets, n)
		}
		got, err := (&request{}).connectName(snap, nets)
		if err != nil {
			t.Fatal(err)
		}
		if msgs := validation.IsDNS1123Label(got); len(msgs) > 0 {
			t.Errorf("name %q is no DNS label: %s", got, msgs[0])
		}
		return got
	}
	if got := name("blue", "green.example"); got != "blue-green-example" {
		t.Errorf("blue and green.example: %q", got)
	}
	if got := name("blue", "tenant/web"); got != "blue-tenant-web-3" {
		t.Errorf("blue and tenant/web, whose name and next are taken: %q", got)
	}
	x, y := name("blue", long+"-x"), name("blue", long+"-y")
	if x == y || !strings.HasPrefix(x, "blue-aaaa") {
		t.Errorf("long names %q and %q: want distinct names starting with the networks'", x, y)
	}
}

// TestPlanBlocksForNodeIDs checks that a Layer3 network's block must hold the links of
// the node ids allocated, as the leader counts them (cluster.Layer3LinkAddresses), not
// one per node: nodes without an id yet need nothing until they get one.
func TestPlanBlocksForNodeIDs(t *testing.T) {
	nodes := func(ids ...int) []corev1.Node {
		out := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "new-1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "new-2"}}, {ObjectMeta: metav1.ObjectMeta{Name: "new-3"}}}
		for i, id := range ids {
			v, err := cluster.NodeIDCodec.Format(id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n" + strconv.Itoa(i), Annotations: map[string]string{cluster.AnnotationNodeID: v}}})
		}
		return out
	}
	networks := []netview.Network{
		planCUDN("blue", ovnkv1.NetworkTopologyLayer3, "10.1.0.0/16"),
		planCUDN("green", ovnkv1.NetworkTopologyLayer2, "10.2.0.0/16"),
	}
	subnet := []netip.Prefix{netip.MustParsePrefix("172.31.0.0/24")}
	for _, tc := range []struct {
		name string
		ids  []int
		want string // "" for accepted
	}{
		{"no node id yet", nil, ""},
		{"four nodes, ids up to 1", []int{1}, ""},
		{"ids up to 2", []int{1, 2}, "--network-prefix 30 gives each network a block of 4 addresses in --subnet 172.31.0.0/24, but Layer3 network blue needs 2 per node, 6 for node ids up to 2: use --network-prefix 29 or less"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &snapshot{networks: networks, nodes: nodes(tc.ids...)}
			snap.model = netview.NewModel(snap.networks, nil)
			r := &request{args: []string{"blue", "green"}, subnets: subnet, networkPrefix: 30, connectivity: []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork}}
			_, err := r.planConnect(snap, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused what the leader accepts: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
