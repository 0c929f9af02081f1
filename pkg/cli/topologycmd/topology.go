// Package topologycmd implements `kubectl ovnk topology`: the logical routers, switches
// and ports one network has in one node's OVN zone, read live, as a tree or as JSON/YAML.
package topologycmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/zoneview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// New returns the `topology` command.
func New(f *cmdutil.Factory) *cobra.Command {
	var node, nb string
	var out *cmdutil.Output
	cmd := &cobra.Command{
		Use:   "topology [NETWORK] [--node NODE]",
		Short: "Show a network's live OVN topology in a node's zone",
		Long: `Show the logical routers and switches a network has in one node's OVN zone, as the
node's Northbound database holds them right now: every port with its networks or
addresses and MAC, the port at its other end (router-to-router peers and
switch-to-router patches), remote ports with the chassis and tunnel key of the node
they stand for, gateway chassis, NAT rules, and how many routes and policies each
router has.

NETWORK is "default" (the default when omitted), a ClusterUserDefinedNetwork's name,
a UserDefinedNetwork as NAMESPACE/NAME (or NAME with -n), or an OVN network name
such as cluster_udn_blue. The zone is read from the node's agent (ovnk-agent dump
through pods/exec), or straight from an NB with --nb or the settings' nb-endpoints.`,
		Example: `  # The default network on the first node
  kubectl ovnk topology

  # The cluster-wide network blue on worker1
  kubectl ovnk topology blue --node worker1

  # The namespace network red of namespace ns1, as JSON
  kubectl ovnk topology ns1/red --node worker1 -o json

  # Read a Northbound database directly
  kubectl ovnk topology blue --node worker1 --nb unix:/var/run/ovn/ovnnb_db.sock`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: zoneview.CompleteNetwork(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.Validate(); err != nil {
				return err
			}
			network := cluster.DefaultNetworkName
			if len(args) == 1 {
				network = args[0]
			}
			return run(cmd.Context(), f, out, network, node, nb)
		},
	}
	out = cmdutil.AddOutputFlag(cmd)
	cmd.Flag("output").Usage = "output format: json, yaml, jsonpath=…, go-template=… (default: a tree)"
	cmd.Flags().StringVar(&node, "node", "", "the node whose zone to show (default: the only node, else the first by name)")
	cmd.Flags().StringVar(&nb, "nb", "", "read the zone from this NB endpoint (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT) instead of the node's agent")
	_ = cmd.RegisterFlagCompletionFunc("node", f.CompleteNames(cmdutil.ListNodeNames))
	return cmd
}

func run(ctx context.Context, f *cmdutil.Factory, out *cmdutil.Output, network, node, nb string) error {
	z, err := zoneview.Read(ctx, f, nb, node)
	if err != nil {
		return err
	}
	ns, explicit, err := f.Namespace()
	if err != nil {
		return err
	}
	n, err := z.Network(network, zoneview.Namespace{Name: ns, Explicit: explicit})
	if err != nil {
		return err
	}
	v := newBuilder(z, n).build()
	if !out.Human() {
		return out.PrintData(v, f.Out)
	}
	return treeWriter{st: newStyles(f.Renderer(f.Out)), width: f.Width()}.write(f.Out, v, z)
}
