package networkcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// target is how describe and delete were asked for a network.
type target struct {
	arg string
	// cluster picks the ClusterUserDefinedNetwork (--cluster).
	cluster bool
	// namespace is -n's value when given explicitly, else "".
	namespace string
}

func targetOf(f *cmdutil.Factory, arg string, cluster bool) (target, error) {
	ns, explicit, err := f.Namespace()
	if err != nil {
		return target{}, err
	}
	t := target{arg: arg, cluster: cluster}
	if explicit {
		t.namespace = ns
	}
	nsPart, name, qualified := strings.Cut(arg, "/")
	switch {
	case arg == "" || qualified && (nsPart == "" || name == "" || strings.Contains(name, "/")):
		return t, fmt.Errorf("network %q: give NAME or NAMESPACE/NAME", arg)
	case qualified && cluster:
		return t, fmt.Errorf("network %q: --cluster takes the name of a ClusterUserDefinedNetwork, which has no namespace; drop %s/ or --cluster", arg, nsPart)
	case cluster && explicit:
		return t, fmt.Errorf("-n %s: a ClusterUserDefinedNetwork has no namespace; drop -n or --cluster", ns)
	case qualified && explicit && nsPart != ns:
		return t, fmt.Errorf("network %q is in namespace %s but -n says %s; drop -n", arg, nsPart, ns)
	}
	return t, nil
}

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
	t, err := targetOf(o.f, o.args[0], o.cluster)
	if err != nil {
		return nil, netview.Network{}, err
	}
	s, err := connect(o.f)
	if err != nil {
		return nil, netview.Network{}, err
	}
	n, err := s.resolve(ctx, t)
	if err != nil {
		return nil, netview.Network{}, err
	}
	return s, n, nil
}

// resolve finds the one network t names. NAMESPACE/NAME is that UserDefinedNetwork.
// A bare NAME with -n is the UserDefinedNetwork of that namespace, else the
// ClusterUserDefinedNetwork of that name. A bare NAME without -n is the
// ClusterUserDefinedNetwork or the UserDefinedNetwork (of any namespace) of that name,
// and must be exactly one of them: when several exist the error lists them and how to
// name each.
func (s *session) resolve(ctx context.Context, t target) (netview.Network, error) {
	if ns, name, ok := strings.Cut(t.arg, "/"); ok {
		return s.udn(ctx, ns, name)
	}
	if t.cluster {
		return s.cudn(ctx, t.arg)
	}
	if t.namespace != "" {
		n, err := s.udn(ctx, t.namespace, t.arg)
		if err == nil {
			return n, nil
		}
		if n, cerr := s.cudn(ctx, t.arg); cerr == nil {
			return n, nil
		}
		return netview.Network{}, s.unknown(ctx, t)
	}
	var candidates []netview.Network
	cudn := &ovnkv1.ClusterUserDefinedNetwork{}
	switch err := s.Client.Get(ctx, client.ObjectKey{Name: t.arg}, cudn); {
	case err == nil:
		candidates = append(candidates, netview.Network{CUDN: cudn})
	case !apierrors.IsNotFound(err) || netview.IsResourceMissing(err):
		return netview.Network{}, s.Failed(err, "get ClusterUserDefinedNetwork "+t.arg)
	}
	var udns ovnkv1.UserDefinedNetworkList
	err := s.Client.List(ctx, &udns, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", t.arg)})
	if err != nil {
		return netview.Network{}, s.Failed(err, "list UserDefinedNetworks named "+t.arg)
	}
	for i := range udns.Items {
		candidates = append(candidates, netview.Network{UDN: &udns.Items[i]})
	}
	switch len(candidates) {
	case 1:
		return candidates[0], nil
	case 0:
		return netview.Network{}, s.unknown(ctx, t)
	}
	sortNetworks(candidates)
	var ways []string
	for _, c := range candidates {
		if c.Cluster() {
			ways = append(ways, fmt.Sprintf("ClusterUserDefinedNetwork %s (name it with --cluster)", c.Name()))
		} else {
			ways = append(ways, fmt.Sprintf("UserDefinedNetwork %s (name it as %s)", c.Ref(), c.Ref()))
		}
	}
	return netview.Network{}, fmt.Errorf("network %q is ambiguous: it names %s", t.arg, strings.Join(ways, " and "))
}

func (s *session) cudn(ctx context.Context, name string) (netview.Network, error) {
	cudn := &ovnkv1.ClusterUserDefinedNetwork{}
	err := s.Client.Get(ctx, client.ObjectKey{Name: name}, cudn)
	if apierrors.IsNotFound(err) && !netview.IsResourceMissing(err) {
		return netview.Network{}, fmt.Errorf("no ClusterUserDefinedNetwork %q: `kubectl ovnk network list` shows the networks", name)
	}
	if err != nil {
		return netview.Network{}, s.Failed(err, "get ClusterUserDefinedNetwork "+name)
	}
	return netview.Network{CUDN: cudn}, nil
}

func (s *session) udn(ctx context.Context, ns, name string) (netview.Network, error) {
	udn := &ovnkv1.UserDefinedNetwork{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, udn)
	if apierrors.IsNotFound(err) && !netview.IsResourceMissing(err) {
		if _, nsErr := s.namespace(ctx, ns); nsErr != nil {
			return netview.Network{}, nsErr
		}
		return netview.Network{}, fmt.Errorf("no UserDefinedNetwork %q in namespace %s: `kubectl ovnk network list -n %s` shows its networks", name, ns, ns)
	}
	if err != nil {
		return netview.Network{}, s.Failed(err, "get UserDefinedNetwork "+ns+"/"+name)
	}
	return netview.Network{UDN: udn}, nil
}

// unknown is the error for a bare name that names nothing.
func (s *session) unknown(ctx context.Context, t target) error {
	if t.namespace == "" {
		return fmt.Errorf("no network named %q: no ClusterUserDefinedNetwork and no UserDefinedNetwork in any namespace has that name (`kubectl ovnk network list` shows them)", t.arg)
	}
	if _, err := s.namespace(ctx, t.namespace); err != nil {
		return err
	}
	return fmt.Errorf("no network named %q: no ClusterUserDefinedNetwork and no UserDefinedNetwork in namespace %s has that name (`kubectl ovnk network list -n %s` shows its networks)", t.arg, t.namespace, t.namespace)
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
