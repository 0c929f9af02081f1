package networkcmd

import (
	"slices"
	"strings"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/usernet"
)

// connectedBy returns the ClusterNetworkConnects that select n, sorted by name
// (nsLabels maps namespaces to their labels).
func connectedBy(n usernet.Network, cncs []ovnkv1.ClusterNetworkConnect, nsLabels map[string]map[string]string) []ovnkv1.ClusterNetworkConnect {
	var out []ovnkv1.ClusterNetworkConnect
	for i := range cncs {
		if n.SelectedBy(&cncs[i], nsLabels) {
			out = append(out, cncs[i])
		}
	}
	slices.SortFunc(out, func(a, b ovnkv1.ClusterNetworkConnect) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names(cncs []ovnkv1.ClusterNetworkConnect) []string {
	out := make([]string, len(cncs))
	for i, c := range cncs {
		out[i] = c.Name
	}
	return out
}
