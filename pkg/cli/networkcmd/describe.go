package networkcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

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

// describeOptions are the flags and dependencies of `network describe`.
type describeOptions struct {
	f       *cmdutil.Factory
	cluster bool
	now     func() time.Time
}

func newDescribeCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &describeOptions{f: f, now: now}
	cmd := &cobra.Command{
		Use:   "describe NAME | NAMESPACE/NAME",
		Short: "Show a network: its spec, conditions, readiness on every node, connections and recent events",
		Long: `Show one network: its spec, its status conditions, whether each node's zone has
programmed it (and why not), the ClusterNetworkConnects that select it, and the
recent events about it.

A UserDefinedNetwork is named NAMESPACE/NAME, or NAME with -n; a
ClusterUserDefinedNetwork by its NAME. A bare NAME without -n that several networks
have is refused with the candidates; --cluster picks the ClusterUserDefinedNetwork.`,
		Example: `  # A namespace's network
  kubectl ovnk network describe blue/tenant-net
  kubectl ovnk network describe tenant-net -n blue

  # A cluster network, also when a namespaced network has the same name
  kubectl ovnk network describe shared --cluster`,
		Args:              exactlyOneNetwork,
		ValidArgsFunction: f.CompleteNames(completeNetworks(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().BoolVar(&o.cluster, "cluster", false, "NAME is a ClusterUserDefinedNetwork")
	return cmd
}

// exactlyOneNetwork is the Args check of describe and delete.
func exactlyOneNetwork(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s takes one network, NAME or NAMESPACE/NAME (got %d arguments); `kubectl ovnk network list` shows them", cmd.CommandPath(), len(args))
	}
	return nil
}

func (o *describeOptions) run(ctx context.Context, arg string) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	s, n, err := openNetwork(ctx, o.f, arg, o.cluster)
	if err != nil {
		return err
	}
	nodes, err := s.nodes(ctx)
	if err != nil {
		return err
	}
	cncs, err := s.connects(ctx)
	if err != nil {
		return err
	}
	nsLabels, err := s.namespaceLabels(ctx)
	if err != nil {
		return err
	}
	events, err := s.events(ctx, n)
	if err != nil {
		return err
	}
	d := &describer{w: &bytes.Buffer{}, p: newPalette(o.f, o.f.Out), width: o.f.Width(), now: o.now()}
	d.network(n, nsLabels)
	d.conditions(n.conditions())
	d.nodes(readiness(cluster.ReadZoneReports(nodes), n.ovnName()))
	d.connections(connectedBy(n, cncs, nsLabels))
	d.events(events)
	if d.err != nil {
		return d.err
	}
	_, err = io.Copy(o.f.Out, d.w)
	return err
}

