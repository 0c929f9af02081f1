package networkcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// checkCluster checks the new network against the cluster before it is created: the
// namespaces it serves exist (or, for a selector, a note when none matches yet), and
// neither the cluster's own ranges nor a network already serving one of them would
// make the leader refuse it.
func (o *createOptions) checkCluster(ctx context.Context, s *session, obj client.Object) error {
	n := netview.Of(obj)
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
	served, err := n.Namespaces(nsLabels)
	if err != nil {
		return fmt.Errorf("--namespace-selector %s: %w", o.namespaceSelector, err)
	}
	if len(served) == 0 {
		// Say so, as the user may have expected matches. No other network can conflict
		// then, but the cluster's own ranges still apply.
		fmt.Fprintf(o.f.ErrOut, "Warning: --namespace-selector %s selects no namespace yet; the network will serve namespaces once they carry matching labels\n", o.namespaceSelector)
	}
	reserved, fallback, err := s.ReservedRanges(ctx, netview.RangeSources{AgentNamespace: o.f.Settings.AgentNamespace})
	if err != nil {
		return err
	}
	if fallback != "" {
		fmt.Fprintf(o.f.ErrOut, "Warning: %s\n", fallback)
	}
	existing, err := s.networks(ctx, "")
	if err != nil {
		return err
	}
	// Which networks hold an id decides conflicts between them, and upstream
	// OVN-Kubernetes keeps a network's id on its NADs.
	nads, warning, err := netview.ListNADs(ctx, s.Client)
	if err != nil {
		return s.Failed(err, "read the networks' ids")
	}
	if warning != "" {
		fmt.Fprintf(o.f.ErrOut, "Warning: %s\n", warning)
	}
	if err := conflict(n, nsLabels, existing, nads, reserved); err != nil {
		return err
	}
	if n.Role() == ovnkv1.NetworkRolePrimary {
		for _, w := range primaryWarnings(served, nsLabels) {
			fmt.Fprintf(o.f.ErrOut, "Warning: %s\n", w)
		}
	}
	return nil
}

// systemNamespaces run the cluster's own pods.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem}

// primaryWarnings are the warnings about a primary network serving the namespaces
// served, which the leader accepts but which are almost surely mistakes: namespaces
// of the cluster's own pods, and namespaces without cluster.LabelPrimaryUDN, where
// pods already running keep the default network and OVN-Kubernetes serves no primary
// network.
func primaryWarnings(served []string, nsLabels map[string]map[string]string) []string {
	var system, unlabelled []string
	for _, ns := range served {
		if slices.Contains(systemNamespaces, ns) {
			system = append(system, ns)
		}
		if _, ok := nsLabels[ns][cluster.LabelPrimaryUDN]; !ok {
			unlabelled = append(unlabelled, ns)
		}
	}
	var out []string
	if len(system) > 0 {
		out = append(out, fmt.Sprintf("namespace %s runs the cluster's own pods, and every pod created there from now on gets this network as its primary network instead of the default network: serve namespaces of your own",
			strings.Join(system, ", ")))
	}
	if len(unlabelled) > 0 {
		out = append(out, fmt.Sprintf("namespace %s lacks the label %s: pods already running there keep the default network, and OVN-Kubernetes serves a primary network only in namespaces created with the label: create the network's namespaces with it",
			strings.Join(unlabelled, ", "), cluster.LabelPrimaryUDN))
	}
	return out
}

