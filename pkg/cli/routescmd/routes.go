// Package routescmd implements `kubectl ovnk routes`: the static route, policy and NAT
// tables of a network's routers in one node's OVN zone, read live, in the order and
// columns of `ovn-nbctl lr-route-list`, `lr-policy-list` and `lr-nat-list`.
package routescmd

import (
	"bytes"
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
router's routing policies (lr-policy-list), --nat its NAT rules (lr-nat-list). On a
terminal the lists fit its width, leaving out the columns least needed when they
must (the view names them); -o wide shows every column. Piped, nothing is left out,
wrapped or cut.

NETWORK is "default", a ClusterUserDefinedNetwork's name, a UserDefinedNetwork as
NAMESPACE/NAME (or NAME with -n), or an OVN network name such as cluster_udn_blue.
The zone is read through the node's agent with pods/exec: ovnk's agent (ovnk-agent
dump), or, on a cluster run by upstream OVN-Kubernetes, the node's ovnkube-node pod
(its NB container), found with no configuration; or straight from an NB with --nb or
the settings' nb-endpoints.`,
		Example: `  # Every router of the default network on the first node
  kubectl ovnk routes default

  # The network blue on worker1, with policies and NAT
  kubectl ovnk routes blue --node worker1 --policies --nat

  # One router, every column even on a narrow terminal
  kubectl ovnk routes GR_worker1 --node worker1 -o wide

  # The namespace network red of ns1, for scripts
  kubectl ovnk routes red -n ns1 --node worker1 -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: livezone.CompleteNetwork(f),
		RunE:              cmdutil.RunE(f, o),
	}
	o.out = cmdutil.AddDataOutputFlag(cmd, "wide")
	cmd.Flag("output").Usage = "output format: wide (every column), json, yaml, jsonpath=…, go-template=… (default: tables)"
	cmd.Flags().StringVar(&o.node, "node", "", "the node whose zone to show (default: the only node, else the first by name)")
	cmd.Flags().StringVar(&o.nb, "nb", "", "read the zone from this NB endpoint (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT) instead of through the node's agent (ovnk's, or upstream's ovnkube-node pod)")
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
	title, hint, router, role, section lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	return styles{
		title:   r.NewStyle().Bold(true),
		hint:    r.NewStyle().Faint(true),
		router:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("39")),
		role:    r.NewStyle().Foreground(lipgloss.Color("245")),
		section: r.NewStyle().Bold(true).Foreground(lipgloss.Color("176")),
	}
}

// The columns of ovn-nbctl's lists, and how they give way on a terminal too narrow
// for them. Names are identifiers and are never split: a match wraps between its
// words, a policy's action and next hops share a column (as ovn-nbctl prints them) so
// that the longest port names fit 80 columns beside them, and the columns least needed
// to read a list are left out (-o wide shows them). A list that still cannot fit (a
// name longer than the terminal leaves room for) overflows it rather than split a name.
var (
	routeColumns = []humanview.Column{
		{Header: "PREFIX"}, {Header: "NEXTHOP"}, {Header: "POLICY"}, {Header: "OUTPUT PORT", Optional: 1}, {Header: "ECMP"},
	}
	policyColumns = []humanview.Column{
		{Header: "PRIORITY"}, {Header: "MATCH", MinWidth: minColumnWidth}, {Header: "ACTION", MinWidth: minColumnWidth}, {Header: "OPTIONS", Stack: true},
	}
	natColumns = []humanview.Column{
		{Header: "TYPE"}, {Header: "GATEWAY_PORT", Optional: 4}, {Header: "MATCH", MinWidth: minColumnWidth},
		{Header: "EXTERNAL_IP"}, {Header: "EXTERNAL_PORT", Optional: 3}, {Header: "LOGICAL_IP"},
		{Header: "EXTERNAL_MAC", Optional: 2}, {Header: "LOGICAL_PORT", Optional: 1},
	}
)

// minColumnWidth is as narrow as a match or an action wraps to, unless its longest
// word is wider: narrower, an expression would read one word a line.
const minColumnWidth = 12

// page is the human view being built: the lines above the routers (head), then lines
// of text and the tables between them, written once every table is known, so that the
// tables can be fitted alike.
type page struct {
	st      styles
	palette humanview.Palette // for the tables
	width   int               // the terminal's, for the lines of text; 0 when not a terminal
	wide    bool
	head    []string
	blocks  []block
}

// block is a line of text, or a table when table is set.
type block struct {
	text  string
	table *humanview.Table
}

func (p *page) println(s string) { p.blocks = append(p.blocks, block{text: s}) }

// wrapped is text in style, wrapped to the width.
func (p *page) wrapped(style lipgloss.Style, text string) string {
	return humanview.Line{{Style: style, Text: text}}.Render(p.width)
}

// table adds a table of rows (a cell per column), leaving out the columns that are
// empty in every row.
func (p *page) table(columns []humanview.Column, rows [][]humanview.Cell) {
	var shown []int
	var shownColumns []humanview.Column
	for i, c := range columns {
		if slices.ContainsFunc(rows, func(r []humanview.Cell) bool { return len(r[i].Values) > 0 && r[i].Values[0] != "" }) {
			shown = append(shown, i)
			shownColumns = append(shownColumns, c)
		}
	}
	tb := p.palette.Table(shownColumns...)
	tb.Wide = p.wide
	for _, r := range rows {
		cells := make([]humanview.Cell, len(shown))
		for j, i := range shown {
			cells[j] = r[i]
		}
		tb.Add(cells...)
	}
	p.blocks = append(p.blocks, block{table: tb})
}

// write fits the tables to tableWidth (0: not fitted) alike, so that the lists show
// the same columns, says under the head which columns were left out, and writes the
// page.
func (p *page) write(w io.Writer, tableWidth int) error {
	var tables []*humanview.Table
	for _, b := range p.blocks {
		if b.table != nil {
			tables = append(tables, b.table)
		}
	}
	head := p.head
	if left := humanview.FitAlike(tableWidth, tables...); len(left) > 0 {
		for i, h := range left {
			left[i] = humanview.Glue(h) // a heading wraps whole
		}
		head = append(head, p.wrapped(p.st.hint, "Left out to fit the terminal (-o wide shows them): "+strings.Join(left, ", ")+"."))
	}
	var out bytes.Buffer
	for _, line := range head {
		out.WriteString(line + "\n")
	}
	for _, b := range p.blocks {
		if b.table == nil {
			out.WriteString(b.text + "\n")
		} else if err := b.table.Render(&out, tableWidth); err != nil {
			return err
		}
	}
	_, err := w.Write(out.Bytes())
	return err
}

func (o *options) write(f *cmdutil.Factory, v View, z *livezone.Zone) error {
	p := &page{st: newStyles(f.Renderer(f.Out)), palette: humanview.NewPalette(f, f.Out), width: f.TableWidth(), wide: o.out.Format() == "wide"}
	title := z.Title(v.Network)
	if v.Network.OVNName == "" { // a router of no network ovnk knows
		title = fmt.Sprintf("Router %s in node %s's zone", v.Routers[0].Name, v.Node)
	}
	p.head = []string{p.wrapped(p.st.title, title)}
	if hint := z.NodeHint(); hint != "" {
		p.head = append(p.head, p.wrapped(p.st.hint, hint))
	}
	if len(v.Routers) == 0 {
		p.println("\nThe network has no routers in this zone.")
	}
	for _, r := range v.Routers {
		head := humanview.Line{{Style: p.st.title, Text: "Router "}, {Style: p.st.router, Text: r.Name}}
		if r.Role != "" {
			head = append(head, humanview.Segment{Style: p.st.role, Text: " (" + r.Role + ")"})
		}
		p.println("\n" + head.Render(p.width))
		p.routes(r.Routes)
		if o.policies {
			p.policies(r.Policies)
		}
		if o.nat {
			p.nat(r.NAT)
		}
	}
	return p.write(f.Out, f.TableWidth())
}

// routes adds the routes as lr-route-list groups them: by family, then route table.
func (p *page) routes(routes []Route) {
	if len(routes) == 0 {
		p.println("No static routes.")
		return
	}
	// rows are the rows of the route table being added; nil before the first.
	var rows [][]humanview.Cell
	flush := func() {
		if rows != nil {
			p.table(routeColumns, rows)
		}
		rows = nil
	}
	family, routeTable := "", ""
	for _, r := range routes {
		if r.Family != family {
			flush()
			if family != "" {
				p.println("")
			}
			p.println(p.st.section.Render(r.Family + " Routes"))
		}
		if rows == nil || r.RouteTable != routeTable {
			another := rows != nil
			flush()
			if another { // ovn-nbctl separates a family's route tables
				p.println("")
			}
			name := r.RouteTable
			if name == "" {
				name = "<main>"
			}
			p.println("Route Table " + name + ":")
			rows = [][]humanview.Cell{}
		}
		family, routeTable = r.Family, r.RouteTable
		ecmp := ""
		if r.ECMP {
			ecmp = "ecmp"
		}
		rows = append(rows, texts(r.Prefix, r.Nexthop, r.Policy, r.OutputPort, ecmp))
	}
	flush()
}

// policies adds the policies like lr-policy-list, which prints a reroute's next hops
// after its action.
func (p *page) policies(policies []Policy) {
	p.println("")
	if len(policies) == 0 {
		p.println("No routing policies.")
		return
	}
	p.println(p.st.section.Render("Routing Policies"))
	var rows [][]humanview.Cell
	for _, pol := range policies {
		action := pol.Action
		if len(pol.Nexthops) > 0 {
			action += " " + strings.Join(pol.Nexthops, ", ")
		}
		rows = append(rows, append(texts(strconv.Itoa(pol.Priority), pol.Match, action), humanview.Cell{Values: pol.listedOptions}))
	}
	p.table(policyColumns, rows)
}

// nat adds the NAT rules with lr-nat-list's columns in its order, which from OVN 25.03
// has MATCH after GATEWAY_PORT.
func (p *page) nat(nats []livezone.NAT) {
	p.println("")
	if len(nats) == 0 {
		p.println("No NAT rules.")
		return
	}
	p.println(p.st.section.Render("NAT"))
	var rows [][]humanview.Cell
	for _, n := range nats {
		rows = append(rows, texts(n.Type, n.GatewayPort, n.Match, n.ExternalIP, n.ExternalPortRange, n.LogicalIP, n.ExternalMAC, n.LogicalPort))
	}
	p.table(natColumns, rows)
}

// texts is a row of plain cells.
func texts(values ...string) []humanview.Cell {
	cells := make([]humanview.Cell, len(values))
	for i, v := range values {
		cells[i] = humanview.Text(v)
	}
	return cells
}
