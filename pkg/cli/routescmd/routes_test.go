package routescmd_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/livezone/livezonetest"
	"github.com/ovnk/ovnk/pkg/cli/routescmd"
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// routesJSON runs `routes args… -o json` and decodes the view.
func routesJSON(t *testing.T, k *testenv.Kube, args ...string) routescmd.View {
	t.Helper()
	return livezonetest.JSON[routescmd.View](t, k, append([]string{"routes"}, args...)...)
}

// nbctlLines runs the real ovn-nbctl against the NB and returns its lines with
// runs of spaces collapsed, leaving out the lines that are not rows.
func nbctlLines(t *testing.T, nb *testenv.NB, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := nb.NBCtl(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		l = livezonetest.Normalize(l)
		switch {
		case l == "", strings.HasSuffix(l, " Routes"), strings.HasPrefix(l, "Route Table "), l == "Routing Policies", strings.HasPrefix(l, "TYPE GATEWAY_PORT"):
			continue
		}
		rows = append(rows, l)
	}
	return rows
}

// words joins the non-empty values with single spaces, as a collapsed row reads.
func words(values ...string) string {
	var out []string
	for _, v := range values {
		if v != "" {
			out = append(out, v)
		}
	}
	return livezonetest.Normalize(strings.Join(out, " "))
}

// nbctlNATRow is a NAT rule of -o json as ovn-nbctl lr-nat-list prints it, runs of
// spaces collapsed: the row pkg/ovn/nbctl prints for its values, which cuts them to the
// column widths (a match to 18 bytes, an IPv6 external address to 15) and shows the
// logical port and external MAC only of a rule that has both. That printer is tested
// byte for byte against ovn-nbctl, so this compares the rules' values and order
// without a second copy of the widths. Our table shows values whole.
func nbctlNATRow(n livezone.NAT) string {
	nat := &nbdb.NAT{Type: n.Type, ExternalIP: n.ExternalIP, ExternalPortRange: n.ExternalPortRange, LogicalIP: n.LogicalIP, Match: n.Match}
	if n.ExternalMAC != "" {
		nat.ExternalMAC = &n.ExternalMAC
	}
	if n.LogicalPort != "" {
		nat.LogicalPort = &n.LogicalPort
	}
	return livezonetest.Normalize(nbctl.ListedNAT{NAT: nat, GatewayPort: n.GatewayPort}.Line())
}

// tableRows are the route and policy rows our table prints for each router, with runs
// of spaces collapsed: the lines of a router's block that are not headings, up to its
// NAT section, whose columns differ from ovn-nbctl's.
func tableRows(out string) map[string][]string {
	rows := map[string][]string{}
	router, inNAT := "", false
	for _, l := range strings.Split(out, "\n") {
		l = livezonetest.Normalize(l)
		switch {
		case strings.HasPrefix(l, "Router "):
			router, _, _ = strings.Cut(strings.TrimPrefix(l, "Router "), " ")
			inNAT = false
		case l == "NAT":
			inNAT = true
		case router == "" || inNAT || l == "" || strings.HasSuffix(l, " Routes") || strings.HasPrefix(l, "Route Table ") ||
			l == "Routing Policies" || strings.HasPrefix(l, "PREFIX ") || strings.HasPrefix(l, "PRIORITY ") || strings.HasPrefix(l, "No "):
			// the title, a NAT row, or a heading: not a row to compare
		default:
			rows[router] = append(rows[router], l)
		}
	}
	return rows
}

// requireSameRows compares our rows with ovn-nbctl's, in order, and returns how many
// rows were compared.
func requireSameRows(t *testing.T, what string, got, want []string) int {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s differs from ovn-nbctl's:\nours:\n  %s\novn-nbctl:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	return len(want)
}

