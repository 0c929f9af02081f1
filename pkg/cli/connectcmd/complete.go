package connectcmd

import (
	"context"
	"slices"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// completeNetworkArgs completes the networks connect takes: those that can be
// connected, named as connect names them, except those already on the command line.
func completeNetworkArgs(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return f.CompleteNames(func(ctx context.Context, c client.Client) ([]string, error) {
			return connectableRefs(ctx, c, args)
		})(cmd, args, toComplete)
	}
}

// completeDisconnectArgs completes disconnect's first argument with the connects' names
// and the networks, and the next ones with networks.
func completeDisconnectArgs(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return f.CompleteNames(func(ctx context.Context, c client.Client) ([]string, error) {
			nets, err := connectableRefs(ctx, c, args)
			if err != nil || len(args) > 0 {
				return nets, err
			}
			names, err := connectNames(ctx, c)
			return append(names, nets...), err
		})(cmd, args, toComplete)
	}
}

// completeConnectName completes the one connect name describe takes.
func completeConnectName(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f.CompleteNames(connectNames)(cmd, args, toComplete)
	}
}

func connectNames(ctx context.Context, c client.Client) ([]string, error) {
	var cncs ovnkv1.ClusterNetworkConnectList
	if err := c.List(ctx, &cncs); err != nil {
		return nil, err
	}
	out := make([]string, len(cncs.Items))
	for i, cnc := range cncs.Items {
		out[i] = cnc.Name
	}
	return out, nil
}

// connectableRefs lists the networks that can be connected, but those in taken.
func connectableRefs(ctx context.Context, c client.Client, taken []string) ([]string, error) {
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	if err := c.List(ctx, &cudns); err != nil {
		return nil, err
	}
	var udns ovnkv1.UserDefinedNetworkList
	if err := c.List(ctx, &udns); err != nil {
		return nil, err
	}
	nets := netview.FromLists(&cudns, &udns)
	sortNetworks(nets)
	model := netview.NewModel(nets, nil) // connectability needs no namespace
	var out []string
	for _, n := range nets {
		cn, err := model.Network(n)
		if err == nil && cluster.Connectability(cn) == cluster.Connectable && !slices.Contains(taken, n.Ref()) {
			out = append(out, n.Ref())
		}
	}
	return out, nil
}
