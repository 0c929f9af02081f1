// Package topologycmd implements `kubectl ovnk topology`: the logical routers, switches
// and ports one network has in one node's OVN zone, or a ClusterNetworkConnect's connect
// router and its links there, read live, as a tree or as JSON/YAML.
package topologycmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// New returns the `topology` command.
func New(f *cmdutil.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "topology [NETWORK | connect/NAME] [--node NODE]",
		Short: "Show a network's or a connect's live OVN topology in a node's zone",
		Long: `Show the logical routers and switches a network has in one node's OVN zone, as the
node's Northbound database holds them right now: every port with its networks or
addresses and MAC, the port at its other end (router-to-router peers and
switch-to-router patches), remote ports with the chassis and tunnel key of the node
they stand for, gateway chassis, NAT rules, and how many routes and policies each
router has.

NETWORK is "default" (the default when omitted), or a network named as network
describe names it: a ClusterUserDefinedNetwork's name (with --cluster when a
UserDefinedNetwork has the same name), a UserDefinedNetwork as NAMESPACE/NAME, as
NAME with -n, or as NAME alone when no other network has that name; or an OVN
network name such as cluster_udn_blue.

connect/NAME (or the router's name, connect_router_NAME) shows the connect router of
the ClusterNetworkConnect NAME instead: its ports with the network router port each
links to and that port's network, the other nodes' links with their chassis and
tunnel key, and how many static routes it has; then each connected network's router
in the zone with its rtocr- link port and how many of its priority-9001 policies
steer traffic to the connect router. A UserDefinedNetwork of a namespace named
"connect" is then named NAME -n connect, or by its OVN name.

The zone is read through the node's agent with pods/exec: ovnk's agent (ovnk-agent
dump), or, on a cluster run by upstream OVN-Kubernetes, the node's ovnkube-node pod
(its NB container), found with no configuration; or straight from an NB with --nb or
the settings' nb-endpoints.`,
		Example: `  # The default network on the first node
  kubectl ovnk topology

  # The cluster-wide network blue on worker1
  kubectl ovnk topology blue --node worker1

  # The namespace network red of namespace ns1, as JSON
  kubectl ovnk topology ns1/red --node worker1 -o json

  # The connect router of the ClusterNetworkConnect colored-enterprise on worker1
  kubectl ovnk topology connect/colored-enterprise --node worker1

  # Read a Northbound database directly
  kubectl ovnk topology blue --node worker1 --nb unix:/var/run/ovn/ovnnb_db.sock`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeArg(f),
		RunE:              cmdutil.RunE(f, o),
	}
	o.out = cmdutil.AddDataOutputFlag(cmd)
	cmd.Flag("output").Usage = "output format: json, yaml, jsonpath=…, go-template=… (default: a tree)"
	cmd.Flags().StringVar(&o.node, "node", "", "the node whose zone to show (default: the only node, else the first by name)")
	cmd.Flags().BoolVar(&o.cluster, "cluster", false, "NETWORK is a ClusterUserDefinedNetwork, when a UserDefinedNetwork has the same name")
	cmd.Flags().StringVar(&o.nb, "nb", "", "read the zone from this NB endpoint (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT) instead of through the node's agent (ovnk's, or upstream's ovnkube-node pod)")
	_ = cmd.RegisterFlagCompletionFunc("node", f.CompleteNames(cmdutil.ListNodeNames))
	return cmd
}

// options are the command's flags and argument.
type options struct {
	node, nb string
	// cluster is --cluster: the argument is a ClusterUserDefinedNetwork's name.
	cluster bool
	out     *cmdutil.Output

	f *cmdutil.Factory
	// arg names the network or the connect; the default network when omitted.
	arg string
}

// Complete takes the factory and the network or connect, the default network when
// there is none.
func (o *options) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.arg = f, cluster.DefaultNetworkName
	if len(args) == 1 {
		o.arg = args[0]
	}
	return nil
}

// Validate checks -o before anything is contacted.
func (o *options) Validate() error { return o.out.Validate() }

// Run shows what the argument names: a connect (connect/NAME or its router's name),
// else a network.
func (o *options) Run(ctx context.Context) error {
	f, out, arg := o.f, o.out, o.arg
	z, err := livezone.Read(ctx, f, o.nb, o.node)
	if err != nil {
		return err
	}
	tw := treeWriter{st: newStyles(f.Renderer(f.Out)), width: f.TableWidth()}
	if cnc, ok := connectArg(arg); ok {
		cr, err := connectRouter(z, arg, cnc)
		if err != nil {
			return err
		}
		v := newBuilder(z, livezone.Network{}).connectView(cnc, cr)
		if !out.Human() {
			return out.PrintData(v, f.Out)
		}
		return tw.writeConnect(f.Out, v, z)
	}
	n, err := o.network(ctx, z)
	if err != nil {
		return err
	}
	v := newBuilder(z, n).build()
	if !out.Human() {
		return out.PrintData(v, f.Out)
	}
	return tw.write(f.Out, v, z)
}

// network finds the network the argument names in the zone. A name of the cluster's
// ClusterUserDefinedNetworks and UserDefinedNetworks is resolved as `network describe`
// resolves it (netview.Resolve); "default", and a name no such object has (an OVN
// network name, or a network the zone still holds after its object went), are looked
// up in the zone itself.
func (o *options) network(ctx context.Context, z *livezone.Zone) (livezone.Network, error) {
	ns, explicit, err := o.f.Namespace()
	if err != nil {
		return livezone.Network{}, err
	}
	inZone := func() (livezone.Network, error) {
		return z.Network(o.arg, livezone.Namespace{Name: ns, Explicit: explicit})
	}
	if o.arg == cluster.DefaultNetworkName && !o.cluster {
		return inZone()
	}
	t, err := netview.TargetOf(o.f, o.arg, o.cluster)
	if err != nil {
		return livezone.Network{}, err
	}
	s, err := netview.Open(o.f, "networks")
	if err != nil {
		return livezone.Network{}, err
	}
	n, err := s.Resolve(ctx, t)
	var missing *netview.NotFoundError
	switch {
	case err == nil:
		return z.NetworkOf(o.arg, n.OVNName())
	case errors.As(err, &missing) && !o.cluster:
		return inZone()
	}
	return livezone.Network{}, err
}
