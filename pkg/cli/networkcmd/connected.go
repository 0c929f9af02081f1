package networkcmd

import (
	"slices"
	"strings"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// connectsByNetwork maps each network's OVN name to the ClusterNetworkConnects that
// select it, sorted by name, as the leader selects (netview.Model). Each connect's
// selectors are read once, however many networks are shown.
func connectsByNetwork(model *netview.Model, cncs []ovnkv1.ClusterNetworkConnect) map[string][]ovnkv1.ClusterNetworkConnect {
	sorted := slices.Clone(cncs)
	slices.SortFunc(sorted, func(a, b ovnkv1.ClusterNetworkConnect) int { return strings.Compare(a.Name, b.Name) })
	out := map[string][]ovnkv1.ClusterNetworkConnect{}
	for i := range sorted {
		for name := range model.Selected(&sorted[i]) {
			out[name] = append(out[name], sorted[i])
		}
	}
	return out
}

func names(cncs []ovnkv1.ClusterNetworkConnect) []string {
	out := make([]string, len(cncs))
	for i, c := range cncs {
		out[i] = c.Name
	}
	return out
}
