package networkcmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// maxNamedPods bounds how many pods a refused delete names.
const maxNamedPods = 3

// deleteOptions are the flags and dependencies of `network delete`.
type deleteOptions struct {
	networkArg
	force bool
}

func newDeleteCmd(f *cmdutil.Factory) *cobra.Command {
	o := &deleteOptions{}
	cmd := &cobra.Command{
		Use:     "delete NAME | NAMESPACE/NAME",
		Aliases: []string{"rm"},
		Short:   "Delete a network that no pod uses (--force: even if pods use it)",
		Long: `Delete a network. While pods use it the delete is refused and the first of them are
named: their interfaces on the network would be cut. Pods use a Primary network when
they run in a namespace it serves (its own namespace for a UserDefinedNetwork, the
selected ones for a ClusterUserDefinedNetwork), and a Secondary network when their
k8s.ovn.org/pod-networks annotation has an interface on it. Finished and
host-network pods do not count.

Networks are named as for describe: NAMESPACE/NAME or NAME with -n for a
UserDefinedNetwork, NAME (with --cluster if ambiguous) for a ClusterUserDefinedNetwork.`,
		Example: `  # Delete a namespace's network once its pods are gone
  kubectl ovnk network delete blue/tenant-net

  # Delete a cluster network even though pods still use it
  kubectl ovnk network delete shared --cluster --force`,
		ValidArgsFunction: f.CompleteNames(completeNetworks(f)),
		RunE:              cmdutil.RunE(f, o),
	}
	o.bind(cmd)
	cmd.Flags().BoolVar(&o.force, "force", false, "delete the network even while pods use it")
	return cmd
}

// Run deletes the network, unless pods use it and --force is not given.
func (o *deleteOptions) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	s, n, err := o.open(ctx)
	if err != nil {
		return err
	}
	if !o.force {
		pods, err := s.podsUsing(ctx, n)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			return fmt.Errorf("network %s is in use by %s: delete them first, or pass --force to delete the network anyway", n.Ref(), podList(pods))
		}
	}
	err = s.Client.Delete(ctx, n.Object(), client.Preconditions{UID: ptr(n.Object().GetUID())})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("network %s was deleted by someone else meanwhile", n.Ref())
	}
	if err != nil {
		return s.Failed(err, "delete network "+n.Ref())
	}
	if n.Cluster() {
		_, err = fmt.Fprintf(o.f.Out, "%s %q deleted\n", n.ResourceType(), n.Name())
	} else {
		_, err = fmt.Fprintf(o.f.Out, "%s %q deleted from %s namespace\n", n.ResourceType(), n.Name(), n.Namespace())
	}
	return err
}

func ptr[T any](v T) *T { return &v }

// podList names the first pods and counts the rest: "2 pods (a/x, a/y)".
func podList(pods []string) string {
	shown := pods[:min(len(pods), maxNamedPods)]
	text := strings.Join(shown, ", ")
	if more := len(pods) - len(shown); more > 0 {
		text += fmt.Sprintf(" and %d more", more)
	}
	noun := "pods"
	if len(pods) == 1 {
		noun = "pod"
	}
	return fmt.Sprintf("%d %s (%s)", len(pods), noun, text)
}

// podsUsing returns, as sorted NAMESPACE/NAME, the pods that use the network: for a
// Primary network every pod of the namespaces it serves, for a Secondary network the
// pods with an interface on it in k8s.ovn.org/pod-networks. Finished and host-network
// pods have no interface on any pod network and do not count.
func (s *session) podsUsing(ctx context.Context, n netview.Network) ([]string, error) {
	nsLabels := map[string]map[string]string{}
	if n.Cluster() {
		all, err := s.NamespaceLabels(ctx)
		if err != nil {
			return nil, err
		}
		nsLabels = all
	}
	served := map[string]bool{}
	// A selector that does not parse serves no namespace.
	names, _ := n.Namespaces(nsLabels)
	for _, ns := range names {
		served[ns] = true
	}
	uses, err := s.usage(ctx, n, served)
	if err != nil {
		return nil, err
	}
	// A secondary network's pods may live anywhere; a primary network's in its own
	// namespace, which is all a UserDefinedNetwork needs to list.
	listNS := ""
	if !n.Cluster() && n.Role() == ovnkv1.NetworkRolePrimary {
		listNS = n.Namespace()
	}
	var pods corev1.PodList
	if err := s.Client.List(ctx, &pods, client.InNamespace(listNS)); err != nil {
		return nil, s.Failed(err, "list pods")
	}
	var out []string
	for _, p := range pods.Items {
		if p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if uses(&p) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// usage returns the test of whether a pod uses n, given the namespaces n serves.
func (s *session) usage(ctx context.Context, n netview.Network, served map[string]bool) (func(*corev1.Pod) bool, error) {
	if n.Role() == ovnkv1.NetworkRolePrimary {
		return func(p *corev1.Pod) bool { return served[p.Namespace] }, nil
	}
	// A pod names a network by NAD name "<namespace>/<name>": a UserDefinedNetwork's
	// own, or a ClusterUserDefinedNetwork's in a namespace it serves where no
	// UserDefinedNetwork has that name (the UserDefinedNetwork wins, as in pkg/cluster).
	shadowed := map[string]bool{}
	if n.Cluster() {
		var udns ovnkv1.UserDefinedNetworkList
		err := s.Client.List(ctx, &udns, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", n.Name())})
		if err != nil {
			return nil, s.Failed(err, "list UserDefinedNetworks named "+n.Name())
		}
		for _, u := range udns.Items {
			shadowed[u.Namespace] = true
		}
	}
	return func(p *corev1.Pod) bool {
		ifaces, _, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, p.Annotations)
		if err != nil {
			// An annotation nobody can read wires no interface the network could cut.
			return false
		}
		for nad := range ifaces {
			ns, name, ok := strings.Cut(nad, "/")
			if !ok || name != n.Name() {
				continue
			}
			if !n.Cluster() && ns == n.Namespace() || n.Cluster() && served[ns] && !shadowed[ns] {
				return true
			}
		}
		return false
	}, nil
}
