package connectcmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cli/zonereport"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// session is one command's connection to the API server.
type session struct {
	*netview.Session
	zones *zonereport.Reader
}

// snapshot is what the commands read of the cluster: every network, namespace, node
// and connect. Connects select networks by labels, of the networks and of their
// namespaces, so reading them means reading all of these.
type snapshot struct {
	networks []netview.Network // sorted by ref
	nsLabels map[string]map[string]string
	// model is the networks as the leader reads them, for selection.
	model    *netview.Model
	nodes    []corev1.Node // sorted by name
	connects []ovnkv1.ClusterNetworkConnect
	// reports are the nodes' zone reports, read only by the views that show them
	// (withReports): on a cluster run by upstream OVN-Kubernetes they are read from
	// every node's zone.
	reports []cluster.ZoneReport
}

// openSnapshot connects to the cluster f names and reads its snapshot, within ctx.
func openSnapshot(ctx context.Context, f *cmdutil.Factory) (*session, *snapshot, error) {
	conn, err := netview.Open(f, "networks and connects")
	if err != nil {
		return nil, nil, err
	}
	s := &session{Session: conn, zones: zonereport.NewReader(f)}
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s, snap, nil
}

func (s *session) snapshot(ctx context.Context) (*snapshot, error) {
	connects, err := s.Connects(ctx)
	if err != nil {
		return nil, err
	}
	networks, err := s.Networks(ctx, "")
	if err != nil {
		return nil, err
	}
	nsLabels, err := s.NamespaceLabels(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := s.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	sortNetworks(networks)
	slices.SortFunc(nodes, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(connects, func(a, b ovnkv1.ClusterNetworkConnect) int { return strings.Compare(a.Name, b.Name) })
	return &snapshot{networks: networks, nsLabels: nsLabels, model: netview.NewModel(networks, nsLabels), nodes: nodes, connects: connects}, nil
}

// connect returns the connect called name, or nil.
func (snap *snapshot) connect(name string) *ovnkv1.ClusterNetworkConnect {
	for i := range snap.connects {
		if snap.connects[i].Name == name {
			return &snap.connects[i]
		}
	}
	return nil
}

// withReports reads the nodes' zone reports into snap, and returns it.
func (s *session) withReports(ctx context.Context, snap *snapshot) *snapshot {
	snap.reports = s.zones.Read(ctx, snap.nodes, snap.connects)
	return snap
}

// allocation is what the leader recorded on cnc, its blocks keyed to nets by their ids
// as netview.Network.IDs reads them: on a cluster run by upstream OVN-Kubernetes they
// are on the networks' NADs, listed here once. What keeps ids from being read (NADs
// the user may not list, a malformed annotation) is a warning on errOut, and those
// networks show no blocks.
func (s *session) allocation(ctx context.Context, errOut io.Writer, cnc *ovnkv1.ClusterNetworkConnect, nets []netview.Network) (allocation, error) {
	var nads []*nadv1.NetworkAttachmentDefinition
	if len(nets) > 0 {
		listed, warning, err := netview.ListNADs(ctx, s.Client)
		if err != nil {
			return allocation{}, s.Failed(err, "read the networks' ids")
		}
		if warning != "" {
			fmt.Fprintf(errOut, "Warning: %s\n", warning)
		}
		nads = listed
	}
	keys := map[cluster.ObjectRef]string{}
	for _, n := range nets {
		key, err := ownerKey(n, nads)
		switch {
		case err != nil:
			fmt.Fprintf(errOut, "Warning: the blocks of network %s are not shown: %v\n", n.Ref(), err)
		case key != "":
			keys[n.Owner()] = key
		}
	}
	return allocationOf(cnc, keys), nil
}
