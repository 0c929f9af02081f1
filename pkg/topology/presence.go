package topology

import (
	"fmt"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// NotProgrammed says why the zone whose rows idx indexes has not programmed network n
// for node, "" when it has. It is how a zone's state is judged where no agent reports
// on it (a cluster run by upstream OVN-Kubernetes): the switch the node's pods attach
// to must be there; for a Layer3 network, and a primary Layer2 one, so must the router
// that switch routes through; and each of pods (the node's pods on n: scheduled there,
// not finished) must have its port on that switch. The names are the ones this package
// gives the rows, which are upstream's.
func NotProgrammed(idx *rows.Index, n *cluster.Network, node string, pods []*cluster.Pod) string {
	sw, routers := coreRows(n, node)
	if idx.Switch(sw) == nil {
		return fmt.Sprintf("its zone has no switch %s", sw)
	}
	if len(routers) > 0 && !anyRouter(idx, routers) {
		if len(routers) == 1 {
			return fmt.Sprintf("its zone has no router %s", routers[0])
		}
		return fmt.Sprintf("its zone has neither router %s nor %s", routers[0], routers[1])
	}
	// Tick the pods' ports off the switch's: a switch may hold a port for every pod
	// of the network in the cluster, the node's are few.
	want := make(map[string]bool, len(pods))
	for _, p := range pods {
		want[PodPortName(n, p)] = true
	}
	for _, key := range idx.Switch(sw).Ports {
		if len(want) == 0 {
			break
		}
		if lsp := idx.SwitchPorts[key]; lsp != nil {
			delete(want, lsp.Name)
		}
	}
	var missing []string
	for _, p := range pods {
		if len(want) > 0 && want[PodPortName(n, p)] {
			missing = append(missing, p.Namespace+"/"+p.Name)
		}
	}
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("pod %s has no port on switch %s", missing[0], sw)
	default:
		return fmt.Sprintf("%d pods have no port on switch %s, %s among them", len(missing), sw, missing[0])
	}
}

// HasNetwork reports whether the zone holds any of the switch and routers
// NotProgrammed looks for: a zone that holds none has not rendered n for node at all.
func HasNetwork(idx *rows.Index, n *cluster.Network, node string) bool {
	sw, routers := coreRows(n, node)
	return idx.Switch(sw) != nil || anyRouter(idx, routers)
}

// coreRows names the switch node's pods attach to on n and the routers, any one of
// which that switch routes through (none for a secondary Layer2 network).
func coreRows(n *cluster.Network, node string) (sw string, routers []string) {
	names := namesOf(n)
	switch {
	case n.Topology == cluster.Layer2 && n.Role == cluster.Primary:
		// A node on the legacy topology routes through its gateway router, one
		// upgraded through the transit router (OKEP-5094).
		return names.Layer2Switch(), []string{names.TransitRouter(), names.GatewayRouter(node)}
	case n.Topology == cluster.Layer2:
		return names.Layer2Switch(), nil
	default:
		return names.NodeSwitch(node), []string{names.ClusterRouter()}
	}
}

// ConnectNotProgrammed says why the zone has not programmed the ClusterNetworkConnect
// cnc, "" when it has: its connect router must be there.
func ConnectNotProgrammed(idx *rows.Index, cnc string) string {
	if name := ConnectRouterName(cnc); idx.Router(name) == nil {
		return "its zone has no router " + name
	}
	return ""
}

func anyRouter(idx *rows.Index, names []string) bool {
	for _, name := range names {
		if idx.Router(name) != nil {
			return true
		}
	}
	return false
}
