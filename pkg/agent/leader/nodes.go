package leader

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// networkSubnets allocates the node subnets of one Layer3 network: one allocator per IP
// family, in the order the network lists its subnets' families.
type networkSubnets struct {
	spec     []cluster.Subnet
	families []familySubnets
	// held are the nodes holding subnets, so that the ones gone are released.
	held map[string]bool
}

// familySubnets is the allocator of one IP family's subnets.
type familySubnets struct {
	is4 bool
	*alloc.SubnetAllocator
}

// newNetworkSubnets builds the allocators of a network's subnets.
func newNetworkSubnets(spec []cluster.Subnet) (*networkSubnets, error) {
	ns := &networkSubnets{spec: spec, held: map[string]bool{}}
	for _, s := range spec {
		if a := ns.family(s.CIDR); a != nil {
			if err := a.AddCIDR(s.CIDR, s.HostSubnet); err != nil {
				return nil, err
			}
			continue
		}
		a, err := alloc.NewSubnetAllocator(s.CIDR, s.HostSubnet)
		if err != nil {
			return nil, err
		}
		ns.families = append(ns.families, familySubnets{s.CIDR.Addr().Is4(), a})
	}
	return ns, nil
}

// family returns the allocator of p's IP family, or nil.
func (ns *networkSubnets) family(p netip.Prefix) *alloc.SubnetAllocator {
	for _, f := range ns.families {
		if f.is4 == p.Addr().Is4() {
			return f.SubnetAllocator
		}
	}
	return nil
}

// release frees the subnets a node holds.
func (ns *networkSubnets) release(node string) {
	for _, a := range ns.families {
		a.Release(node)
	}
	delete(ns.held, node)
}

// subnetNetwork is a network whose nodes get subnets in this pass.
type subnetNetwork struct {
	name    string
	subnets *networkSubnets
	// entry is nil for the default network.
	entry *netEntry
	// allocate is false for a network that keeps the subnets its nodes hold but gets no
	// new ones, because it is not usable (see netEntry.usable).
	allocate bool
	// failed are the nodes that got no subnet, and why the first did not.
	failed   []string
	firstErr error
}

// subnetNetworks returns the default network and every Layer3 primary network that
// holds a persisted id, sorted by name, and keeps the planner's allocators in step: new
// ones for new networks, none for networks gone.
func (p *planner) subnetNetworks(nets *networks) []*subnetNetwork {
	out := []*subnetNetwork{{name: cluster.DefaultNetworkName, subnets: p.subnets[cluster.DefaultNetworkName], allocate: true}}
	for _, e := range nets.entries {
		if e.net == nil || e.net.Topology != cluster.Layer3 || e.net.Role != cluster.Primary || !e.hasID {
			continue
		}
		ns := p.subnets[e.name]
		if ns == nil || !slices.Equal(ns.spec, e.net.Subnets) {
			var err error
			if ns, err = newNetworkSubnets(e.net.Subnets); err != nil {
				e.subnetProblem = &problem{ReasonInvalidSpec, fmt.Sprintf("network %q: %v", e.name, err)}
				continue
			}
			p.subnets[e.name] = ns
		}
		out = append(out, &subnetNetwork{name: e.name, subnets: ns, entry: e, allocate: e.usable()})
	}
	keep := map[string]bool{}
	for _, sn := range out {
		keep[sn.name] = true
	}
	maps.DeleteFunc(p.subnets, func(name string, _ *networkSubnets) bool { return !keep[name] })
	return out
}

// planNodes allocates node ids and node subnets and plans the nodes' annotations.
func (p *planner) planNodes(s *snapshot, nets *networks, out *plan) {
	present := map[string]bool{}
	for _, n := range s.nodes {
		present[n.Name] = true
	}
	sns := p.subnetNetworks(nets)
	for name := range p.heldNodes {
		if !present[name] {
			p.nodeIDs.Release(name)
			delete(p.heldNodes, name)
		}
	}
	for _, sn := range sns {
		for name := range sn.subnets.held {
			if !present[name] {
				sn.subnets.release(name)
			}
		}
	}
	kept := map[string]map[string][]netip.Prefix{} // node -> network -> reserved subnets
	for _, n := range s.nodes {
		kept[n.Name] = p.reserveNode(n, sns)
	}
	for _, n := range s.nodes {
		if changes := p.nodeChanges(n, sns, kept[n.Name], out); len(changes) > 0 {
			out.annotations = append(out.annotations, annotationWrite{obj: n, changes: changes})
		}
	}
	for _, sn := range sns {
		if len(sn.failed) > 0 && sn.entry != nil {
			sn.entry.subnetProblem = &problem{ReasonSubnetsExhausted, fmt.Sprintf("%s of network %q: %v",
				nodesWithout(sn.failed), sn.name, sn.firstErr)}
		}
	}
}

