package topologycmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/tree"

	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/topology"
)

// branchWidth is how many columns each level of the tree indents its items: the
// enumerator "├──" and a space.
const branchWidth = 4

// styles colour the tree; with a renderer that has no colour they print plain text.
type styles struct {
	title, hint, router, sw, port, tag, remote, label, nat lipgloss.Style
	network, branch, plain                                 lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	return styles{
		title:   r.NewStyle().Bold(true),
		hint:    r.NewStyle().Faint(true),
		router:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("39")),
		sw:      r.NewStyle().Bold(true).Foreground(lipgloss.Color("78")),
		port:    r.NewStyle().Bold(true),
		tag:     r.NewStyle().Foreground(lipgloss.Color("245")),
		remote:  r.NewStyle().Foreground(lipgloss.Color("214")),
		label:   r.NewStyle().Foreground(lipgloss.Color("245")),
		nat:     r.NewStyle().Foreground(lipgloss.Color("176")),
		network: r.NewStyle().Bold(true),
		branch:  r.NewStyle().Foreground(lipgloss.Color("240")).PaddingRight(1),
		plain:   r.NewStyle(),
	}
}

// treeWriter draws a View as one tree per router and switch, each item wrapped to the
// width left after its branches.
type treeWriter struct {
	st    styles
	width int
}

// write prints a network's view: one tree per router and switch.
func (t treeWriter) write(w io.Writer, v View, z *livezone.Zone) error {
	var trees []*tree.Tree
	for _, r := range v.Routers {
		trees = append(trees, t.router(r))
	}
	for _, s := range v.Switches {
		trees = append(trees, t.switchTree(s))
	}
	more := fmt.Sprintf("Route, policy and NAT tables: kubectl ovnk routes %s --node %s --policies --nat", v.Network.Name, v.Node)
	return t.page(w, z, z.Title(v.Network), trees, more)
}

// writeConnect prints a connect's view: the connect router's tree, then one per
// connected network's router.
func (t treeWriter) writeConnect(w io.Writer, v ConnectView, z *livezone.Zone) error {
	trees := []*tree.Tree{t.router(v.Router)}
	for _, r := range v.Networks {
		trees = append(trees, t.connectedRouter(r))
	}
	title := fmt.Sprintf("ClusterNetworkConnect %s in node %s's zone", v.Connect, v.Node)
	more := fmt.Sprintf("Route table: kubectl ovnk routes %s --node %s; a network's policies: kubectl ovnk routes NETWORK --node %s --policies",
		v.Router.Name, v.Node, v.Node)
	return t.page(w, z, title, trees, more)
}

// page prints the title, the hint about the node, the trees and more, a pointer to
// the route tables.
func (t treeWriter) page(w io.Writer, z *livezone.Zone, title string, trees []*tree.Tree, more string) error {
	var b strings.Builder
	b.WriteString(humanview.Line{seg(t.st.title, title)}.Render(t.width) + "\n")
	if hint := z.NodeHint(); hint != "" {
		b.WriteString(humanview.Line{seg(t.st.hint, hint)}.Render(t.width) + "\n")
	}
	for _, tr := range trees {
		b.WriteString("\n" + tr.String() + "\n")
	}
	b.WriteString("\n" + humanview.Line{seg(t.st.hint, more)}.Render(t.width) + "\n")
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

// trimLines drops the spaces lipgloss pads multi-line items with.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// newTree starts a tree whose root is drawn at the left margin.
func (t treeWriter) newTree(root humanview.Line) *tree.Tree {
	return tree.Root(root.Render(t.width)).
		RootStyle(t.st.plain).
		ItemStyle(t.st.plain).
		EnumeratorStyle(t.st.branch)
}

// item wraps a line for the given depth (1 for a root's children); not on a terminal
// (width 0) it stays whole.
func (t treeWriter) item(l humanview.Line, depth int) string {
	if t.width <= 0 {
		return l.Render(0)
	}
	return l.Render(max(t.width-depth*branchWidth, 20))
}

// subtree is an item with children, or a plain item when it has none.
func (t treeWriter) subtree(head humanview.Line, depth int, children []humanview.Line) any {
	if len(children) == 0 {
		return t.item(head, depth)
	}
	sub := tree.Root(t.item(head, depth)).ItemStyle(t.st.plain).EnumeratorStyle(t.st.branch)
	for _, c := range children {
		sub.Child(t.item(c, depth+1))
	}
	return sub
}

// named is the head of a router, switch or port: kind, name and a role or type tag.
func (t treeWriter) named(kind string, name lipgloss.Style, text, tag string, tagStyle lipgloss.Style) humanview.Line {
	l := humanview.Line{seg(t.st.label, kind+" "), seg(name, text)}
	if tag != "" {
		l = append(l, seg(tagStyle, " ("+tag+")"))
	}
	return l
}

// fields is "label: value, label: value" of the non-empty values.
func (t treeWriter) fields(pairs ...string) humanview.Line {
	var l humanview.Line
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		if len(l) > 0 {
			l = append(l, seg(t.st.plain, ", "))
		}
		// The label stays on the line of its value's first word.
		l = append(l, seg(t.st.label, humanview.Glue(pairs[i]+": ")), seg(t.st.plain, pairs[i+1]))
	}
	return l
}

// peer is "peer: PORT on router|switch NAME", and "of network NETWORK" when the peer
// belongs to a network other than the one shown.
func (t treeWriter) peer(p *PortRef) humanview.Line {
	l := humanview.Line{seg(t.st.label, humanview.Glue("peer: ")), seg(t.st.port, p.Port)}
	if p.Name != "" {
		style := t.st.router
		if p.Kind == "switch" {
			style = t.st.sw
		}
		l = append(l, seg(t.st.label, " "+humanview.Glue("on "+p.Kind+" ")), seg(style, p.Name))
	}
	if p.Network != nil {
		l = append(l, seg(t.st.label, " "+humanview.Glue("of network ")), seg(t.st.network, p.Network.Name))
	}
	return l
}

