package zoneview

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

func TestRenderWraps(t *testing.T) {
	plain := lipgloss.NewStyle()
	for _, c := range []struct {
		name  string
		line  Line
		width int
		want  string
	}{
		{"fits", Line{{plain, "peer: rtoe-GR_node1 on switch ext_node1"}}, 80, "peer: rtoe-GR_node1 on switch ext_node1"},
		{"at spaces, continuation indented", Line{{plain, "aaaa bbbb cccc dddd"}}, 10, "aaaa bbbb\n  cccc\n  dddd"},
		{"glued words stay together", Line{{plain, "xxxx " + Glue("tunnel key: ")}, {plain, "4"}}, 16, "xxxx\n  tunnel key: 4"},
		{"a long name breaks after _", Line{{plain, "GR_test12_namespace.scoped_ovn-worker"}}, 20, "GR_test12_namespace.\n  scoped_ovn-worker"},
		{"a break too early is not taken", Line{{plain, "ab_cdefghijklmnop"}}, 12, "ab_cdefghijk\n  lmnop"},
		{"a name without breaks is cut", Line{{plain, "abcdefghijkl"}}, 5, "abcde\n  fgh\n  ijk\n  l"},
		{"empty", nil, 10, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.line.Render(c.width)
			if got != c.want {
				t.Errorf("Render(%d) =\n%s\nwant\n%s", c.width, got, c.want)
			}
			for _, l := range strings.Split(got, "\n") {
				if ansi.StringWidth(l) > c.width {
					t.Errorf("line %q is wider than %d", l, c.width)
				}
			}
		})
	}
}

// TestRenderStylesRuns: a wrapped run keeps its style on every line, and a run is
// styled once per line rather than once per word.
func TestRenderStylesRuns(t *testing.T) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI256)
	bold := r.NewStyle().Bold(true)
	l := Line{{r.NewStyle(), "label: "}, {bold, "one two three"}}
	got := l.Render(16)
	want := "label: " + bold.Render("one two") + "\n  " + bold.Render("three")
	if got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

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
