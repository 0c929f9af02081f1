package tracecmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/trace"
)

// networkNames names the networks of pods' ports as every other command does (a
// ClusterUserDefinedNetwork by its name, a UserDefinedNetwork NAMESPACE/NAME), where
// pods' annotations name them by their network attachments: a ClusterUserDefinedNetwork
// green's pods in namespace blue by blue/green.
type networkNames struct {
	// nads tells the network of an attachment; nil when the networks could not be read.
	nads *cluster.NADNetworks
	// unread says why they could not be read.
	unread string
}

// readNetworkNames lists the ClusterUserDefinedNetworks and UserDefinedNetworks, and
// the namespaces whose labels the former select. Networks that cannot be read (the
// user may not list them, the cluster does not serve them) are no error: the trace
// names networks by their attachments then, and warning says why.
func readNetworkNames(ctx context.Context, c client.Reader) networkNames {
	var cudns []ovnkv1.ClusterUserDefinedNetwork
	var udns []ovnkv1.UserDefinedNetwork
	var namespaces corev1.NamespaceList
	var netErr, nsErr error
	var wg sync.WaitGroup
	wg.Go(func() { cudns, udns, netErr = netview.ListAll(ctx, c) })
	wg.Go(func() { nsErr = c.List(ctx, &namespaces) })
	wg.Wait()
	if err := cmp.Or(netErr, nsErr); err != nil {
		return networkNames{unread: unreadable(err)}
	}
	return networkNames{nads: cluster.NewNADNetworks(ptrs(cudns), ptrs(udns), namespaces.Items)}
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// unreadable says why listing the networks or the namespaces failed, naming the
// permission a forbidden list lacks.
func unreadable(err error) string {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsForbidden(err) && errors.As(err, &status) && status.Status().Details != nil:
		d := status.Status().Details
		resource := d.Kind
		if d.Group != "" {
			resource += "." + d.Group
		}
		return fmt.Sprintf("you may not list %s (ask for list on %s)", resource, resource)
	case errors.Is(err, netview.ErrNoNetworkAPI) || apierrors.IsNotFound(err) && netview.IsResourceMissing(err):
		return "the cluster does not serve " + ovnkv1.GroupName + " networks"
	}
	return err.Error()
}

// userName is the name of the network a pod's attachment nad is on: the network's
// user-facing name, or nad itself when the networks could not be read or nad is of a
// network that no longer exists.
func (n networkNames) userName(nad string) string {
	if n.nads == nil {
		return nad
	}
	return n.nads.UserName(nad)
}

// warning says, once, that ports are named by their attachments because the networks
// could not be read; "" when they could, or when no port is on a user-defined network.
func (n networkNames) warning(ports []trace.PodPort) string {
	if n.nads != nil {
		return ""
	}
	for _, p := range ports {
		if p.NAD != cluster.DefaultNetworkName {
			return fmt.Sprintf("cannot read the user-defined networks: %s; pods' networks are named by their network attachments (NAMESPACE/NAME), not as `kubectl ovnk network list` names them", n.unread)
		}
	}
	return ""
}