func (t treeWriter) router(r Router) *tree.Tree {
	tr := t.newTree(t.named("router", t.st.router, r.Name, r.Role, t.st.tag))
	if details := t.fields("node", r.Node, "chassis", r.Chassis, "tunnel key", r.TunnelKey); len(details) > 0 {
		tr.Child(t.item(details, 1))
	}
	for _, p := range r.Ports {
		tr.Child(t.subtree(t.routerPortHead(p), 1, t.routerPortLines(p)))
	}
	if len(r.NAT) > 0 {
		var nats []humanview.Line
		for _, n := range r.NAT {
			nats = append(nats, t.nat(n))
		}
		tr.Child(t.subtree(humanview.Line{seg(t.st.label, "nat")}, 1, nats))
	}
	tables := fmt.Sprintf("%d static %s, %d %s", r.StaticRoutes, plural(r.StaticRoutes, "route", "routes"), r.Policies, plural(r.Policies, "policy", "policies"))
	tr.Child(t.item(humanview.Line{seg(t.st.label, tables)}, 1))
	return tr
}

// connectedRouter is a network's router as a connect sees it: its network, its links
// to the connect router and the policies that steer traffic there.
func (t treeWriter) connectedRouter(r ConnectedRouter) *tree.Tree {
	tr := t.newTree(t.named("router", t.st.router, r.Name, r.Role, t.st.tag))
	tr.Child(t.item(t.fields("network", r.Network.Name), 1))
	for _, p := range r.Links {
		tr.Child(t.subtree(t.routerPortHead(p), 1, t.routerPortLines(p)))
	}
	policies := fmt.Sprintf("%d %s to the connect router (priority %d)", r.Policies, plural(r.Policies, "policy", "policies"), topology.ConnectPolicyPriority)
	tr.Child(t.item(humanview.Line{seg(t.st.label, policies)}, 1))
	return tr
}

func (t treeWriter) routerPortHead(p RouterPort) humanview.Line {
	if p.Remote {
		return t.named("port", t.st.port, p.Name, "remote", t.st.remote)
	}
	return t.named("port", t.st.port, p.Name, "", t.st.plain)
}

func (t treeWriter) routerPortLines(p RouterPort) []humanview.Line {
	out := []humanview.Line{
		t.fields("networks", strings.Join(p.Networks, ", ")),
		t.fields("mac", p.MAC, "ipv6-lla", p.IPv6LinkLocal),
	}
	if p.Peer != nil {
		out = append(out, t.peer(p.Peer))
	}
	if len(p.GatewayChassis) > 0 {
		out = append(out, t.fields("gateway chassis", strings.Join(p.GatewayChassis, ", ")))
	}
	return append(out, t.bindingLines(p.Remote, p.Node, p.Chassis, p.TunnelKey)...)
}

// bindingLines say where a port lives: the node of a remote port, the chassis it is
// bound to and its tunnel key.
func (t treeWriter) bindingLines(remote bool, node, chassis, tunnelKey string) []humanview.Line {
	if !remote {
		node = ""
	}
	if l := t.fields("node", node, "chassis", chassis, "tunnel key", tunnelKey); len(l) > 0 {
		return []humanview.Line{l}
	}
	return nil
}

func (t treeWriter) nat(n livezone.NAT) humanview.Line {
	arrow := " → "
	from, to := n.LogicalIP, n.ExternalIP
	switch n.Type {
	case "dnat":
		from, to = n.ExternalIP, n.LogicalIP
	case "dnat_and_snat":
		arrow = " ↔ "
	}
	l := humanview.Line{seg(t.st.nat, n.Type), seg(t.st.plain, " "+from+arrow+to)}
	if n.ExternalPortRange != "" {
		l = append(l, seg(t.st.plain, " ports "+n.ExternalPortRange))
	}
	if extra := t.fields("logical port", n.LogicalPort, "gateway port", n.GatewayPort, "external mac", n.ExternalMAC, "match", n.Match); len(extra) > 0 {
		l = append(append(l, seg(t.st.plain, ", ")), extra...)
	}
	return l
}

func (t treeWriter) switchTree(s Switch) *tree.Tree {
	tr := t.newTree(t.named("switch", t.st.sw, s.Name, s.Role, t.st.tag))
	if details := t.fields("node", s.Node, "subnet", s.Subnet, "ipv6 prefix", s.IPv6Prefix, "tunnel key", s.TunnelKey); len(details) > 0 {
		tr.Child(t.item(details, 1))
	}
	for _, p := range s.Ports {
		head := t.named("port", t.st.port, p.Name, p.Type, t.st.tag)
		if p.Remote {
			head = t.named("port", t.st.port, p.Name, p.Type, t.st.remote)
		}
		var lines []humanview.Line
		if len(p.Addresses) > 0 {
			lines = append(lines, t.fields("addresses", strings.Join(p.Addresses, ", ")))
		}
		if p.Peer != nil {
			lines = append(lines, t.peer(p.Peer))
		}
		lines = append(lines, t.bindingLines(p.Remote, p.Node, p.Chassis, p.TunnelKey)...)
		tr.Child(t.subtree(head, 1, lines))
	}
	return tr
}

func seg(style lipgloss.Style, text string) humanview.Segment {
	return humanview.Segment{Style: style, Text: text}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
