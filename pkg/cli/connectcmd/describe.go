package connectcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/table"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// maxEvents is how many of the most recent events describe shows.
const maxEvents = 10

// describeOptions are the dependencies of `connections describe`.
type describeOptions struct {
	f   *cmdutil.Factory
	now func() time.Time
}

func newDescribeCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &describeOptions{f: f, now: now}
	return &cobra.Command{
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
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("%s takes one connect's NAME (got %d arguments); `kubectl ovnk connections` lists them", cmd.CommandPath(), len(args))
			}
			return nil
		},
		ValidArgsFunction: completeConnectName(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
}

func (o *describeOptions) run(ctx context.Context, name string) error {
	s, err := open(o.f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	snap, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	cnc := snap.connect(name)
	if cnc == nil {
		return fmt.Errorf("no connect named %s: `kubectl ovnk connections` lists the connects", name)
	}
	events, err := s.events(ctx, cnc)
	if err != nil {
		return err
	}
	sel := selected(cnc, snap.networks, snap.nsLabels)
	alloc := allocationOf(cnc)
	d := &describer{w: &bytes.Buffer{}, p: newPalette(o.f, o.f.Out), width: o.f.Width(), now: o.now()}
	d.summary(cnc, sel, alloc)
	d.reachability(cnc, sel)
	d.notTransitive(snap, cnc, sel)
	d.networks(sel, alloc)
	d.refused(sel)
	d.conditions(cnc.Status.Conditions)
	d.nodes(readiness(cluster.ReadZoneReports(snap.nodes), cnc.Name))
	d.events(events)
	if d.err != nil {
		return d.err
	}
	_, err = io.Copy(o.f.Out, d.w)
	return err
}

// events lists the events about the connect, found by its UID in every namespace
// (events about a cluster-scoped object usually go to "default"), oldest first.
func (s *session) events(ctx context.Context, cnc *ovnkv1.ClusterNetworkConnect) ([]eventsv1.Event, error) {
	sel := fields.OneTermEqualSelector("regarding.uid", string(cnc.UID)).String()
	list, err := s.clientset.EventsV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, s.explain(err, "list events about connect "+cnc.Name)
	}
	events := list.Items
	slices.SortStableFunc(events, func(a, b eventsv1.Event) int { return lastSeen(a).Compare(lastSeen(b)) })
	if len(events) > maxEvents {
		events = events[len(events)-maxEvents:]
	}
	return events, nil
}

// lastSeen is when the event last happened: its series' last observation, else when it
// was recorded (events written through the core/v1 API have only the deprecated time).
func lastSeen(e eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

func timesSeen(e eventsv1.Event) int {
	switch {
	case e.Series != nil:
		return int(e.Series.Count)
	case e.DeprecatedCount > 0:
		return int(e.DeprecatedCount)
	}
	return 1
}

// describer writes describe's sections, kubectl describe's way: "Key:  value" lines,
// then titled tables indented by two spaces. The first write error sticks.
type describer struct {
	w     *bytes.Buffer
	p     palette
	width int
	now   time.Time
	err   error
}

// sectionIndent is the indentation of a section's lines under its title.
const sectionIndent = "  "

// fieldLine is one "Key:  value" entry; a value of several lines is indented under the
// first.
type fieldLine struct {
	key    string
	values []value
}

// value is a field's text and its style, applied to each line the text wraps onto.
type value struct {
	text  string
	style lipgloss.Style
}

// plain is texts as unstyled values.
func (d *describer) plain(texts ...string) []value {
	out := make([]value, len(texts))
	for i, t := range texts {
		out[i] = value{text: t, style: d.p.plain}
	}
	return out
}

func (d *describer) printf(format string, args ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format, args...)
	}
}

// fields writes aligned "Key:  value" lines, wrapping long values under themselves.
func (d *describer) fields(lines []fieldLine) {
	keyWidth := 0
	for _, l := range lines {
		keyWidth = max(keyWidth, len(l.key)+1)
	}
	indent := strings.Repeat(" ", keyWidth+2)
	for _, l := range lines {
		prefix := d.p.key.Render(l.key+":") + strings.Repeat(" ", keyWidth-len(l.key)+1)
		for _, v := range l.values {
			for _, line := range d.wrap(v.text, len(indent)) {
				d.printf("%s%s\n", prefix, v.style.Render(line))
				prefix = indent
			}
		}
	}
}

// wrap folds text to the width left after indent columns.
func (d *describer) wrap(text string, indent int) []string {
	return table.Wrap("")(text, max(d.width-indent, 20))
}

