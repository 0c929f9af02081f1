package netview

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// ListNADs lists every NetworkAttachmentDefinition: upstream OVN-Kubernetes writes a
// network's id and tunnel keys there, not on the network object. A cluster that does
// not serve NADs, or a user who may not list them, just has none; warning then says
// so in one line (empty when they were listed). Any other failure is an error.
func ListNADs(ctx context.Context, c client.Reader) (nads []*nadv1.NetworkAttachmentDefinition, warning string, err error) {
	var list nadv1.NetworkAttachmentDefinitionList
	switch err := c.List(ctx, &list); {
	case err == nil:
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && IsResourceMissing(err):
		return nil, "", nil // no NAD CRD: no network keeps its ids on a NAD
	case apierrors.IsForbidden(err):
		return nil, fmt.Sprintf("cannot list %s.%s, so the network ids upstream OVN-Kubernetes keeps there are not read (ask for list on them): %v",
			nadv1.Resource, nadv1.GroupName, err), nil
	default:
		return nil, "", fmt.Errorf("list %s.%s: %w", nadv1.Resource, nadv1.GroupName, err)
	}
	nads = make([]*nadv1.NetworkAttachmentDefinition, len(list.Items))
	for i := range list.Items {
		nads[i] = &list.Items[i]
	}
	return nads, "", nil
}

// IDs are the network's id and tunnel keys by cluster.ReadNetworkIDs: its object's own,
// or those upstream annotated on its NADs (nads may hold any NADs; only the network's
// count). ok is false when neither has an id yet.
func (n Network) IDs(nads []*nadv1.NetworkAttachmentDefinition) (ids cluster.NetworkIDs, ok bool, err error) {
	return cluster.ReadNetworkIDs(n.Owner(), n.Object(), nads)
}

// WithIDs is n as pkg/cluster builds networks from it: when the object has no network id
// and its NADs do (IDs), a copy of it annotated with them as the leader annotates
// adopted ids, so that cluster.Build serves the network upstream allocated. Otherwise n
// itself. The error names the NAD whose ids cannot be read; n is returned with it.
func (n Network) WithIDs(nads []*nadv1.NetworkAttachmentDefinition) (Network, error) {
	ids, ok, err := n.IDs(nads)
	if err != nil || !ok || ids.NAD == "" {
		return n, err
	}
	annotations := map[string]string{cluster.AnnotationNetworkID: strconv.Itoa(ids.ID)}
	if ids.HasTunnelKeys {
		keys, err := cluster.TunnelKeysCodec.Format(ids.TunnelKeys)
		if err != nil {
			return n, fmt.Errorf("NetworkAttachmentDefinition %s: %w", ids.NAD, err)
		}
		annotations[cluster.AnnotationTunnelKeys] = keys
	}
	var out Network
	if n.Cluster() {
		out.CUDN = n.CUDN.DeepCopy()
	} else {
		out.UDN = n.UDN.DeepCopy()
	}
	obj := out.Object()
	all := obj.GetAnnotations()
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, annotations)
	obj.SetAnnotations(all)
	return out, nil
}
