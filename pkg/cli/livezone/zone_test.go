package livezone

import (
	"slices"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// TestNetworkResolves the ways users name a network, against a zone holding a CUDN,
// a UDN and the default network.
func TestNetworkResolves(t *testing.T) {
	z := &Zone{Node: "node1", Rows: &rows.Set{Routers: []*nbdb.LogicalRouter{
		router("ovn_cluster_router", "default", "layer3"),
		router("cluster_udn_blue_ovn_cluster_router", "cluster_udn_blue", "layer3"),
		router("ns1_red_transit_router", "ns1_red", "layer2"),
	}}}
	for _, c := range []struct {
		arg  string
		ns   Namespace
		want string
	}{
		{"default", Namespace{Name: "ns1"}, "default"},
		{"blue", Namespace{Name: "default"}, "cluster_udn_blue"},
		{"cluster_udn_blue", Namespace{Name: "default"}, "cluster_udn_blue"},
		{"ns1/red", Namespace{Name: "default"}, "ns1_red"},
		{"red", Namespace{Name: "ns1", Explicit: true}, "ns1_red"},
		{"red", Namespace{Name: "ns1"}, "ns1_red"}, // the context's namespace
		{"ns1_red", Namespace{Name: "default"}, "ns1_red"},
	} {
		n, err := z.Network(c.arg, c.ns)
		if err != nil || n.OVNName != c.want {
			t.Errorf("Network(%q, %+v) = %+v, %v; want %s", c.arg, c.ns, n, err, c.want)
		}
	}
	_, err := z.Network("green", Namespace{Name: "default"})
	if err == nil || err.Error() != `unknown network "green" in node node1's zone: it holds blue, default, ns1/red` {
		t.Errorf("unknown network: %v", err)
	}
	z.zoneStatus = map[string]string{"cluster_udn_green": "no tunnel keys yet"}
	_, err = z.Network("green", Namespace{Name: "default"})
	if err == nil || err.Error() != `network "green" is not programmed in node node1's zone yet: no tunnel keys yet` {
		t.Errorf("network the agent reported: %v", err)
	}
}

func router(name, network, topology string) *nbdb.LogicalRouter {
	return &nbdb.LogicalRouter{UUID: "LR:" + name, Name: name, ExternalIDs: map[string]string{rows.NetworkKey: network, rows.TopologyKey: topology}}
}

func TestRoles(t *testing.T) {
	blue := Network{Name: "blue", OVNName: "cluster_udn_blue"}
	def := Network{Name: "default", OVNName: "default"}
	for _, c := range []struct {
		got, want string
	}{
		{RouterRole(blue, "cluster_udn_blue_ovn_cluster_router"), "cluster router"},
		{RouterRole(blue, "GR_cluster_udn_blue_node1"), "gateway router"},
		{RouterRole(def, "GR_node1"), "gateway router"},
		{RouterRole(blue, "cluster_udn_blue_transit_router"), "transit router"},
		{RouterRole(def, "someone_elses"), ""},
		{SwitchRole(blue, "cluster_udn_blue_join", ""), "join switch"},
		{SwitchRole(blue, "ext_cluster_udn_blue_node1", "node1"), "external switch"},
		{SwitchRole(def, "ext_node1", "node1"), "external switch"},
		{SwitchRole(blue, "cluster_udn_blue_node1", "node1"), "node switch"},
		{SwitchRole(def, "transit_switch", ""), "transit switch"},
		{SwitchRole(blue, "cluster_udn_blue_ovn_layer2_switch", ""), "layer2 switch"},
		{SwitchRole(def, "node1", ""), ""},
	} {
		if c.got != c.want {
			t.Errorf("role %q, want %q", c.got, c.want)
		}
	}
}

func TestListSome(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g"}
	if got := listSome(names[:5]); got != "a, b, c, d, e" {
		t.Errorf("listSome(5) = %q", got)
	}
	if got := listSome(names); got != "a, b, c, d, e, … (7 in all)" {
		t.Errorf("listSome(7) = %q", got)
	}
	z := &Zone{Node: "a", Nodes: slices.Clone(names), Defaulted: true}
	if got := z.NodeHint(); got != "Showing a, the first of 7 nodes by name; pick another with --node: b, c, d, e, f, … (6 in all)." {
		t.Errorf("NodeHint = %q", got)
	}
	z.Defaulted = false
	if got := z.NodeHint(); got != "" {
		t.Errorf("NodeHint with --node = %q", got)
	}
}