// nbctlEdits add to the Layer3 zone's cluster router what ovn-nbctl lists its own way,
// through its generic commands where lr-route-add and lr-policy-add would tidy the
// values up first: ECMP paths, another route table, a src-ip route, a route through its
// output port alone, prefixes and next hops with host bits, /32, /128 and IPv6 not in
// canonical form, policies with options and with the deprecated nexthop column, NAT
// rules tied on type, gateway port, match and external IP, and NAT rules whose matches
// sort them before their external IPs do, two of them alike in the 18 bytes
// lr-nat-list shows.
var nbctlEdits = [][]string{
	{"--ecmp", "lr-route-add", "ovn_cluster_router", "192.168.0.0/24", "100.88.0.3"},
	{"--ecmp", "lr-route-add", "ovn_cluster_router", "192.168.0.0/24", "100.88.0.4"},
	{"--route-table=blue", "lr-route-add", "ovn_cluster_router", "10.0.0.0/8", "100.88.0.5"},
	{"--policy=src-ip", "lr-route-add", "ovn_cluster_router", "10.244.9.0/24", "100.88.0.6", "rtots-node1"},
	addRoute("ip_prefix=10.99.0.0/24", "output_port=rtots-node1"),
	addRoute("ip_prefix=10.98.0.5/24", `nexthop="100.88.0.7/32"`),
	addRoute(`ip_prefix="10.97.0.1/32"`, "nexthop=100.88.0.8"),
	addRoute(`ip_prefix="fd00:0:0:0::1:0/112"`, `nexthop="FD97:0:0::0:9"`),
	addRoute(`ip_prefix="fd00:0::1:5/128"`, `nexthop="::102:304"`),
	{"--id=@p", "create", "Logical_Router_Policy", "priority=2000", `match="ip4.src == 10.0.0.0/8"`, "action=reroute",
		`nexthops=["100.88.0.9/32","100.88.0.10","fd97:0::a"]`, "options:pkt_mark=100", "options:a=1", "options:zz=2", "options:m=3", "options:jump=4",
		"--", "add", "Logical_Router", "ovn_cluster_router", "policies", "@p"},
	{"--id=@p", "create", "Logical_Router_Policy", "priority=1999", `match="ip4.src == 10.1.0.0/16"`, "action=reroute", "nexthop=100.88.0.11",
		"--", "add", "Logical_Router", "ovn_cluster_router", "policies", "@p"},
	{"lr-nat-add", "ovn_cluster_router", "snat", "172.18.0.100", "10.244.1.0/24"},
	{"lr-nat-add", "ovn_cluster_router", "snat", "172.18.0.100", "10.244.2.0/24"},
	{"lr-nat-add", "ovn_cluster_router", "snat", "172.18.0.100", "10.244.3.0/24"},
	{"lr-nat-add", "ovn_cluster_router", "snat", "172.18.0.100", "10.244.4.0/24"},
	{"lr-nat-add", "ovn_cluster_router", "snat", "172.18.0.100", "10.244.5.0/24"},
	addNAT("type=snat", "external_ip=172.18.0.99", `logical_ip="10.244.6.0/24"`, `match="eth.dst == 0a:58:0a:f4:00:02"`),
	addNAT("type=snat", "external_ip=172.18.0.98", `logical_ip="10.244.7.0/24"`, `match="eth.dst == 0a:58:0a:f4:00:03"`),
	addNAT("type=snat", "external_ip=172.18.0.97", `logical_ip="10.244.8.0/24"`, `match="ip4.dst == 10.0.0.0/8"`),
}

// addNAT is the ovn-nbctl command that adds a NAT rule of these columns to the cluster
// router (lr-nat-add sets no match).
func addNAT(columns ...string) []string {
	args := append([]string{"--id=@n", "create", "NAT"}, columns...)
	return append(args, "--", "add", "Logical_Router", "ovn_cluster_router", "nat", "@n")
}

// addRoute is the ovn-nbctl command that adds a static route of these columns to the
// cluster router as they are written.
func addRoute(columns ...string) []string {
	args := append([]string{"--id=@r", "create", "Logical_Router_Static_Route"}, columns...)
	return append(args, "--", "add", "Logical_Router", "ovn_cluster_router", "static_routes", "@r")
}