// events lists the events about the network object, found by its UID (events about a
// cluster-scoped object may be in any namespace, usually "default"), oldest first.
func (s *session) events(ctx context.Context, n network) ([]eventsv1.Event, error) {
	sel := fields.OneTermEqualSelector("regarding.uid", string(n.object().GetUID())).String()
	list, err := s.Clientset.EventsV1().Events(n.namespace()).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, s.explain(err, "list events about "+n.ref())
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

// sectionIndent is the indentation of a section's table under its title.
const sectionIndent = "  "

// fieldLine is one "Key:  value" entry; a value of several lines is indented under the
// first.
type fieldLine struct {
	key    string
	values []string
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
		key := d.p.key.Render(l.key+":") + strings.Repeat(" ", keyWidth-len(l.key)+1)
		var wrapped []string
		for _, v := range l.values {
			wrapped = append(wrapped, table.Wrap("")(v, max(d.width-len(indent), 20))...)
		}
		for i, v := range wrapped {
			if i == 0 {
				d.printf("%s%s\n", key, v)
			} else {
				d.printf("%s%s\n", indent, v)
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

func (d *describer) network(n network, nsLabels map[string]map[string]string) {
	lines := []fieldLine{{"Name", []string{n.name()}}, {"Kind", []string{n.kind()}}}
	if n.cluster() {
		sel := &n.cudn.Spec.NamespaceSelector
		selText, err := metav1.LabelSelectorAsSelector(sel)
		shown := "<invalid: " + fmt.Sprint(err) + ">"
		if err == nil {
			shown = selText.String()
			if shown == "" {
				shown = "<every namespace>"
			}
		}
		var served []string
		for _, ns := range slices.Sorted(maps.Keys(nsLabels)) {
			if n.serves(ns, nsLabels[ns]) {
				served = append(served, ns)
			}
		}
		lines = append(lines, fieldLine{"Selector", []string{shown}}, fieldLine{"Namespaces", []string{orNone(strings.Join(served, ", "))}})
	} else {
		lines = append(lines, fieldLine{"Namespace", []string{n.namespace()}})
	}
	if l := n.object().GetLabels(); len(l) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(l)) {
			kv = append(kv, k+"="+l[k])
		}
		lines = append(lines, fieldLine{"Labels", kv})
	}
	lines = append(lines,
		fieldLine{"OVN network", []string{n.ovnName()}},
		fieldLine{"Age", []string{age(n.object().GetCreationTimestamp(), d.now)}},
		fieldLine{"Topology", []string{string(n.spec().Topology)}},
		fieldLine{"Role", []string{string(n.role())}},
		fieldLine{"Subnets", subnetLines(n.spec())},
	)
	if n.role() == ovnkv1.NetworkRolePrimary {
		lines = append(lines, fieldLine{"Join subnets", []string{orDefault(strings.Join(n.joinSubnets(), ", "))}})
	}
	mtu := "default (" + strconv.Itoa(cluster.DefaultMTU) + ")"
	if m := n.mtu(); m != 0 {
		mtu = strconv.Itoa(int(m))
	}
	lines = append(lines, fieldLine{"MTU", []string{mtu}})
	if l2 := n.spec().Layer2; l2 != nil {
		lines = append(lines, fieldLine{"IPAM", []string{ipamText(l2.IPAM)}})
	}
	transport := string(n.transport())
	if no := n.spec().NoOverlay; no != nil {
		transport += fmt.Sprintf(" (outbound SNAT %s, routing %s)", no.OutboundSNAT, no.Routing)
	}
	lines = append(lines, fieldLine{"Transport", []string{transport}})
	d.fields(lines)
}

// subnetLines shows each subnet, with a Layer3 network's per-node block size.
func subnetLines(s ovnkv1.NetworkSpec) []string {
	var out []string
	switch {
	case s.Layer3 != nil:
		for _, sub := range s.Layer3.Subnets {
			host := int(sub.HostSubnet)
			if host == 0 {
				host = cluster.DefaultHostSubnetIPv4
				if strings.Contains(string(sub.CIDR), ":") {
					host = cluster.DefaultHostSubnetIPv6
				}
			}
			out = append(out, fmt.Sprintf("%s, a /%d per node", sub.CIDR, host))
		}
	case s.Layer2 != nil:
		for _, c := range s.Layer2.Subnets {
			out = append(out, string(c))
		}
	}
	if len(out) == 0 {
		return []string{"<none>"}
	}
	return out
}

func ipamText(c *ovnkv1.IPAMConfig) string {
	if c == nil {
		return "Enabled"
	}
	text := string(ovnkv1.IPAMEnabled)
	if c.Mode != "" {
		text = string(c.Mode)
	}
	if c.Lifecycle != "" {
		text += ", addresses " + string(c.Lifecycle)
	}
	return text
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
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

func (d *describer) connections(cncs []ovnkv1.ClusterNetworkConnect) {
	t := newTable(d.p, table.Column{Header: "NAME", MinWidth: 10}, table.Column{Header: "CONNECTIVITY", Stack: true}, table.Column{Header: "STATUS"})
	for _, c := range cncs {
		var kinds []string
		for _, k := range c.Spec.Connectivity {
			kinds = append(kinds, string(k))
		}
		status := table.Text(orNone(string(c.Status.Status)))
		switch c.Status.Status {
		case ovnkv1.ConnectStatusSuccess:
			status.Style = &d.p.good
		case ovnkv1.ConnectStatusFailure:
			status.Style = &d.p.bad
		}
		t.Add(table.Text(c.Name), table.Cell{Values: kinds}, status)
	}
	d.section("Connected to", "", t)
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
