package networkcmd

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/usernet"
)

// checkCluster checks the new network against the cluster before it is created: the
// namespaces it serves exist (or, for a selector, a note when none matches yet), and
// no network already serving one of them would make the leader refuse it.
func (o *createOptions) checkCluster(ctx context.Context, s *session, obj client.Object) error {
	n := usernet.Of(obj)
	nsLabels := map[string]map[string]string{}
	if n.Cluster() {
		all, err := s.NamespaceLabels(ctx)
		if err != nil {
			return err
		}
		for _, ns := range o.namespaces {
			if _, ok := all[ns]; !ok {
				return fmt.Errorf("--namespaces %s: namespace %q not found: create it first (kubectl create namespace %s) or leave it out", strings.Join(o.namespaces, ","), ns, ns)
			}
		}
		nsLabels = all
	} else {
		ns, err := s.namespace(ctx, n.Namespace())
		if err != nil {
			return err
		}
		nsLabels[ns.Name] = ns.Labels
	}
	var served []string
	for _, ns := range slices.Sorted(maps.Keys(nsLabels)) {
		if n.Serves(ns, nsLabels[ns]) {
			served = append(served, ns)
		}
	}
	if len(served) == 0 {
		// Nothing to conflict with; say so, as the user may have expected matches.
		_, err := fmt.Fprintf(o.f.ErrOut, "Warning: --namespace-selector %s selects no namespace yet; the network will serve namespaces once they carry matching labels\n", o.namespaceSelector)
		return err
	}
	existing, err := s.networks(ctx, "")
	if err != nil {
		return err
	}
	return conflict(n, served, nsLabels, existing)
}

// conflict mirrors the leader's checks between networks (pkg/agent/leader): networks
// serving a common namespace need subnets that do not overlap, and a namespace has at
// most one primary network. The leader would leave the new network uncreated
// (NetworkCreated False); saying so now spares creating it.
func conflict(n usernet.Network, served []string, nsLabels map[string]map[string]string, existing []usernet.Network) error {
	for _, e := range existing {
		if e.Ref() == n.Ref() && e.Cluster() == n.Cluster() {
			continue // the same object: create reports that it exists
		}
		for _, ns := range served {
			if !e.Serves(ns, nsLabels[ns]) {
				continue
			}
			if n.Role() == ovnkv1.NetworkRolePrimary && e.Role() == ovnkv1.NetworkRolePrimary {
				return fmt.Errorf("--role primary: namespace %s already has a primary network, %s %s, and a namespace has at most one: use --role secondary, or serve other namespaces", ns, e.Kind(), e.Ref())
			}
			for _, mine := range n.Subnets() {
				for _, theirs := range e.Subnets() {
					if overlap(mine, theirs) {
						return fmt.Errorf("--subnet %s: overlaps subnet %s of %s %s, which also serves namespace %s; networks of one namespace need subnets that do not overlap", mine, theirs, e.Kind(), e.Ref(), ns)
					}
				}
			}
		}
	}
	return nil
}

func overlap(a, b string) bool {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	return errA == nil && errB == nil && pa.Overlaps(pb)
}

// completeNamespaceList completes the last namespace of a comma-separated list.
func completeNamespaceList(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		names, directive := f.CompleteNames(func(ctx context.Context, c client.Client) ([]string, error) {
			var list corev1.NamespaceList
			if err := c.List(ctx, &list); err != nil {
				return nil, err
			}
			var out []string
			for _, ns := range list.Items {
				if !strings.Contains(","+done, ","+ns.Name+",") {
					out = append(out, ns.Name)
				}
			}
			return out, nil
		})(cmd, args, last)
		for i := range names {
			names[i] = done + names[i]
		}
		return names, directive
	}
}
