package networkcmd

import (
	"context"
	"fmt"
	"maps"
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

// describeOptions are the flags and dependencies of `network describe`.
type describeOptions struct {
	networkArg
	now func() time.Time
}

func newDescribeCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &describeOptions{now: now}
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
		ValidArgsFunction: f.CompleteNames(completeNetworks(f)),
		RunE:              cmdutil.RunE(f, o),
	}
	o.bind(cmd)
	return cmd
}

// Run reads the network and what shows its state, and describes it.
func (o *describeOptions) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	s, n, err := o.open(ctx)
	if err != nil {
		return err
	}
	nodes, cncs, err := s.nodesAndConnects(ctx)
	if err != nil {
		return err
	}
	nsLabels, err := s.NamespaceLabels(ctx)
	if err != nil {
		return err
	}
	events, err := humanview.RecentEvents(ctx, s.Clientset, n.Namespace(), n.Object().GetUID())
	if err != nil {
		return s.Failed(err, "list events about "+n.Ref())
	}
	reports := s.zoneReports(ctx, nodes, cncs)
	d := describer{humanview.NewDescription(humanview.NewPalette(o.f, o.f.Out), o.f.TableWidth(), o.now())}
	d.network(n, nsLabels)
	d.Conditions(n.Conditions())
	if sum := n.Summarize(reports); sum.FromConditions {
		d.TextSection("Nodes", "", []string{"no node reports on its zone (no ovnk agent): the network is " +
			sum.Status + " by the conditions above, which upstream's cluster manager sets"})
	} else {
		d.Nodes(sum.Nodes, sum.FromZones)
	}
	// The model of n alone selects as one of every network: selection looks at each
	// network on its own.
	d.connections(connectsByNetwork(netview.NewModel([]netview.Network{n}, nsLabels), cncs)[n.OVNName()])
	d.Events(events)
	return d.Flush(o.f.Out)
}

// describer writes the sections of a network's description.
type describer struct {
	*humanview.Description
}

func (d *describer) network(n netview.Network, nsLabels map[string]map[string]string) {
	lines := []humanview.Field{{Key: "Name", Values: d.Plain(n.Name())}, {Key: "Kind", Values: d.Plain(n.Kind())}}
	if n.Cluster() {
		sel := &n.CUDN.Spec.NamespaceSelector
		selText, err := metav1.LabelSelectorAsSelector(sel)
		shown := "<invalid: " + fmt.Sprint(err) + ">"
		if err == nil {
			shown = selText.String()
			if shown == "" {
				shown = "<every namespace>"
			}
		}
		// A selector that does not parse serves none; the Selector line says why.
		served, _ := n.Namespaces(nsLabels)
		lines = append(lines, humanview.Field{Key: "Selector", Values: d.Plain(shown)}, humanview.Field{Key: "Namespaces", Values: d.Plain(orNone(strings.Join(served, ", ")))})
	} else {
		lines = append(lines, humanview.Field{Key: "Namespace", Values: d.Plain(n.Namespace())})
	}
	if l := n.Object().GetLabels(); len(l) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(l)) {
			kv = append(kv, k+"="+l[k])
		}
		lines = append(lines, humanview.Field{Key: "Labels", Values: d.Plain(kv...)})
	}
	lines = append(lines,
		humanview.Field{Key: "OVN network", Values: d.Plain(n.OVNName())},
		humanview.Field{Key: "Age", Values: d.Plain(d.Age(n.Object().GetCreationTimestamp()))},
		humanview.Field{Key: "Topology", Values: d.Plain(string(n.Spec().Topology))},
		humanview.Field{Key: "Role", Values: d.Plain(string(n.Role()))},
		humanview.Field{Key: "Subnets", Values: d.Plain(subnetLines(n.Spec())...)},
	)
	if n.Role() == ovnkv1.NetworkRolePrimary {
		lines = append(lines, humanview.Field{Key: "Join subnets", Values: d.Plain(orDefault(strings.Join(n.JoinSubnets(), ", ")))})
	}
	mtu := "default (" + strconv.Itoa(cluster.DefaultMTU) + ")"
	if m := n.MTU(); m != 0 {
		mtu = strconv.Itoa(int(m))
	}
	lines = append(lines, humanview.Field{Key: "MTU", Values: d.Plain(mtu)})
	if l2 := n.Spec().Layer2; l2 != nil {
		lines = append(lines, humanview.Field{Key: "IPAM", Values: d.Plain(ipamText(l2.IPAM))})
	}
	transport := string(n.Transport())
	if no := n.Spec().NoOverlay; no != nil {
		transport += fmt.Sprintf(" (outbound SNAT %s, routing %s)", no.OutboundSNAT, no.Routing)
	}
	lines = append(lines, humanview.Field{Key: "Transport", Values: d.Plain(transport)})
	d.Fields(lines)
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

func (d *describer) connections(cncs []ovnkv1.ClusterNetworkConnect) {
	t := d.Palette.Table(humanview.Column{Header: "NAME", MinWidth: 10}, humanview.Column{Header: "CONNECTIVITY", Stack: true}, humanview.Column{Header: "STATUS"})
	for _, c := range cncs {
		var kinds []string
		for _, k := range c.Spec.Connectivity {
			kinds = append(kinds, string(k))
		}
		status := humanview.Text(orNone(string(c.Status.Status)))
		switch c.Status.Status {
		case ovnkv1.ConnectStatusSuccess:
			status.Style = &d.Palette.Good
		case ovnkv1.ConnectStatusFailure:
			status.Style = &d.Palette.Bad
		}
		t.Add(humanview.Text(c.Name), humanview.Cell{Values: kinds}, status)
	}
	d.Section("Connected to", "", t)
}
