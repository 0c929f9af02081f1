package connectcmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// describeOptions are the dependencies of `connections describe`.
type describeOptions struct {
	f   *cmdutil.Factory
	cmd *cobra.Command
	now func() time.Time
	// args should name one connect.
	args []string
}

func newDescribeCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &describeOptions{f: f, now: now}
	o.cmd = &cobra.Command{
		Use:   "describe NAME",
		Short: "Say what a connect makes reachable, how it is addressed, and how far it is programmed",
		Long: `Show one ClusterNetworkConnect: which networks reach which through it (every
network of a connect reaches every other, both ways), which they do NOT reach
through it (connects are not transitive: two networks each connected to a third, by
two different connects, do not reach each other through it), the networks it
selects but cannot connect, each network's block of the connect subnets and the
connect router's tunnel key (once the leader allocated them), its conditions, its
progress on each node, and the recent events about it.`,
		Example: `  # What blue-green connects, and whether every node programmed it
  kubectl ovnk connections describe blue-green`,
		ValidArgsFunction: completeConnectName(f),
		RunE:              cmdutil.RunE(f, o),
	}
	return o.cmd
}

// Complete takes the factory and the connect.
func (o *describeOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks that one connect is named.
func (o *describeOptions) Validate() error {
	if len(o.args) != 1 {
		return fmt.Errorf("%s takes one connect's NAME (got %d arguments); `kubectl ovnk connections` lists them", o.cmd.CommandPath(), len(o.args))
	}
	return nil
}

// Run reads the connect and what shows its state, and describes it.
func (o *describeOptions) Run(ctx context.Context) error {
	name := o.args[0]
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	s, snap, err := openSnapshot(ctx, o.f)
	if err != nil {
		return err
	}
	cnc := snap.connect(name)
	if cnc == nil {
		return fmt.Errorf("no connect named %s: `kubectl ovnk connections` lists the connects", name)
	}
	events, err := humanview.RecentEvents(ctx, s.Clientset, "", cnc.UID)
	if err != nil {
		return s.Failed(err, "list events about connect "+cnc.Name)
	}
	sel := snap.selected(cnc)
	alloc, err := s.allocation(ctx, o.f.ErrOut, cnc, sel.connected)
	if err != nil {
		return err
	}
	// Last: reading the zones may take the longest. A refused connect's nodes are
	// not shown, so its zones are not read.
	if refusalOf(cnc, alloc) == nil {
		snap = s.withReports(ctx, snap)
	}
	d := describer{Description: humanview.NewDescription(humanview.NewPalette(o.f, o.f.Out), o.f.TableWidth(), o.now()), refusal: refusalOf(cnc, alloc)}
	d.summary(cnc, sel, alloc)
	d.reachability(cnc, sel)
	d.notTransitive(snap, cnc, sel)
	d.networks(sel, alloc)
	d.refused(sel)
	d.Conditions(cnc.Status.Conditions)
	d.nodes(snap, cnc)
	d.Events(events)
	return d.Flush(o.f.Out)
}

// describer writes the sections of a connect's description.
type describer struct {
	*humanview.Description
	// refusal is the leader's Accepted condition of a connect it refused whole, else
	// nil: then nothing is allocated or programmed, and nothing waits for the leader.
	refusal *metav1.Condition
}

// refusedText is said where a refused connect would have an allocation or a state.
const refusedText = "the leader refused the connect (see Refused)"

func (d *describer) summary(cnc *ovnkv1.ClusterNetworkConnect, sel selection, alloc allocation) {
	var subnets []string
	for _, s := range cnc.Spec.ConnectSubnets {
		subnets = append(subnets, fmt.Sprintf("%s, a /%d per network", s.CIDR, s.NetworkPrefix))
	}
	var connectivity []string
	for _, c := range cnc.Spec.Connectivity {
		connectivity = append(connectivity, string(c))
	}
	connectivityValues := d.Plain(strings.Join(connectivity, ", "))
	if requests(cnc, ovnkv1.ConnectivityClusterIPServiceNetwork) {
		connectivityValues = append(connectivityValues, humanview.Value{Text: "Note: " + servicesNotProgrammed, Style: d.Palette.Warn})
	}
	tunnelKey := []humanview.Value{{Text: "<not allocated yet>", Style: d.Palette.Faint}}
	if d.refusal != nil {
		tunnelKey = []humanview.Value{{Text: "<none: " + refusedText + ">", Style: d.Palette.Faint}}
	}
	if alloc.tunnelKey != 0 {
		tunnelKey = d.Plain(strconv.Itoa(alloc.tunnelKey))
	}
	status, h := statusOf(cnc)
	lines := []humanview.Field{
		{Key: "Name", Values: d.Plain(cnc.Name)},
		{Key: "Networks", Values: d.Plain(orNoneText(strings.Join(refs(sel.connected), ", ")))},
		{Key: "Selects", Values: d.Plain(orNoneLines(selectorText(cnc))...)},
		{Key: "Connect subnets", Values: d.Plain(subnets...)},
		{Key: "Connectivity", Values: connectivityValues},
		{Key: "Router", Values: d.Plain(routerName(cnc.Name))},
		{Key: "Tunnel key", Values: tunnelKey},
	}
	if alloc.problem != "" {
		lines = append(lines, humanview.Field{Key: "Allocation", Values: []humanview.Value{{Text: "unreadable: " + alloc.problem, Style: d.Palette.Bad}}})
	}
	lines = append(lines, humanview.Field{Key: "Status", Values: []humanview.Value{{Text: status, Style: healthStyle(d.Palette, h)}}})
	if d.refusal != nil {
		lines = append(lines, humanview.Field{Key: "Refused", Values: []humanview.Value{{Text: orWord(d.refusal.Reason, "NotAccepted") + ": " + orWord(d.refusal.Message, "the leader gave no message"), Style: d.Palette.Bad}}})
	}
	lines = append(lines, humanview.Field{Key: "Age", Values: d.Plain(d.Age(cnc.CreationTimestamp))})
	d.Fields(lines)
}

func orNoneText(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func orNoneLines(lines []string) []string {
	if len(lines) == 0 {
		return []string{"<none>"}
	}
	return lines
}

// reachability says which networks reach which through the connect: all pairs, both
// ways, when pod connectivity is requested.
func (d *describer) reachability(cnc *ovnkv1.ClusterNetworkConnect, sel selection) {
	nets := refs(sel.connected)
	switch {
	case d.refusal != nil:
		d.TextSection("Reachability", d.Palette.Warn.Render("none"), []string{"nothing is programmed: " + refusedText})
		return
	case !requests(cnc, ovnkv1.ConnectivityPodNetwork):
		d.TextSection("Reachability", d.Palette.Warn.Render("none"), []string{"nothing is programmed: only " + string(ovnkv1.ConnectivityClusterIPServiceNetwork) + " is requested, and ovnk programs pod connectivity only"})
		return
	case len(nets) < 2:
		d.TextSection("Reachability", d.Palette.Warn.Render("none"), []string{fmt.Sprintf("the connect selects %d network%s that can be connected; it takes two to connect", len(nets), plural(len(nets)))})
		return
	}
	var pairs []string
	for i, a := range nets {
		for _, b := range nets[i+1:] {
			pairs = append(pairs, a+" "+d.Palette.Good.Render("↔")+" "+b)
		}
	}
	d.TextSection("Reachability", "pods of each network reach pods of the others, both ways", pairs)
}

// notTransitive says, for each network of the connect that another connect joins to
// networks outside this one, that those do NOT reach this connect's other networks
// through it.
func (d *describer) notTransitive(snap *snapshot, cnc *ovnkv1.ClusterNetworkConnect, sel selection) {
	if d.refusal != nil || !requests(cnc, ovnkv1.ConnectivityPodNetwork) || len(sel.connected) < 2 {
		return
	}
	mine := refs(sel.connected)
	// direct maps "a|b" to the connects joining a and b directly (a < b).
	direct := map[string][]string{}
	for i := range snap.connects {
		c := &snap.connects[i]
		if !requests(c, ovnkv1.ConnectivityPodNetwork) {
			continue
		}
		theirs := refs(snap.selected(c).connected)
		for i, a := range theirs {
			for _, b := range theirs[i+1:] {
				direct[pairKey(a, b)] = append(direct[pairKey(a, b)], c.Name)
			}
		}
	}
	var lines []string
	for _, x := range mine {
		for i := range snap.connects {
			other := &snap.connects[i]
			if other.Name == cnc.Name || !requests(other, ovnkv1.ConnectivityPodNetwork) {
				continue
			}
			theirs := refs(snap.selected(other).connected)
			if !slices.Contains(theirs, x) {
				continue
			}
			var beyond []string
			for _, z := range theirs {
				if !slices.Contains(mine, z) {
					beyond = append(beyond, z)
				}
			}
			if len(beyond) == 0 {
				continue
			}
			var here []string
			for _, y := range mine {
				if y != x {
					here = append(here, y)
				}
			}
			lines = append(lines, d.notThrough(x, other.Name, here, beyond, direct))
		}
	}
	if len(lines) > 0 {
		d.TextSection("Not transitive", "", lines)
	}
}

// notThrough is the line saying that the networks here and beyond, joined to x by this
// connect and by connect other, do not reach each other through x, and which of them
// reach each other through a connect of their own.
func (d *describer) notThrough(x, other string, here, beyond []string, direct map[string][]string) string {
	not := d.Palette.Bad.Render("NOT")
	line := fmt.Sprintf("%s is also connected to %s by connect %s: ", x, andList(beyond), other)
	if len(here) == 1 && len(beyond) == 1 {
		line += fmt.Sprintf("%s and %s do %s reach each other through %s", here[0], beyond[0], not, x)
	} else {
		line += fmt.Sprintf("%s %s %s reach %s, nor the reverse, through %s", andList(here), doVerb(len(here)), not, andList(beyond), x)
	}
	var others []string
	for _, y := range here {
		for _, z := range beyond {
			if names := direct[pairKey(y, z)]; len(names) > 0 {
				others = append(others, fmt.Sprintf("%s and %s through connect %s", y, z, andList(names)))
			}
		}
	}
	if len(others) > 0 {
		line += "; they are connected directly: " + strings.Join(others, ", ")
	}
	return line
}

// doVerb is "do" for several subjects and "does" for one.
func doVerb(n int) string {
	if n == 1 {
		return "does"
	}
	return "do"
}

func pairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + "|" + b
}

func (d *describer) networks(sel selection, alloc allocation) {
	t := d.Palette.Table(
		humanview.Column{Header: "NETWORK", MinWidth: 10},
		humanview.Column{Header: "TOPOLOGY"},
		humanview.Column{Header: "SUBNETS", Stack: true, MinWidth: len("100.100.0.0/16"), Fold: foldList(":")},
		humanview.Column{Header: "BLOCKS", Stack: true, MinWidth: len("192.168.0.0/24"), Fold: foldList(":")},
	)
	for _, n := range sel.connected {
		var subnets, blocks []string
		for _, p := range subnetPrefixes(n) {
			subnets = append(subnets, p.String())
		}
		for _, b := range alloc.blocksOf(n) {
			blocks = append(blocks, b.String())
		}
		blockCell := humanview.List(blocks, d.Palette.Faint)
		switch {
		case len(blocks) > 0:
		case d.refusal != nil:
			blockCell = humanview.Styled("<none: refused>", d.Palette.Faint)
		default:
			blockCell = humanview.Styled("<not allocated yet>", d.Palette.Faint)
		}
		t.Add(humanview.Text(n.Ref()), humanview.Text(string(n.Topology())), humanview.List(subnets, d.Palette.Faint), blockCell)
	}
	d.Section("Connected networks", "", t)
}

// refused lists the selected networks that cannot be connected, if any.
func (d *describer) refused(sel selection) {
	if len(sel.refused) == 0 {
		return
	}
	t := d.Palette.Table(humanview.Column{Header: "NETWORK", MinWidth: 10}, humanview.Column{Header: "REASON", MinWidth: 20})
	for _, r := range sel.refused {
		t.Add(humanview.Text(r.network.Ref()), humanview.Styled(r.reason, d.Palette.Bad))
	}
	d.Section("Selected but not connected", "", t)
}

// nodes shows how far each node programmed the connect. A refused connect is
// programmed nowhere, and the nodes' reports only wait for an allocation the leader
// will not make: the section says why instead of listing them.
func (d *describer) nodes(snap *snapshot, cnc *ovnkv1.ClusterNetworkConnect) {
	if d.refusal != nil {
		d.TextSection("Nodes", d.Palette.Bad.Render(fmt.Sprintf("0/%d ready", len(snap.nodes))), []string{"no node programs the connect: " + refusedText})
		return
	}
	d.Nodes(humanview.Readiness(snap.reports, cluster.ConnectZoneStatusKey(cnc.Name), "connect"), cluster.FromZones(snap.reports))
}
