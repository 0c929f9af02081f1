package netview

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// ErrNoNetworkAPI says the cluster does not serve the k8s.ovn.org network resources.
var ErrNoNetworkAPI = errors.New("the cluster does not serve k8s.ovn.org networks: install the CRDs with `kubectl ovnk install`")

// ListAll lists every ClusterUserDefinedNetwork and UserDefinedNetwork, failing with
// ErrNoNetworkAPI on a cluster without their CRDs.
func ListAll(ctx context.Context, c client.Reader) ([]ovnkv1.ClusterUserDefinedNetwork, []ovnkv1.UserDefinedNetwork, error) {
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	var udns ovnkv1.UserDefinedNetworkList
	for _, l := range []client.ObjectList{&cudns, &udns} {
		if err := c.List(ctx, l); err != nil {
			if meta.IsNoMatchError(err) {
				return nil, nil, ErrNoNetworkAPI
			}
			return nil, nil, fmt.Errorf("list networks: %w", err)
		}
	}
	return cudns.Items, udns.Items, nil
}

// NetworkList is the networks of a list of each kind, with the versions of the two
// lists, from which a watch of them follows on.
type NetworkList struct {
	Networks                []Network
	CUDNVersion, UDNVersion string
}

// ListNetworks lists the ClusterUserDefinedNetworks and the UserDefinedNetworks of ns,
// or of every namespace when ns is "", that opts select (e.g. by label), the
// ClusterUserDefinedNetworks first, each kind in the server's order.
func (s *Session) ListNetworks(ctx context.Context, ns string, opts ...client.ListOption) (NetworkList, error) {
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	if err := s.Client.List(ctx, &cudns, opts...); err != nil {
		return NetworkList{}, s.Failed(err, "list ClusterUserDefinedNetworks")
	}
	var udns ovnkv1.UserDefinedNetworkList
	if err := s.Client.List(ctx, &udns, append(slices.Clip(opts), client.InNamespace(ns))...); err != nil {
		return NetworkList{}, s.Failed(err, "list UserDefinedNetworks")
	}
	return NetworkList{Networks: FromLists(&cudns, &udns), CUDNVersion: cudns.ResourceVersion, UDNVersion: udns.ResourceVersion}, nil
}
