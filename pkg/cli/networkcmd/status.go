package networkcmd

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// readiness is every node's readiness for the network named ovnName, in the leader's
// words.
func readiness(reports []cluster.ZoneReport, ovnName string) []cluster.NodeReadiness {
	out := make([]cluster.NodeReadiness, 0, len(reports))
	for _, z := range reports {
		out = append(out, z.Readiness(ovnName, "network"))
	}
	return out
}

func countReady(rs []cluster.NodeReadiness) int {
	n := 0
	for _, r := range rs {
		if r.Ready {
			n++
		}
	}
	return n
}

// connectedBy returns the ClusterNetworkConnects that select n (OKEP-5224): by the
// labels of a ClusterUserDefinedNetwork, or, for a Primary UserDefinedNetwork, by the
// labels of its namespace (nsLabels maps namespaces to their labels).
func connectedBy(n network, cncs []ovnkv1.ClusterNetworkConnect, nsLabels map[string]map[string]string) []ovnkv1.ClusterNetworkConnect {
	var out []ovnkv1.ClusterNetworkConnect
	for _, cnc := range cncs {
		if slices.ContainsFunc(cnc.Spec.NetworkSelectors, func(s ovnkv1.NetworkSelector) bool { return selects(s, n, nsLabels) }) {
			out = append(out, cnc)
		}
	}
	slices.SortFunc(out, func(a, b ovnkv1.ClusterNetworkConnect) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func selects(s ovnkv1.NetworkSelector, n network, nsLabels map[string]map[string]string) bool {
	switch {
	case s.NetworkSelectionType == ovnkv1.ClusterUserDefinedNetworks && s.ClusterUserDefinedNetworkSelector != nil && n.cluster():
		return matches(&s.ClusterUserDefinedNetworkSelector.NetworkSelector, n.object().GetLabels())
	case s.NetworkSelectionType == ovnkv1.PrimaryUserDefinedNetworks && s.PrimaryUserDefinedNetworkSelector != nil && !n.cluster():
		ns, known := nsLabels[n.namespace()]
		return known && n.role() == ovnkv1.NetworkRolePrimary && matches(&s.PrimaryUserDefinedNetworkSelector.NamespaceSelector, ns)
	}
	return false
}

func matches(sel *metav1.LabelSelector, set map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(set))
}

func names(cncs []ovnkv1.ClusterNetworkConnect) []string {
	out := make([]string, len(cncs))
	for i, c := range cncs {
		out[i] = c.Name
	}
	return out
}