// TestRoutesMatchOVNNBCtl compares every router's routes, policies and NAT of each
// network of a Layer3 zone with what the real ovn-nbctl lists from the same NB, row by
// row and in the same order: the routes and NAT as -o json lists them, the routes and
// policies as the table prints them. nbctlEdits adds the rows ovn-nbctl lists its own
// way.
func TestRoutesMatchOVNNBCtl(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, args := range nbctlEdits {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	routers, compared := 0, map[string]int{}
	for _, network := range []string{"default", "blue"} {
		args := []string{network, "--node", "node1", "--nb", nb.Endpoint, "--policies", "--nat"}
		v := routesJSON(t, k, args...)
		out, err := livezonetest.Run(t, k, livezonetest.Wide, nil, append([]string{"routes"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		table := tableRows(out)
		for _, r := range v.Routers {
			routers++
			var routes, nats []string
			for _, rt := range r.Routes {
				ecmp := ""
				if rt.ECMP {
					ecmp = "ecmp"
				}
				routes = append(routes, words(rt.Prefix, rt.Nexthop, rt.Policy, rt.OutputPort, ecmp))
			}
			for _, n := range r.NAT {
				nats = append(nats, nbctlNATRow(n))
			}
			nbctlRoutes, nbctlPolicies := nbctlLines(t, nb, "lr-route-list", r.Name), nbctlLines(t, nb, "lr-policy-list", r.Name)
			compared["routes"] += requireSameRows(t, "routes of "+r.Name, routes, nbctlRoutes)
			compared["NAT rules"] += requireSameRows(t, "NAT of "+r.Name, nats, nbctlLines(t, nb, "lr-nat-list", r.Name))
			compared["policies"] += requireSameRows(t, "table of "+r.Name, table[r.Name], append(nbctlRoutes, nbctlPolicies...)) - len(nbctlRoutes)
		}
	}
	if routers != 4 {
		t.Errorf("%d routers listed for the two networks, want 4 (a cluster and a gateway router each)", routers)
	}
	for _, what := range []string{"routes", "policies", "NAT rules"} {
		if compared[what] == 0 {
			t.Errorf("ovn-nbctl listed no %s: the comparison proves nothing", what)
		}
	}

	out, err := livezonetest.Run(t, k, livezonetest.Wide, nil, "routes", "ovn_cluster_router", "--node", "node1", "--nb", nb.Endpoint, "--policies")
	if err != nil {
		t.Fatal(err)
	}
	livezonetest.RequireLines(t, out,
		"Router ovn_cluster_router (cluster router)",
		"Route Table <main>:",
		"192.168.0.0/24 100.88.0.3 dst-ip ecmp",
		"192.168.0.0/24 100.88.0.4 dst-ip ecmp",
		"10.244.9.0/24 100.88.0.6 src-ip rtots-node1",
		"10.99.0.0/24 dst-ip rtots-node1",
		"10.98.0.0/24 100.88.0.7 dst-ip",
		"10.97.0.1 100.88.0.8 dst-ip",
		"fd00::1:0/112 fd97::9 dst-ip",
		"fd00::1:5 ::1.2.3.4 dst-ip",
		"1999 ip4.src == 10.1.0.0/16 reroute",
		"Route Table blue:",
		"10.0.0.0/8 100.88.0.5 dst-ip",
	)
}

// TestRoutesOKEP5094Listings requires the route, policy and NAT listings of OKEP-5094
// (as the topology golden test pins them) in the tables of ovn-control-plane's zone.
func TestRoutesOKEP5094Listings(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-control-plane")
	out, err := livezonetest.Run(t, k, livezonetest.Wide, nil, "routes", "test12/namespace-scoped", "--node", "ovn-control-plane", "--nb", nb.Endpoint, "--policies", "--nat")
	if err != nil {
		t.Fatal(err)
	}
	livezonetest.RequireLines(t, out,
		"Router test12_namespace.scoped_transit_router (transit router)",
		"10.96.0.1 203.203.0.2 dst-ip",
		"10.96.0.10 203.203.0.2 dst-ip",
		"100.65.0.2 100.88.0.5 dst-ip",
		"100.65.0.3 100.88.0.7 dst-ip",
		"100.65.0.4 100.88.0.9 dst-ip",
		"203.203.0.0/16 100.88.0.9 src-ip",
		`1004 inport == "trtos-test12_namespace.scoped_ovn_layer2_switch" && ip4.dst == 172.18.0.3 /* test12_namespace.scoped_ovn_layer2_switch */ reroute 203.203.0.2`,
		`1004 inport == "trtos-test12_namespace.scoped_ovn_layer2_switch" && ip6.dst == fc00:f853:ccd:e793::3 /* test12_namespace.scoped_ovn_layer2_switch */ reroute 2010:100:200::2`,
		"102 ip4.src == 203.203.0.0/16 && ip4.dst == 100.64.0.0/16 allow",
		"102 ip4.src == 203.203.0.0/16 && ip4.dst == 203.203.0.0/16 allow",
		"102 ip6.src == 2010:100:200::/60 && ip6.dst == 2010:100:200::/60 allow",
		"102 ip6.src == 2010:100:200::/60 && ip6.dst == fd98::/64 allow",
		"102 pkt.mark == 42 allow",
		"snat eth.dst == 0a:58:cb:cb:00:02 169.254.0.12 32768-60999 203.203.0.0/16 trtos-test12_namespace.scoped_ovn_layer2_switch",
		"Router GR_test12_namespace.scoped_ovn-control-plane (gateway router)",
		"169.254.0.0/17 169.254.0.4 dst-ip rtoe-GR_test12_namespace.scoped_ovn-control-plane",
		"203.203.0.0/16 100.88.0.8 dst-ip rtotr-GR_test12_namespace.scoped_ovn-control-plane",
		"0.0.0.0/0 172.18.0.1 dst-ip rtoe-GR_test12_namespace.scoped_ovn-control-plane",
		"No routing policies.",
	)
}

// TestRoutesOfOneRouter: a router's name selects that router alone, of any network.
func TestRoutesOfOneRouter(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	v := routesJSON(t, k, "GR_cluster_udn_blue_node1", "--node", "node1", "--nb", nb.Endpoint)
	if len(v.Routers) != 1 || v.Routers[0].Name != "GR_cluster_udn_blue_node1" || v.Routers[0].Role != "gateway router" || v.Network.Name != "blue" || v.Network.OVNName != "cluster_udn_blue" {
		t.Fatalf("routes of GR_cluster_udn_blue_node1: %+v", v)
	}
	if r := v.Routers[0]; len(r.Routes) != 6 || r.Policies != nil || r.NAT != nil {
		t.Errorf("without --policies and --nat: %d routes, policies %v, NAT %v", len(r.Routes), r.Policies, r.NAT)
	}
	if r := v.Routers[0].Routes[0]; r != (routescmd.Route{Family: "IPv4", Prefix: "169.254.0.0/17", Nexthop: "169.254.0.4", Policy: "dst-ip", OutputPort: "rtoe-GR_cluster_udn_blue_node1", UUID: r.UUID}) || r.UUID == "" {
		t.Errorf("first route: %+v", r)
	}
}

// TestRoutesYAML: -o yaml is the same view.
func TestRoutesYAML(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	out, err := livezonetest.Run(t, k, livezonetest.Plain, nil, "routes", "test12/namespace-scoped", "--node", "ovn-worker", "--nb", nb.Endpoint, "--nat", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v routescmd.View
	if err := yaml.UnmarshalStrict([]byte(out), &v); err != nil {
		t.Fatalf("-o yaml is not a View: %v\n%s", err, out)
	}
	if len(v.Routers) != 2 || len(v.Routers[1].Routes) != 10 || len(v.Routers[1].NAT) != 2 || v.Routers[1].NAT[0].Match != "eth.dst == 0a:58:cb:cb:00:02" {
		t.Errorf("yaml view: %+v", v)
	}
}

// TestRoutesGolden pins the tables with and without colour, at 80 and 200 columns.
func TestRoutesGolden(t *testing.T) {
	k := livezonetest.Cluster(t)
	okep := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	layer3 := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	livezonetest.Goldens(t, k, "routes", []livezonetest.Golden{
		{Name: "okep5094-ovn-worker", Args: []string{"routes", "test12/namespace-scoped", "--node", "ovn-worker", "--policies", "--nat", "--nb", okep.Endpoint}},
		{Name: "layer3-node1-blue", Args: []string{"routes", "blue", "--node", "node1", "--policies", "--nat", "--nb", layer3.Endpoint}},
		{Name: "layer3-node1-default-routes", Args: []string{"routes", "default", "--nb", layer3.Endpoint}},
	})
}

// TestRoutesOnATerminal: on a terminal no name is split, even one too long for the
// terminal's width: every router, port and address -o json lists, and every word of
// every match, is whole on a line at 80 and 60 columns, with -o wide (every column)
// and without; the columns left out to fit are named above the routers, and -o wide
// leaves none out.
func TestRoutesOnATerminal(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.OKEP5094(), "ovn-worker")
	args := []string{"routes", "test12/namespace-scoped", "--node", "ovn-worker", "--policies", "--nat", "--nb", nb.Endpoint}
	v := routesJSON(t, k, args[1:]...)
	// shown are the names and addresses every view shows, ports those of the columns
	// left out at 80 columns and narrower, ranges those of one left out at 60.
	var shown, ports, ranges []string
	for _, r := range v.Routers {
		shown = append(shown, r.Name)
		for _, rt := range r.Routes {
			shown = append(shown, rt.Prefix, rt.Nexthop)
			ports = append(ports, rt.OutputPort)
		}
		for _, p := range r.Policies {
			shown = append(shown, strings.Fields(p.Match)...)
			shown = append(shown, p.Nexthops...)
		}
		for _, n := range r.NAT {
			shown = append(shown, n.ExternalIP, n.LogicalIP)
			shown = append(shown, strings.Fields(n.Match)...)
			ports = append(ports, n.LogicalPort)
			ranges = append(ranges, n.ExternalPortRange)
		}
	}
	if !slices.Contains(ports, "rtoe-GR_test12_namespace.scoped_ovn-worker") || !slices.Contains(ports, "trtos-test12_namespace.scoped_ovn_layer2_switch") {
		t.Fatalf("the fixture's long port names are not in -o json: %q", ports)
	}
	// whole reports whether name is a word of out, not split across lines.
	whole := func(out, name string) bool { return slices.Contains(strings.Fields(out), name) }
	for _, c := range []struct {
		width int
		left  string
	}{
		{80, "OUTPUT PORT, LOGICAL_PORT"},
		{60, "OUTPUT PORT, EXTERNAL_PORT, LOGICAL_PORT"},
	} {
		term := clitest.Terminal{TTY: true, Width: c.width, NoColor: true}
		t.Run(fmt.Sprintf("%d columns", c.width), func(t *testing.T) {
			out, err := livezonetest.Run(t, k, term, nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			wide, err := livezonetest.Run(t, k, term, nil, append(args, "-o", "wide")...)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range shown {
				if name != "" && !whole(out, name) {
					t.Errorf("%q is not whole on a line of:\n%s", name, out)
				}
			}
			for _, name := range append(append(slices.Clone(shown), ports...), ranges...) {
				if name != "" && !whole(wide, name) {
					t.Errorf("-o wide: %q is not whole on a line of:\n%s", name, wide)
				}
			}
			for _, port := range ports {
				if port != "" && whole(out, port) {
					t.Errorf("%s shown, in a column left out:\n%s", port, out)
				}
			}
			if left := "Left out to fit the terminal (-o wide shows them): " + c.left + "."; !strings.Contains(strings.Join(strings.Fields(out), " "), left) {
				t.Errorf("the view does not say %q:\n%s", left, out)
			}
			if strings.Contains(wide, "Left out") {
				t.Errorf("-o wide leaves columns out:\n%s", wide)
			}
		})
	}
}

// TestRoutesBadInput: each mistake is one line naming the value and what exists.
func TestRoutesBadInput(t *testing.T) {
	k := livezonetest.Cluster(t)
	nb := livezonetest.ZoneNB(t, topologytest.Layer3(), "node1")
	missing := "unix:" + filepath.Join(t.TempDir(), "missing.sock")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"GR_node7", "--node", "node1", "--nb", nb.Endpoint}, []string{`unknown network "GR_node7"`, "node1", "blue, default"}},
		{[]string{"blue", "--node", "worker9", "--nb", nb.Endpoint}, []string{`unknown node "worker9"`, "node1, node2"}},
		{[]string{"blue", "--node", "node1", "--nb", missing}, []string{"node node1", missing}},
		{nil, []string{"accepts 1 arg(s), received 0"}},
		{[]string{"blue", "--nb", nb.Endpoint, "-o", "name"}, []string{`unknown output format "name"`, "json"}},
	} {
		out, err := livezonetest.Run(t, k, livezonetest.Plain, nil, append([]string{"routes"}, c.args...)...)
		clitest.OneLine(t, err, c.want...)
		if out != "" {
			t.Errorf("%v printed output besides the error:\n%s", c.args, out)
		}
	}
}

// TestRoutesOfConnectRouter: `routes connect_router_<cnc>` lists the connect router of
// OKEP-5224's colored-enterprise in ovn-worker's zone: a route to each node subnet of
// each connected network, through that node's link in the network's block of the
// connect subnet. The table has docs/connect.md's lr-route-list lines; -o json has that
// router alone, with exactly the routes the fixture's nodes and blocks call for.
func TestRoutesOfConnectRouter(t *testing.T) {
	k := livezonetest.Cluster(t)
	st := topologytest.OKEP5224()
	nb := livezonetest.ZoneNB(t, st, "ovn-worker")
	const router = "connect_router_colored-enterprise"
	args := []string{router, "--node", "ovn-worker", "--nb", nb.Endpoint}
	out, err := livezonetest.Run(t, k, livezonetest.Wide, nil, append([]string{"routes"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	livezonetest.RequireLines(t, out,
		"Router "+router,
		"Route Table <main>:",
		"100.10.0.0/24 192.168.1.8 dst-ip",
		"100.10.1.0/24 192.168.1.6 dst-ip",
		"100.10.2.0/24 192.168.1.4 dst-ip",
		"200.10.0.0/24 192.168.0.8 dst-ip",
		"200.10.1.0/24 192.168.0.6 dst-ip",
		"200.10.2.0/24 192.168.0.4 dst-ip",
	)

	// What the fixture calls for: each node's subnet of each connected network, via an
	// address in that network's block.
	cnc := st.Connects[0]
	type want struct {
		network string
		block   netip.Prefix
	}
	wants := map[string]want{}
	for _, n := range st.Nodes {
		for _, network := range cnc.Networks {
			for _, subnet := range n.Subnets[network] {
				wants[subnet.String()] = want{network, cnc.Blocks[network][0]}
			}
		}
	}
	if len(wants) != 6 {
		t.Fatalf("the fixture has %d node subnets in the connect, want 6 (3 nodes × 2 networks)", len(wants))
	}
	v := routesJSON(t, k, args...)
	if len(v.Routers) != 1 || v.Routers[0].Name != router {
		t.Fatalf("routes %s lists routers %+v, want %s alone", router, v.Routers, router)
	}
	seen := map[string]bool{}
	for _, rt := range v.Routers[0].Routes {
		w, ok := wants[rt.Prefix]
		nexthop, err := netip.ParseAddr(rt.Nexthop)
		switch {
		case !ok:
			t.Errorf("route %s via %s: no node subnet of a connected network", rt.Prefix, rt.Nexthop)
		case err != nil || !w.block.Contains(nexthop):
			t.Errorf("route %s via %s: the next hop is not in %s's block %s", rt.Prefix, rt.Nexthop, w.network, w.block)
		case seen[rt.Prefix]:
			t.Errorf("route %s listed twice", rt.Prefix)
		}
		if rt.Family != "IPv4" || rt.Policy != "dst-ip" || rt.UUID == "" {
			t.Errorf("route %+v: want an IPv4 dst-ip route with its UUID", rt)
		}
		seen[rt.Prefix] = true
	}
	for prefix, w := range wants {
		if !seen[prefix] {
			t.Errorf("no route to %s (network %s) on %s: %+v", prefix, w.network, router, v.Routers[0].Routes)
		}
	}
}