// textSection writes a title, an optional note after it, and lines of text under it,
// indented and wrapped; each line's continuation is indented two more.
func (d *describer) textSection(title, note string, items []string) {
	if note != "" {
		note = "  " + note
	}
	d.printf("%s%s\n", d.p.key.Render(title+":"), note)
	for _, l := range items {
		for i, w := range d.wrap(l, len(sectionIndent)+2) {
			if i == 0 {
				d.printf("%s%s\n", sectionIndent, w)
			} else {
				d.printf("%s  %s\n", sectionIndent, w)
			}
		}
	}
}

// section writes a title, a note after it ("<none>" when the table has no rows and
// there is no note), and the table.
func (d *describer) section(title, note string, t *table.Table) {
	if note == "" && len(t.Rows) == 0 {
		note = d.p.faint.Render("<none>")
	}
	if note != "" {
		note = "  " + note
	}
	d.printf("%s%s\n", d.p.key.Render(title+":"), note)
	if len(t.Rows) == 0 {
		return
	}
	var buf bytes.Buffer
	if err := t.Render(&buf, d.width-len(sectionIndent)); err != nil && d.err == nil {
		d.err = err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			d.printf("%s%s", sectionIndent, line)
		}
	}
}

func (d *describer) summary(cnc *ovnkv1.ClusterNetworkConnect, sel selection, alloc allocation) {
	var subnets []string
	for _, s := range cnc.Spec.ConnectSubnets {
		subnets = append(subnets, fmt.Sprintf("%s, a /%d per network", s.CIDR, s.NetworkPrefix))
	}
	var connectivity []string
	for _, c := range cnc.Spec.Connectivity {
		connectivity = append(connectivity, string(c))
	}
	connectivityValues := d.plain(strings.Join(connectivity, ", "))
	if requests(cnc, ovnkv1.ConnectivityClusterIPServiceNetwork) {
		connectivityValues = append(connectivityValues, value{text: "Note: " + servicesNotProgrammed, style: d.p.warn})
	}
	tunnelKey := []value{{text: "<not allocated yet>", style: d.p.faint}}
	if alloc.tunnelKey != 0 {
		tunnelKey = d.plain(strconv.Itoa(alloc.tunnelKey))
	}
	status, h := statusOf(cnc)
	lines := []fieldLine{
		{"Name", d.plain(cnc.Name)},
		{"Networks", d.plain(orNoneText(strings.Join(refs(sel.connected), ", ")))},
		{"Selects", d.plain(orNoneLines(selectorText(cnc))...)},
		{"Connect subnets", d.plain(subnets...)},
		{"Connectivity", connectivityValues},
		{"Router", d.plain(routerName(cnc.Name))},
		{"Tunnel key", tunnelKey},
	}
	if alloc.problem != "" {
		lines = append(lines, fieldLine{"Allocation", []value{{text: "unreadable: " + alloc.problem, style: d.p.bad}}})
	}
	lines = append(lines,
		fieldLine{"Status", []value{{text: status, style: d.p.of(h)}}},
		fieldLine{"Age", d.plain(age(cnc.CreationTimestamp, d.now))},
	)
	d.fields(lines)
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
	case !requests(cnc, ovnkv1.ConnectivityPodNetwork):
		d.textSection("Reachability", d.p.warn.Render("none"), []string{"nothing is programmed: only " + string(ovnkv1.ConnectivityClusterIPServiceNetwork) + " is requested, and ovnk programs pod connectivity only"})
		return
	case len(nets) < 2:
		d.textSection("Reachability", d.p.warn.Render("none"), []string{fmt.Sprintf("the connect selects %d network%s that can be connected; it takes two to connect", len(nets), plural(len(nets)))})
		return
	}
	var pairs []string
	for i, a := range nets {
		for _, b := range nets[i+1:] {
			pairs = append(pairs, a+" "+d.p.good.Render("↔")+" "+b)
		}
	}
	d.textSection("Reachability", "pods of each network reach pods of the others, both ways", pairs)
}

// notTransitive says, for each network of the connect that another connect joins to
// networks outside this one, that those do NOT reach this connect's other networks
// through it.
func (d *describer) notTransitive(snap *snapshot, cnc *ovnkv1.ClusterNetworkConnect, sel selection) {
	if !requests(cnc, ovnkv1.ConnectivityPodNetwork) || len(sel.connected) < 2 {
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
		theirs := refs(selected(c, snap.networks, snap.nsLabels).connected)
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
			theirs := refs(selected(other, snap.networks, snap.nsLabels).connected)
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
		d.textSection("Not transitive", "", lines)
	}
}