// conflict refuses the new network n when the leader would leave it uncreated
// (NetworkCreated False) next to the existing networks, saying so now rather than
// after creating it. The leader's checks decide (cluster.AcceptNetworks, over the
// networks the model reads from their specs, in seniority and n last as the newest,
// and the cluster's reserved ranges): no two networks have one OVN name, a subnet can
// carry pods (of the cluster's IP families, not a special-purpose range, with room for
// pod addresses), a network's subnets and join subnets stay out of
// the cluster's own ranges, its subnets out of its own join and transit subnets,
// networks serving a common namespace need subnets that do not overlap, and a
// namespace has at most one primary network. nsLabels are the labels of every
// namespace n serves; nads are the cluster's NADs, where the existing networks' ids
// may be (seniority).
func conflict(n netview.Network, nsLabels map[string]map[string]string, existing []netview.Network, nads []*nadv1.NetworkAttachmentDefinition, reserved []cluster.ReservedRange) error {
	var others []netview.Network
	for _, e := range existing {
		if e.Owner() != n.Owner() { // the same object: create reports that it exists
			others = append(others, e)
		}
	}
	model := netview.NewModel(append(others, n), nsLabels)
	mine, err := model.Network(n)
	var hostSubnet *cluster.HostSubnetError
	switch {
	case errors.As(err, &hostSubnet):
		return hostSubnetRefusal(hostSubnet)
	case err != nil:
		return fmt.Errorf("%w: the leader would not create the network, so change the flag that sets it (--subnet, --host-subnet or --join-subnet)", err)
	}
	ordered, byName := seniority(model, others, nads)
	refused := cluster.AcceptNetworks(append(ordered, mine), reserved)
	var (
		clash    *cluster.ReservedOverlapError
		subnets  *cluster.SubnetConflictError
		primary  *cluster.PrimaryConflictError
		ovnName  *cluster.OVNNameConflictError
		unusable *cluster.UnusableSubnetError
	)
	switch err := refused[mine]; {
	case err == nil:
		return nil
	case errors.As(err, &ovnName):
		e := byName[ovnName.Other]
		return fmt.Errorf("NAME %s: OVN would name it %s, as it names %s %s (OVN names write \"-\" as \".\"), and the two would share their OVN rows: choose another NAME",
			n.Name(), ovnName.OVNName, e.Kind(), e.Ref())
	case errors.As(err, &unusable):
		return fmt.Errorf("--subnet %s: %s: %s", unusable.Subnet, unusable.Problem, unusable.Fix)
	case errors.As(err, &primary):
		e := byName[primary.Other]
		return fmt.Errorf("--role primary: namespace %s already has a primary network, %s %s, and a namespace has at most one: use --role secondary, or serve other namespaces", primary.Namespace, e.Kind(), e.Ref())
	case errors.As(err, &subnets):
		e := byName[subnets.Other]
		return fmt.Errorf("--subnet %s: overlaps subnet %s of %s %s, which also serves namespace %s; networks of one namespace need subnets that do not overlap", subnets.Subnet, subnets.OtherSubnet, e.Kind(), e.Ref(), subnets.Namespace)
	case errors.As(err, &clash) && clash.Join && len(n.JoinSubnets()) > 0:
		return fmt.Errorf("--join-subnet %s: overlaps %s, one of the cluster's own ranges: choose another --join-subnet", clash.Subnet, clash.Range.What)
	case errors.As(err, &clash) && clash.Join:
		return fmt.Errorf("the default join subnet %s of user-defined networks overlaps %s, one of the cluster's own ranges: give the network its own with --join-subnet", clash.Subnet, clash.Range.What)
	case errors.As(err, &clash) && !clash.Own:
		return fmt.Errorf("--subnet %s: overlaps %s, one of the cluster's own ranges: choose another --subnet", clash.Subnet, clash.Range.What)
	case errors.As(err, &clash):
		kind, fix := "transit", ""
		if slices.Contains(mine.JoinSubnets, clash.Range.Prefix) {
			kind, fix = "join", ", or a --join-subnet outside it"
		}
		return fmt.Errorf("--subnet %s: overlaps the network's %s subnet %s, where its routers have their addresses: choose another --subnet%s", clash.Subnet, kind, clash.Range.Prefix, fix)
	default:
		return err
	}
}

// hostSubnetRefusal is e in the flags' words: a Layer3 --subnet that cannot hold its
// nodes' blocks, and the host subnets or the subnets that would work.
func hostSubnetRefusal(e *cluster.HostSubnetError) error {
	if min, max := e.HostSubnets(); min <= max {
		blocks := fmt.Sprintf("from /%d to /%d", min, max)
		if min == max {
			blocks = fmt.Sprintf("of /%d", min)
		}
		return fmt.Errorf("--subnet %s: cannot hold a node's block of /%d: give each node a block %s (--host-subnet), or use a larger --subnet",
			e.Subnet, e.HostSubnet, blocks)
	}
	return fmt.Errorf("--subnet %s: cannot hold a node's block of /%d, nor any block with an address for pods: use a larger --subnet, of at most /%d",
		e.Subnet, e.HostSubnet, e.LongestSubnet())
}

// seniority orders the valid networks of others as the leader weighs them in a
// conflict (cluster.CompareSeniority: those that hold a network id first, then the
// older, then by name), and indexes them by network name. A network holds the id
// netview.Network.IDs reads: its object's, or the one upstream's cluster manager wrote
// on its NADs (among nads), which the leader adopts. An id that cannot be read is not
// held, as the leader reserves none for it.
func seniority(model *netview.Model, others []netview.Network, nads []*nadv1.NetworkAttachmentDefinition) ([]*cluster.Network, map[string]netview.Network) {
	type entry struct {
		net *cluster.Network
		obj netview.Network
	}
	var entries []entry
	byName := map[string]netview.Network{}
	for _, o := range others {
		if cn, err := model.Network(o); err == nil {
			entries = append(entries, entry{cn, o})
			byName[cn.Name] = o
		}
	}
	holdsID := func(o netview.Network) bool {
		_, ok, err := o.IDs(nads)
		return ok && err == nil
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		return cmp.Or(
			cluster.CompareSeniority(holdsID(a.obj), a.obj.Object().GetCreationTimestamp().Time, holdsID(b.obj), b.obj.Object().GetCreationTimestamp().Time),
			cmp.Compare(a.net.Name, b.net.Name))
	})
	ordered := make([]*cluster.Network, len(entries))
	for i, e := range entries {
		ordered[i] = e.net
	}
	return ordered, byName
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
