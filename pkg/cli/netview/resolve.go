package netview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// Target is how a command was asked for one network, the way `network describe` takes
// it: NAME or NAMESPACE/NAME, with --cluster and -n.
type Target struct {
	Arg string
	// Cluster picks the ClusterUserDefinedNetwork (--cluster).
	Cluster bool
	// Namespace is -n's value when given explicitly, else "".
	Namespace string
}

// TargetOf reads arg and --cluster with f's -n, refusing the combinations that name no
// network.
func TargetOf(f *cmdutil.Factory, arg string, cluster bool) (Target, error) {
	ns, explicit, err := f.Namespace()
	if err != nil {
		return Target{}, err
	}
	t := Target{Arg: arg, Cluster: cluster}
	if explicit {
		t.Namespace = ns
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

// NotFoundError says that what a command named does not exist: no such network, or no
// such namespace. Commands that can also name things the API server does not hold (an
// OVN network name) try those on this error alone.
type NotFoundError struct{ msg string }

func (e *NotFoundError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &NotFoundError{msg: fmt.Sprintf(format, args...)}
}

// Resolve finds the one network t names. NAMESPACE/NAME is that UserDefinedNetwork.
// A bare NAME with -n is the UserDefinedNetwork of that namespace, else the
// ClusterUserDefinedNetwork of that name. A bare NAME without -n is the
// ClusterUserDefinedNetwork or the UserDefinedNetwork (of any namespace) of that name,
// and must be exactly one of them: when several exist the error lists them and how to
// name each. A network or namespace that does not exist is a *NotFoundError.
func (s *Session) Resolve(ctx context.Context, t Target) (Network, error) {
	if ns, name, ok := strings.Cut(t.Arg, "/"); ok {
		return s.udn(ctx, ns, name)
	}
	if t.Cluster {
		return s.cudn(ctx, t.Arg)
	}
	if t.Namespace != "" {
		n, err := s.udn(ctx, t.Namespace, t.Arg)
		if err == nil {
			return n, nil
		}
		if n, cerr := s.cudn(ctx, t.Arg); cerr == nil {
			return n, nil
		}
		return Network{}, s.unknown(ctx, t)
	}
	var candidates []Network
	cudn := &ovnkv1.ClusterUserDefinedNetwork{}
	switch err := s.Client.Get(ctx, client.ObjectKey{Name: t.Arg}, cudn); {
	case err == nil:
		candidates = append(candidates, Network{CUDN: cudn})
	case !apierrors.IsNotFound(err) || IsResourceMissing(err):
		return Network{}, s.Failed(err, "get ClusterUserDefinedNetwork "+t.Arg)
	}
	var udns ovnkv1.UserDefinedNetworkList
	err := s.Client.List(ctx, &udns, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", t.Arg)})
	if err != nil {
		return Network{}, s.Failed(err, "list UserDefinedNetworks named "+t.Arg)
	}
	for i := range udns.Items {
		candidates = append(candidates, Network{UDN: &udns.Items[i]})
	}
	switch len(candidates) {
	case 1:
		return candidates[0], nil
	case 0:
		return Network{}, s.unknown(ctx, t)
	}
	SortNetworks(candidates)
	var ways []string
	for _, c := range candidates {
		if c.Cluster() {
			ways = append(ways, fmt.Sprintf("ClusterUserDefinedNetwork %s (name it with --cluster)", c.Name()))
		} else {
			ways = append(ways, fmt.Sprintf("UserDefinedNetwork %s (name it as %s)", c.Ref(), c.Ref()))
		}
	}
	return Network{}, fmt.Errorf("network %q is ambiguous: it names %s", t.Arg, strings.Join(ways, " and "))
}

func (s *Session) cudn(ctx context.Context, name string) (Network, error) {
	cudn := &ovnkv1.ClusterUserDefinedNetwork{}
	err := s.Client.Get(ctx, client.ObjectKey{Name: name}, cudn)
	if apierrors.IsNotFound(err) && !IsResourceMissing(err) {
		return Network{}, notFound("no ClusterUserDefinedNetwork %q: `kubectl ovnk network list` shows the networks", name)
	}
	if err != nil {
		return Network{}, s.Failed(err, "get ClusterUserDefinedNetwork "+name)
	}
	return Network{CUDN: cudn}, nil
}

func (s *Session) udn(ctx context.Context, ns, name string) (Network, error) {
	udn := &ovnkv1.UserDefinedNetwork{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, udn)
	if apierrors.IsNotFound(err) && !IsResourceMissing(err) {
		if _, nsErr := s.Namespace(ctx, ns); nsErr != nil {
			return Network{}, nsErr
		}
		return Network{}, notFound("no UserDefinedNetwork %q in namespace %s: `kubectl ovnk network list -n %s` shows its networks", name, ns, ns)
	}
	if err != nil {
		return Network{}, s.Failed(err, "get UserDefinedNetwork "+ns+"/"+name)
	}
	return Network{UDN: udn}, nil
}

// unknown is the error for a bare name that names nothing.
func (s *Session) unknown(ctx context.Context, t Target) error {
	if t.Namespace == "" {
		return notFound("no network named %q: no ClusterUserDefinedNetwork and no UserDefinedNetwork in any namespace has that name (`kubectl ovnk network list` shows them)", t.Arg)
	}
	if _, err := s.Namespace(ctx, t.Namespace); err != nil {
		return err
	}
	return notFound("no network named %q: no ClusterUserDefinedNetwork and no UserDefinedNetwork in namespace %s has that name (`kubectl ovnk network list -n %s` shows its networks)", t.Arg, t.Namespace, t.Namespace)
}

// Namespace gets a namespace; one that does not exist is a *NotFoundError.
func (s *Session) Namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	var ns corev1.Namespace
	err := s.Client.Get(ctx, client.ObjectKey{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		return nil, notFound("namespace %q not found: check the name (kubectl get namespaces lists them) or create it with `kubectl create namespace %s`", name, name)
	}
	if err != nil {
		return nil, s.Failed(err, "get namespace "+name)
	}
	return &ns, nil
}

// SortNetworks orders networks as the commands list them: ClusterUserDefinedNetworks
// first, then by NAMESPACE/NAME.
func SortNetworks(nets []Network) {
	slices.SortFunc(nets, func(a, b Network) int {
		if a.Cluster() != b.Cluster() {
			if a.Cluster() {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Ref(), b.Ref())
	})
}