// notThrough is the line saying that the networks here and beyond, joined to x by this
// connect and by connect other, do not reach each other through x, and which of them
// reach each other through a connect of their own.
func (d *describer) notThrough(x, other string, here, beyond []string, direct map[string][]string) string {
	not := d.p.bad.Render("NOT")
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
	t := newTable(d.p,
		table.Column{Header: "NETWORK", MinWidth: 10},
		table.Column{Header: "TOPOLOGY"},
		table.Column{Header: "SUBNETS", Stack: true, MinWidth: len("100.100.0.0/16"), Fold: foldList(":")},
		table.Column{Header: "BLOCKS", Stack: true, MinWidth: len("192.168.0.0/24"), Fold: foldList(":")},
	)
	for _, n := range sel.connected {
		var subnets, blocks []string
		for _, p := range n.subnets() {
			subnets = append(subnets, p.String())
		}
		for _, b := range alloc.blocksOf(n) {
			blocks = append(blocks, b.String())
		}
		blockCell := table.List(blocks, d.p.faint)
		if len(blocks) == 0 {
			blockCell = table.Styled("<not allocated yet>", d.p.faint)
		}
		t.Add(table.Text(n.ref()), table.Text(string(n.topology())), table.List(subnets, d.p.faint), blockCell)
	}
	d.section("Connected networks", "", t)
}

// refused lists the selected networks that cannot be connected, if any.
func (d *describer) refused(sel selection) {
	if len(sel.refused) == 0 {
		return
	}
	t := newTable(d.p, table.Column{Header: "NETWORK", MinWidth: 10}, table.Column{Header: "REASON", MinWidth: 20})
	for _, r := range sel.refused {
		t.Add(table.Text(r.network.ref()), table.Styled(r.reason, d.p.bad))
	}
	d.section("Selected but not connected", "", t)
}

func (d *describer) conditions(conds []metav1.Condition) {
	t := newTable(d.p,
		table.Column{Header: "TYPE"}, table.Column{Header: "STATUS"}, table.Column{Header: "REASON", MinWidth: 10},
		table.Column{Header: "AGE"}, table.Column{Header: "MESSAGE", MinWidth: 20},
	)
	for _, c := range conds {
		status := d.p.warn
		switch c.Status {
		case metav1.ConditionTrue:
			status = d.p.good
		case metav1.ConditionFalse:
			status = d.p.bad
		}
		t.Add(table.Text(c.Type), table.Styled(string(c.Status), status), table.Text(c.Reason), table.Text(age(c.LastTransitionTime, d.now)), table.Text(c.Message))
	}
	d.section("Conditions", "", t)
}

func (d *describer) nodes(rs []cluster.NodeReadiness) {
	t := newTable(d.p, table.Column{Header: "NODE", MinWidth: 10}, table.Column{Header: "READY"}, table.Column{Header: "REASON", MinWidth: 20})
	for _, r := range rs {
		if r.Ready {
			t.Add(table.Text(r.Node), table.Styled("yes", d.p.good), table.Text(""))
		} else {
			t.Add(table.Text(r.Node), table.Styled("no", d.p.bad), table.Text(r.Reason))
		}
	}
	ready := countReady(rs)
	d.section("Nodes", d.p.ratio(ready, len(rs)).Render(fmt.Sprintf("%d/%d ready", ready, len(rs))), t)
}

func (d *describer) events(events []eventsv1.Event) {
	t := newTable(d.p,
		table.Column{Header: "TYPE"}, table.Column{Header: "REASON", MinWidth: 10}, table.Column{Header: "AGE"},
		table.Column{Header: "FROM", MinWidth: 8}, table.Column{Header: "MESSAGE", MinWidth: 20},
	)
	for _, e := range events {
		typ := table.Text(e.Type)
		if e.Type == "Warning" {
			typ.Style = &d.p.warn
		}
		when := age(metav1.NewTime(lastSeen(e)), d.now)
		if n := timesSeen(e); n > 1 {
			when += fmt.Sprintf(" (x%d)", n)
		}
		from := e.ReportingController
		if from == "" {
			from = e.DeprecatedSource.Component
		}
		t.Add(typ, table.Text(e.Reason), table.Text(when), table.Text(from), table.Text(e.Note))
	}
	d.section("Events", "", t)
}
