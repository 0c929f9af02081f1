package networkcmd

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cli/zonereport"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// session is one command's connection to the API server.
type session struct {
	*netview.Session
	reports *zonereport.Reader
}

func connect(f *cmdutil.Factory) (*session, error) {
	s, err := netview.Open(f, "networks")
	if err != nil {
		return nil, err
	}
	return &session{Session: s, reports: zonereport.NewReader(f)}, nil
}

// networks lists the ClusterUserDefinedNetworks and the UserDefinedNetworks of ns, or
// of every namespace when ns is "", sorted as sortNetworks does.
func (s *session) networks(ctx context.Context, ns string) ([]netview.Network, error) {
	nets, err := s.Networks(ctx, ns)
	if err != nil {
		return nil, err
	}
	sortNetworks(nets)
	return nets, nil
}

// sortNetworks orders cluster networks first, then namespaced ones by namespace/name.
func sortNetworks(nets []netview.Network) { netview.SortNetworks(nets) }

// nodesAndConnects reads the nodes, whose zone reports the views show, and the
// connects that may select a network.
func (s *session) nodesAndConnects(ctx context.Context) ([]corev1.Node, []ovnkv1.ClusterNetworkConnect, error) {
	nodes, err := s.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	cncs, err := s.Connects(ctx)
	if err != nil {
		return nil, nil, err
	}
	return nodes, cncs, nil
}

// zoneReports are the nodes' zone reports (zonereport.Read: the agents', or on a
// cluster run by upstream OVN-Kubernetes read from the zones). A view reads them after
// everything else: reading the zones may take the longest.
func (s *session) zoneReports(ctx context.Context, nodes []corev1.Node, cncs []ovnkv1.ClusterNetworkConnect) []cluster.ZoneReport {
	return s.reports.Read(ctx, nodes, cncs)
}

// namespace gets a namespace, with a one-line error when it does not exist.
func (s *session) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	return s.Namespace(ctx, name)
}
