package networkcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// networkArg is the one network describe and delete take, and their --cluster: the
// options, Complete and Validate, that the two have in common.
type networkArg struct {
	f       *cmdutil.Factory
	cmd     *cobra.Command
	cluster bool
	// args should name one network.
	args []string
}

// bind registers --cluster on cmd, whose path the errors name.
func (o *networkArg) bind(cmd *cobra.Command) {
	o.cmd = cmd
	cmd.Flags().BoolVar(&o.cluster, "cluster", false, "NAME is a ClusterUserDefinedNetwork")
}

// Complete takes the factory and the network.
func (o *networkArg) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks that one network is named.
func (o *networkArg) Validate() error {
	if len(o.args) != 1 {
		return fmt.Errorf("%s takes one network, NAME or NAMESPACE/NAME (got %d arguments); `kubectl ovnk network list` shows them", o.cmd.CommandPath(), len(o.args))
	}
	return nil
}

// open connects to the cluster and finds the network, within ctx.
func (o *networkArg) open(ctx context.Context) (*session, netview.Network, error) {
	t, err := netview.TargetOf(o.f, o.args[0], o.cluster)
	if err != nil {
		return nil, netview.Network{}, err
	}
	s, err := connect(o.f)
	if err != nil {
		return nil, netview.Network{}, err
	}
	n, err := s.Resolve(ctx, t)
	if err != nil {
		return nil, netview.Network{}, err
	}
	return s, n, nil
}

// completeNetworks lists what describe and delete accept: cluster network names, and
// NAMESPACE/NAME of namespaced networks (only NAME within an explicit -n).
func completeNetworks(f *cmdutil.Factory) func(ctx context.Context, c client.Client) ([]string, error) {
	return func(ctx context.Context, c client.Client) ([]string, error) {
		ns, explicit, err := f.Namespace()
		if err != nil {
			return nil, err
		}
		var cudns ovnkv1.ClusterUserDefinedNetworkList
		if err := c.List(ctx, &cudns); err != nil {
			return nil, err
		}
		var udns ovnkv1.UserDefinedNetworkList
		if !explicit {
			ns = ""
		}
		if err := c.List(ctx, &udns, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		var out []string
		for _, c := range cudns.Items {
			out = append(out, c.Name)
		}
		for _, u := range udns.Items {
			if explicit {
				out = append(out, u.Name)
			} else {
				out = append(out, u.Namespace+"/"+u.Name)
			}
		}
		return out, nil
	}
}
