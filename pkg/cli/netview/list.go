package netview

import (
	"context"
	"errors"
	"fmt"

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
