// Package routescmd implements `kubectl ovnk routes`: the static route, policy and NAT
// tables of a network's routers in one node's OVN zone, read live, in the order and
// columns of `ovn-nbctl lr-route-list`, `lr-policy-list` and `lr-nat-list`.
package routescmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// options are the command's flags and argument.
type options struct {
	node, nb      string
	policies, nat bool
	out           *cmdutil.Output

	f *cmdutil.Factory
	// arg names the network or router.
	arg string
}

// New returns the `routes` command.
func New(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "routes NETWORK|ROUTER [--node NODE] [--policies] [--nat]",
		Short: "Show the route, policy and NAT tables of a network's routers in a node's zone",
		Long: `Show the static routes of every router a network has in one node's OVN zone (or of
one router, named as OVN names it), as the node's Northbound database holds them
right now, in the order and columns of ovn-nbctl lr-route-list. --policies adds each
router's routing policies (lr-policy-list), --nat its NAT rules (lr-nat-list).

NETWORK is "default", a ClusterUserDefinedNetwork's name, a UserDefinedNetwork as
NAMESPACE/NAME (or NAME with -n), or an OVN network name such as cluster_udn_blue.
The zone is read from the node's agent (ovnk-agent dump through pods/exec), or
straight from an NB with --nb or the settings' nb-endpoints.`,
		Example: `  # Every router of the default network on the first node
  kubectl ovnk routes default

  # The network blue on worker1, with policies and NAT
  kubectl ovnk routes blue --node worker1 --policies --nat

  # One router
  kubectl ovnk routes GR_worker1 --node worker1

  # The namespace network red of ns1, for scripts
  kubectl ovnk routes red -n ns1 --node worker1 -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: livezone.CompleteNetwork(f),
		RunE:              cmdutil.RunE(f, o),
	}
	o.out = cmdutil.AddDataOutputFlag(cmd)
	cmd.Flag("output").Usage = "output format: json, yaml, jsonpath=…, go-template=… (default: tables)"
	cmd.Flags().StringVar(&o.node, "node", "", "the node whose zone to show (default: the only node, else the first by name)")
	cmd.Flags().StringVar(&o.nb, "nb", "", "read the zone from this NB endpoint (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT) instead of the node's agent")
	cmd.Flags().BoolVar(&o.policies, "policies", false, "also show each router's routing policies (lr-policy-list)")
	cmd.Flags().BoolVar(&o.nat, "nat", false, "also show each router's NAT rules (lr-nat-list)")
	_ = cmd.RegisterFlagCompletionFunc("node", f.CompleteNames(cmdutil.ListNodeNames))
	return cmd
}

// Complete takes the factory and the network or router.
func (o *options) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.arg = f, args[0]
	return nil
}

// Validate checks -o before anything is contacted.
func (o *options) Validate() error { return o.out.Validate() }

// Run reads the zone and shows the routers' tables.
func (o *options) Run(ctx context.Context) error {
	f := o.f
	z, err := livezone.Read(ctx, f, o.nb, o.node)
	if err != nil {
		return err
	}
	n, routers, err := routersOf(z, f, o.arg)
	if err != nil {
		return err
	}
	v := View{Node: z.Node, Network: n, Routers: []Router{}}
	for _, lr := range routers {
		r := Router{Name: lr.Name, Role: livezone.RouterRole(n, lr.Name), Routes: routes(z, lr)}
		if o.policies {
			r.Policies = policies(z, lr)
		}
		if o.nat {
			r.NAT = z.NATs(lr)
		}
		v.Routers = append(v.Routers, r)
	}
	if !o.out.Human() {
		return o.out.PrintData(v, f.Out)
	}
	return o.write(f, v, z)
}

// routersOf resolves the argument: the zone's router of that name, else a network and
// all its routers.
func routersOf(z *livezone.Zone, f *cmdutil.Factory, arg string) (livezone.Network, []*nbdb.LogicalRouter, error) {
	if lr := z.Router(arg); lr != nil {
		name := lr.ExternalIDs[rows.NetworkKey]
		n := livezone.Network{OVNName: name, Topology: lr.ExternalIDs[rows.TopologyKey]}
		if name != "" {
			n.Name = netview.UserName(name)
		}
		return n, []*nbdb.LogicalRouter{lr}, nil
	}
	ns, explicit, err := f.Namespace()
	if err != nil {
		return livezone.Network{}, nil, err
	}
	n, err := z.Network(arg, livezone.Namespace{Name: ns, Explicit: explicit})
	if err != nil {
		return livezone.Network{}, nil, err
	}
	return n, z.Routers(n), nil
}

// styles colour the human view; with a renderer that has no colour they print plain.
type styles struct {
	title, hint, router, role, section, heading lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	return styles{
		title:   r.NewStyle().Bold(true),
		hint:    r.NewStyle().Faint(true),
		router:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("39")),
		role:    r.NewStyle().Foreground(lipgloss.Color("245")),
		section: r.NewStyle().Bold(true).Foreground(lipgloss.Color("176")),
		heading: r.NewStyle().Bold(true),
	}
}

// tableWriter prints a View as ovn-nbctl's lists, each list a table.
type tableWriter struct {
	w  io.Writer
	st styles
	// width is the terminal's, for titles; tableWidth is what tables are fitted to (0
	// when piped: not fitted).
	width, tableWidth int
	err               error
}

func (o *options) write(f *cmdutil.Factory, v View, z *livezone.Zone) error {
	t := &tableWriter{w: f.Out, st: newStyles(f.Renderer(f.Out)), width: f.Width(), tableWidth: f.TableWidth()}
	title := z.Title(v.Network)
	if v.Network.OVNName == "" { // a router of no network ovnk knows
		title = fmt.Sprintf("Router %s in node %s's zone", v.Routers[0].Name, v.Node)
	}
	t.paragraph(t.st.title, title)
	if hint := z.NodeHint(); hint != "" {
		t.paragraph(t.st.hint, hint)
	}
	if len(v.Routers) == 0 {
		t.println("\nThe network has no routers in this zone.")
	}
	for _, r := range v.Routers {
		head := humanview.Line{{Style: t.st.title, Text: "Router "}, {Style: t.st.router, Text: r.Name}}
		if r.Role != "" {
			head = append(head, humanview.Segment{Style: t.st.role, Text: " (" + r.Role + ")"})
		}
		t.println("\n" + head.Render(t.width))
		t.routes(r.Routes)
		if o.policies {
			t.policies(r.Policies)
		}
		if o.nat {
			t.nat(r.NAT)
		}
	}
	return t.err
}

func (t *tableWriter) println(s string) {
	if t.err == nil {
		_, t.err = fmt.Fprintln(t.w, s)
	}
}

// paragraph prints text wrapped to the width.
func (t *tableWriter) paragraph(style lipgloss.Style, text string) {
	t.println(humanview.Line{{Style: style, Text: text}}.Render(t.width))
}

// table prints a table of rows under header, leaving out the columns that are empty
// in every row.
func (t *tableWriter) table(header []string, rows [][]string) {
	if t.err != nil {
		return
	}
	tb := &humanview.Table{Header: t.st.heading}
	var shown []int
	for i, h := range header {
		if slices.ContainsFunc(rows, func(r []string) bool { return r[i] != "" }) {
			shown = append(shown, i)
			tb.Columns = append(tb.Columns, humanview.Column{Header: h, MinWidth: minColumnWidth, Break: true, Fold: humanview.Fill("_")})
		}
	}
	for _, r := range rows {
		cells := make([]humanview.Cell, len(shown))
		for j, i := range shown {
			cells[j] = humanview.Text(r[i])
		}
		tb.Add(cells...)
	}
	t.err = tb.Render(t.w, t.tableWidth)
}

// minColumnWidth is as narrow as a column is squeezed to fit the terminal, unless its
// heading is wider: narrower columns would wrap addresses into unreadable pieces.
// On a terminal the names in ovn-nbctl's lists may break (they cannot fit 80 columns
// otherwise); piped, the tables are not fitted and every name is whole.
const minColumnWidth = 12

// routes prints the routes as lr-route-list groups them: by family, then route table.
func (t *tableWriter) routes(routes []Route) {
	if len(routes) == 0 {
		t.println("No static routes.")
		return
	}
	// rows are the rows of the route table being printed; nil before the first.
	var rows [][]string
	flush := func() {
		if rows != nil {
			t.table([]string{"PREFIX", "NEXTHOP", "POLICY", "OUTPUT PORT", "ECMP"}, rows)
		}
		rows = nil
	}
	family, routeTable := "", ""
	for _, r := range routes {
		if r.Family != family {
			flush()
			if family != "" {
				t.println("")
			}
			t.println(t.st.section.Render(r.Family + " Routes"))
		}
		if rows == nil || r.RouteTable != routeTable {
			another := rows != nil
			flush()
			if another { // ovn-nbctl separates a family's route tables
				t.println("")
			}
			name := r.RouteTable
			if name == "" {
				name = "<main>"
			}
			t.println("Route Table " + name + ":")
			rows = [][]string{}
		}
		family, routeTable = r.Family, r.RouteTable
		ecmp := ""
		if r.ECMP {
			ecmp = "ecmp"
		}
		rows = append(rows, []string{r.Prefix, r.Nexthop, r.Policy, r.OutputPort, ecmp})
	}
	flush()
}

// policies prints the policies like lr-policy-list.
func (t *tableWriter) policies(policies []Policy) {
	t.println("")
	if len(policies) == 0 {
		t.println("No routing policies.")
		return
	}
	t.println(t.st.section.Render("Routing Policies"))
	var rows [][]string
	for _, p := range policies {
		rows = append(rows, []string{strconv.Itoa(p.Priority), p.Match, p.Action, strings.Join(p.Nexthops, ", "), strings.Join(p.listedOptions, ",")})
	}
	t.table([]string{"PRIORITY", "MATCH", "ACTION", "NEXTHOPS", "OPTIONS"}, rows)
}

// nat prints the NAT rules with lr-nat-list's columns in its order, which from OVN
// 25.03 has MATCH after GATEWAY_PORT.
func (t *tableWriter) nat(nats []livezone.NAT) {
	t.println("")
	if len(nats) == 0 {
		t.println("No NAT rules.")
		return
	}
	t.println(t.st.section.Render("NAT"))
	var rows [][]string
	for _, n := range nats {
		rows = append(rows, []string{n.Type, n.GatewayPort, n.Match, n.ExternalIP, n.ExternalPortRange, n.LogicalIP, n.ExternalMAC, n.LogicalPort})
	}
	t.table([]string{"TYPE", "GATEWAY_PORT", "MATCH", "EXTERNAL_IP", "EXTERNAL_PORT", "LOGICAL_IP", "EXTERNAL_MAC", "LOGICAL_PORT"}, rows)
}