// nodesWithout names the nodes without a subnet, at most three of them.
func nodesWithout(nodes []string) string {
	const shown = 3
	if len(nodes) == 1 {
		return "node " + nodes[0] + " has no subnet"
	}
	s := "nodes " + strings.Join(nodes[:min(shown, len(nodes))], ", ")
	if len(nodes) > shown {
		s += fmt.Sprintf(" and %d more", len(nodes)-shown)
	}
	return s + " have no subnet"
}

// reserveNode reserves a node's persisted id and subnets, and returns the subnets it
// now holds, by network.
func (p *planner) reserveNode(n *corev1.Node, sns []*subnetNetwork) map[string][]netip.Prefix {
	ref := cluster.ObjectRef{Kind: "Node", Name: n.Name}
	if id, ok, err := cluster.NodeIDCodec.Lookup(ref, n.Annotations); ok && err == nil {
		if reserveOrRelease(func() error { return p.nodeIDs.Reserve(n.Name, id) }, func() { p.nodeIDs.Release(n.Name) }) {
			p.heldNodes[n.Name] = true
		}
	}
	persisted, _, err := cluster.NodeSubnetsCodec.Lookup(ref, n.Annotations)
	if err != nil {
		return nil // malformed: every subnet is allocated again
	}
	kept := map[string][]netip.Prefix{}
	for _, sn := range sns {
		for _, pfx := range persisted[sn.name] {
			a := sn.subnets.family(pfx)
			if a == nil {
				continue
			}
			if reserveOrRelease(func() error { return a.Reserve(n.Name, pfx) }, func() { a.Release(n.Name) }) {
				sn.subnets.held[n.Name] = true
				kept[sn.name] = append(kept[sn.name], pfx)
			}
		}
	}
	return kept
}

// nodeChanges allocates what the node lacks and returns the annotations to change.
func (p *planner) nodeChanges(n *corev1.Node, sns []*subnetNetwork, kept map[string][]netip.Prefix, out *plan) map[string]*string {
	changes := map[string]*string{}
	id, err := p.nodeIDs.Allocate(n.Name)
	if err != nil {
		out.warnings = append(out.warnings, warning{obj: n, reason: "NodeIDsExhausted", action: "AllocateNodeID", message: err.Error()})
		removeIfSet(changes, n.Annotations, cluster.AnnotationNodeID)
		removeIfSet(changes, n.Annotations, cluster.AnnotationNodeTransitSwitchPortIfAddr)
	} else {
		p.heldNodes[n.Name] = true
		setIfChanged(changes, n.Annotations, cluster.AnnotationNodeID, strconv.Itoa(id))
		p.transitChanges(n, id, changes, out)
	}

	want := map[string][]netip.Prefix{}
	for _, sn := range sns {
		if !sn.allocate {
			if len(kept[sn.name]) > 0 {
				want[sn.name] = kept[sn.name]
			}
			continue
		}
		var got []netip.Prefix
		for _, a := range sn.subnets.families {
			pfx, err := a.Allocate(n.Name)
			if err != nil {
				sn.failed = append(sn.failed, n.Name)
				if sn.firstErr == nil {
					sn.firstErr = err
				}
				if sn.entry == nil {
					out.warnings = append(out.warnings, warning{obj: n, reason: ReasonSubnetsExhausted, action: "AllocateSubnet",
						message: fmt.Sprintf("no subnet of the default network: %v", err)})
				}
				got = nil
				break
			}
			sn.subnets.held[n.Name] = true
			got = append(got, pfx)
		}
		if got != nil {
			want[sn.name] = got
		}
	}
	if len(want) == 0 {
		removeIfSet(changes, n.Annotations, cluster.AnnotationNodeSubnets)
	} else if v, err := cluster.NodeSubnetsCodec.Format(want); err == nil {
		if have, ok := n.Annotations[cluster.AnnotationNodeSubnets]; !ok || !sameNodeSubnets(n.Name, have, want) {
			changes[cluster.AnnotationNodeSubnets] = &v
		}
	}
	return changes
}

// sameNodeSubnets reports whether the annotation value holds exactly want, in any
// spelling the codec reads (a single-stack entry may be a string rather than a list).
func sameNodeSubnets(node, value string, want map[string][]netip.Prefix) bool {
	have, err := cluster.NodeSubnetsCodec.Parse(cluster.ObjectRef{Kind: "Node", Name: node}, value)
	return err == nil && maps.EqualFunc(have, want, slices.Equal)
}

// transitChanges derives the node's transit switch addresses from its id.
func (p *planner) transitChanges(n *corev1.Node, id int, changes map[string]*string, out *plan) {
	var ips []netip.Prefix
	for _, t := range p.defaultNet.TransitSubnets {
		ip, err := alloc.TransitSwitchIP(t, id)
		if err != nil {
			out.warnings = append(out.warnings, warning{obj: n, reason: "TransitSubnetTooSmall", action: "DeriveTransitAddress", message: err.Error()})
			return
		}
		ips = append(ips, ip)
	}
	if v, err := cluster.TransitSwitchPortIfAddrCodec.Format(ips); err == nil {
		setIfChanged(changes, n.Annotations, cluster.AnnotationNodeTransitSwitchPortIfAddr, v)
	}
}
