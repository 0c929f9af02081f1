package networkcmd

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// nodeReadiness is one node's report on a network.
type nodeReadiness struct {
	node  string
	ready bool
	// reason says why the node's zone has not programmed the network.
	reason string
}

// zoneReport is one node's ovnk.io/zone-status annotation, read once for every network
// a command shows (a cluster of many networks must not parse it once per network).
type zoneReport struct {
	node     string
	report   map[string]string
	reported bool
	err      error
}

// zoneReports reads every node's report, sorted by node name.
func zoneReports(nodes []corev1.Node) []zoneReport {
	out := make([]zoneReport, 0, len(nodes))
	for _, n := range nodes {
		report, ok, err := cluster.ZoneStatusCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		out = append(out, zoneReport{node: n.Name, report: report, reported: ok, err: err})
	}
	slices.SortFunc(out, func(a, b zoneReport) int { return strings.Compare(a.node, b.node) })
	return out
}

// readiness is every node's readiness for the network named ovnName, with the same
// reading (and wording) as the leader's NetworkReady condition: a node without a
// report, or whose report does not name the network, is not ready.
func readiness(reports []zoneReport, ovnName string) []nodeReadiness {
	out := make([]nodeReadiness, 0, len(reports))
	for _, z := range reports {
		r := nodeReadiness{node: z.node}
		why, named := z.report[ovnName]
		switch {
		case z.err != nil:
			r.reason = fmt.Sprintf("its %s annotation is unreadable: %v", cluster.AnnotationZoneStatus, z.err)
		case !z.reported:
			r.reason = "no zone report yet"
		case !named:
			r.reason = "the zone has not reported on the network yet"
		case why != "":
			r.reason = why
		default:
			r.ready = true
		}
		out = append(out, r)
	}
	return out
}

func countReady(rs []nodeReadiness) int {
	n := 0
	for _, r := range rs {
		if r.ready {
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
