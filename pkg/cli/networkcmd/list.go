package networkcmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// listOptions are the flags and dependencies of `network list`.
type listOptions struct {
	f      *cmdutil.Factory
	output *cmdutil.Output
	now    func() time.Time
}

func newListCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &listOptions{f: f, now: now}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List networks: where each one applies, its shape, and on how many nodes it is ready",
		Long: `List the ClusterUserDefinedNetworks and the UserDefinedNetworks of every namespace, or,
with -n, the networks of one namespace (its own and the cluster networks selecting it).

NAME is how the other commands take the network: NAMESPACE/NAME for a
UserDefinedNetwork, NAME for a ClusterUserDefinedNetwork. READY counts the nodes
whose agent reports the network programmed in its zone (the ovnk.io/zone-status
annotation of each Node). STATUS is Ready, Pending (some zones have not programmed
it yet), or why the leader refused the network (the reason of its NetworkCreated
condition, e.g. SubnetOverlap: network describe shows the message). On a cluster
run by upstream OVN-Kubernetes no node reports its zone: READY is "-" and STATUS
comes from the conditions its cluster manager sets, Ready when NetworkCreated and
NetworkAllocationSucceeded are True. CONNECTED names
the ClusterNetworkConnects that select the network.

On a terminal the table fits its width: cells of several values stack, and AGE,
then CONNECTED, then SUBNETS are left out; no name is ever split. Piped, every
network is one line. -o wide adds TRANSPORT and the OVN network name.`,
		Example: `  # Every network of the cluster
  kubectl ovnk network list

  # The networks pods of namespace blue can use
  kubectl ovnk network list -n blue

  # Every column, with the transport and the OVN network name
  kubectl ovnk network list -o wide

  # For scripts: a List of the network objects, or only their names
  kubectl ovnk network list -o json
  kubectl ovnk network list -o name
  kubectl ovnk network list -o jsonpath='{.items[*].metadata.name}'`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(f, o),
	}
	o.output = cmdutil.AddOutputFlag(cmd, "wide")
	return cmd
}

// Complete takes the factory; list has no arguments.
func (o *listOptions) Complete(f *cmdutil.Factory, _ []string) error {
	o.f = f
	return nil
}

// Validate checks -o before anything is contacted.
func (o *listOptions) Validate() error { return o.output.Validate() }

// Run lists the networks, of every namespace or of -n's.
func (o *listOptions) Run(ctx context.Context) error {
	ns, explicit, err := o.f.Namespace()
	if err != nil {
		return err
	}
	if !explicit {
		ns = ""
	}
	s, err := connect(o.f)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	nets, err := s.networks(ctx, ns)
	if err != nil {
		return err
	}
	var nsLabels map[string]map[string]string
	if ns != "" {
		got, err := s.namespace(ctx, ns)
		if err != nil {
			return err
		}
		nsLabels = map[string]map[string]string{ns: got.Labels}
		nets = servingNamespace(nets, ns, got.Labels)
	}
	if !o.output.Human() {
		return o.printObjects(nets)
	}
	if len(nets) == 0 {
		where := ""
		if ns != "" {
			where = " in namespace " + ns
		}
		_, err := fmt.Fprintf(o.f.ErrOut, "No networks found%s.\n", where)
		return err
	}
	reports, cncs, err := s.reportsAndConnects(ctx)
	if err != nil {
		return err
	}
	if len(cncs) > 0 && ns == "" {
		// Connects select Primary UserDefinedNetworks by their namespace's labels.
		if nsLabels, err = s.NamespaceLabels(ctx); err != nil {
			return err
		}
	}
	connects := connectsByNetwork(netview.NewModel(nets, nsLabels), cncs)
	p := humanview.NewPalette(o.f, o.f.Out)
	t := p.Table(
		humanview.Column{Header: "NAME"},
		humanview.Column{Header: "OVN NETWORK", Wide: true},
		humanview.Column{Header: "TOPOLOGY"},
		humanview.Column{Header: "ROLE"},
		humanview.Column{Header: "SUBNETS", Stack: true, Optional: 3},
		humanview.Column{Header: "TRANSPORT", Wide: true},
		humanview.Column{Header: "READY"},
		humanview.Column{Header: "STATUS"},
		humanview.Column{Header: "CONNECTED", Stack: true, Optional: 2},
		humanview.Column{Header: "AGE", Optional: 1},
	)
	t.Wide = o.output.Format() == "wide"
	for _, n := range nets {
		sum := n.Summarize(reports)
		ready, status := humanview.CountReady(sum.Nodes), sum.Status
		readyCell := humanview.Styled(strconv.Itoa(ready)+"/"+strconv.Itoa(len(sum.Nodes)), p.Ratio(ready, len(sum.Nodes)))
		if sum.FromConditions {
			readyCell = humanview.Text("-") // no per-node word without zone reports
		}
		statusStyle := p.Bad // the leader refused it
		switch status {
		case netview.StatusReady:
			statusStyle = p.Good
		case netview.StatusPending:
			statusStyle = p.Warn
		}
		t.Add(
			humanview.Text(n.Ref()),
			humanview.Text(n.OVNName()),
			humanview.Text(string(n.Spec().Topology)),
			humanview.Text(string(n.Role())),
			humanview.List(n.Subnets(), p.Faint),
			humanview.Text(string(n.Transport())),
			readyCell,
			humanview.Styled(status, statusStyle),
			humanview.List(names(connects[n.OVNName()]), p.Faint),
			humanview.Text(humanview.Age(n.Object().GetCreationTimestamp(), o.now())),
		)
	}
	return t.Render(o.f.Out, o.f.TableWidth())
}

// servingNamespace keeps the networks of namespace ns: its UserDefinedNetworks and the
// ClusterUserDefinedNetworks that select it.
func servingNamespace(nets []netview.Network, ns string, nsLabels map[string]string) []netview.Network {
	var out []netview.Network
	for _, n := range nets {
		if served, err := n.Namespaces(map[string]map[string]string{ns: nsLabels}); err == nil && slices.Contains(served, ns) {
			out = append(out, n)
		}
	}
	return out
}

// printObjects prints the networks as a kubectl List.
func (o *listOptions) printObjects(nets []netview.Network) error {
	objs := make([]client.Object, len(nets))
	for i, n := range nets {
		objs[i] = n.Object()
	}
	return o.output.PrintList(objs, o.f.Out)
}
