package leader

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// gatewayOwner names a node as the owner of its gateway router ports' tunnel ids on
// the Layer2 networks. It cannot be taken for a pod owner, which ends in "(uid …)".
func gatewayOwner(node string) string { return "node/" + node }

// gatewayNetworks are the networks whose nodes get a gateway port tunnel id: the
// usable primary Layer2 networks, by name.
func gatewayNetworks(nets *networks) []string {
	var out []string
	for _, e := range nets.entries {
		if e.usable() && e.net.Topology == cluster.Layer2 && e.net.Role == cluster.Primary && nets.byName[e.name] == e {
			out = append(out, e.name)
		}
	}
	return out
}

// reserveGateways reserves the gateway port tunnel ids the nodes' annotations hold. The
// ids share each network's pool with the pods' ports, as they share the network's
// switch; the pods' are reserved first, so should a hand edit make a node's id a pod's
// too, the pod, which may hold connections, keeps it and the node gets another.
func (p *planner) reserveGateways(nodes []*corev1.Node, networks []string) {
	for _, n := range nodes {
		ids, _ := cluster.GatewayTunnelIDsOf(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations) // bad entries are allocated again
		for _, network := range networks {
			if id, ok := ids[network]; ok {
				p.pods.reserveTunnelID(gatewayOwner(n.Name), network, id)
			}
		}
	}
}

// gatewayChanges gives every node a gateway port tunnel id on every primary Layer2
// network (the one it holds, else the lowest free) and plans the node's
// k8s.ovn.org/udn-layer2-node-gateway-router-lrp-tunnel-ids. Entries of networks that
// are gone are dropped, those of networks not usable yet kept as they are; a network
// whose pool is full is left out with a warning.
func (p *planner) gatewayChanges(nodes []*corev1.Node, nets *networks, networks []string, out *plan) {
	for _, n := range nodes {
		owner := gatewayOwner(n.Name)
		_, ok := n.Annotations[cluster.AnnotationLayer2GatewayTunnelIDs]
		have, err := cluster.GatewayTunnelIDsOf(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		want := map[string]int{}
		for network, id := range have {
			if nets.byName[network] != nil && !slices.Contains(networks, network) {
				want[network] = id
			}
		}
		keep := &podHolding{addrs: map[poolKey]bool{}, tunnelIDs: map[string]bool{}}
		for _, network := range networks {
			id, err := p.pods.allocTunnelID(owner, network)
			if err != nil {
				out.warnings = append(out.warnings, warning{obj: n, reason: "TunnelIDsExhausted", action: "AllocateGatewayTunnelID",
					message: "no tunnel id for the node's gateway router port: " + err.Error()})
				continue
			}
			want[network] = id
			keep.tunnelIDs[network] = true
		}
		p.pods.keepOnly(owner, keep)
		changes := map[string]*string{}
		switch {
		case len(want) == 0:
			removeIfSet(changes, n.Annotations, cluster.AnnotationLayer2GatewayTunnelIDs)
		case !ok || err != nil || !maps.Equal(have, want):
			if v, err := cluster.Layer2GatewayTunnelIDsCodec.Format(want); err == nil {
				changes[cluster.AnnotationLayer2GatewayTunnelIDs] = &v
			}
		}
		if len(changes) > 0 {
			out.annotations = append(out.annotations, annotationWrite{obj: n, changes: changes})
		}
	}
}
