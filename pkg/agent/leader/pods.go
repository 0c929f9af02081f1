package leader

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Tunnel ids of pod ports on a Layer2 network: OVN's port keys have 15 bits, and the
// first ones are left to the switch's own ports.
const (
	minPodTunnelID = 3
	maxPodTunnelID = 1<<15 - 1
)

// podPass is what planning pods needs from the rest of the pass.
type podPass struct {
	nets        *networks
	nodes       map[string]*corev1.Node
	namespaces  map[string]*corev1.Namespace
	nodeSubnets map[string]map[string][]netip.Prefix // persisted, by node and network
}

// planPods allocates the pods' addresses and plans their k8s.ovn.org/pod-networks.
func (p *planner) planPods(s *snapshot, nets *networks, out *plan) {
	pass := &podPass{nets: nets, nodes: map[string]*corev1.Node{}, namespaces: map[string]*corev1.Namespace{}, nodeSubnets: map[string]map[string][]netip.Prefix{}}
	for _, n := range s.nodes {
		pass.nodes[n.Name] = n
		subnets, _, err := cluster.NodeSubnetsCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		if err == nil {
			pass.nodeSubnets[n.Name] = subnets
		}
	}
	for i := range s.namespaces {
		pass.namespaces[s.namespaces[i].Name] = &s.namespaces[i]
	}
	owners := map[string]bool{}
	for _, pod := range s.pods {
		if cluster.OnPodNetwork(pod) {
			owners[podOwner(pod)] = true
		}
	}
	for _, n := range s.nodes {
		owners[gatewayOwner(n.Name)] = true
	}
	p.pods.sweep(owners, func(network string) bool {
		return network == cluster.DefaultNetworkName || nets.byName[network] != nil
	})
	for _, pod := range s.pods {
		if cluster.OnPodNetwork(pod) {
			p.reservePod(pod, pass)
		}
	}
	gateways := gatewayNetworks(nets)
	p.reserveGateways(s.nodes, gateways)
	p.gatewayChanges(s.nodes, nets, gateways, out)
	for _, pod := range s.pods {
		if !cluster.OnPodNetwork(pod) {
			continue
		}
		changes, warn := p.podChanges(pod, pass)
		if warn != nil {
			out.warnings = append(out.warnings, *warn)
		}
		if len(changes) > 0 {
			out.annotations = append(out.annotations, annotationWrite{obj: pod, changes: changes})
		}
	}
}

// target is where a pod-networks entry's addresses come from.
type target struct {
	network string
	entry   *netEntry // nil for the default network
	subnets []netip.Prefix
}

// resolve maps a NAD name of the pod's annotation to its network, as cluster.Build
// does: "default", or "<namespace>/<name>" for the UserDefinedNetwork of that name in
// the namespace, else the ClusterUserDefinedNetwork of that name if it serves the
// namespace. ok is false when there is no such network any more. The target has no
// subnets when the entry's addresses cannot be checked: the network's spec is invalid,
// the pod's node has no subnet of it, or it has no IPAM.
func (pass *podPass) resolve(pod *corev1.Pod, nad string) (target, bool) {
	if nad == cluster.DefaultNetworkName {
		return target{network: nad, subnets: pass.nodeSubnets[pod.Spec.NodeName][nad]}, true
	}
	ns, name, _ := strings.Cut(nad, "/")
	if ns != pod.Namespace {
		return target{}, false
	}
	e := pass.nets.byRef[cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: ns, Name: name}]
	if e == nil {
		e = pass.nets.byRef[cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: name}]
		if e == nil || (e.net != nil && !slices.Contains(e.net.Namespaces, ns)) {
			return target{}, false
		}
	}
	return pass.targetOf(pod, e), true
}

// targetOf returns where the pod's addresses on network e come from.
func (pass *podPass) targetOf(pod *corev1.Pod, e *netEntry) target {
	t := target{network: e.name, entry: e}
	switch {
	case e.net == nil:
	case e.net.Topology == cluster.Layer3:
		t.subnets = pass.nodeSubnets[pod.Spec.NodeName][e.name]
	default:
		for _, s := range e.net.Subnets {
			t.subnets = append(t.subnets, s.CIDR)
		}
	}
	return t
}

// reservePod reserves the addresses and tunnel ids of the pod's annotation that are
// still valid: in the subnet the entry's network gives the pod's node.
func (p *planner) reservePod(pod *corev1.Pod, pass *podPass) {
	ref := cluster.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}
	ifaces, _, err := cluster.PodNetworksCodec.Lookup(ref, pod.Annotations)
	if err != nil {
		return
	}
	owner := podOwner(pod)
	for _, nad := range slices.Sorted(maps.Keys(ifaces)) {
		iface := ifaces[nad]
		t, ok := pass.resolve(pod, nad)
		if !ok {
			continue
		}
		for _, ip := range iface.IPs {
			for _, s := range t.subnets {
				if s.Contains(ip.Addr()) {
					p.pods.reserveAddr(owner, poolKey{t.network, s}, ip.Addr())
				}
			}
		}
		if iface.TunnelID > 0 && len(t.subnets) > 0 && t.entry != nil && t.entry.net.Topology == cluster.Layer2 {
			p.pods.reserveTunnelID(owner, t.network, iface.TunnelID)
		}
	}
}

// podChanges decides the pod's k8s.ovn.org/pod-networks. A pod without one is wired
// (see wirePod); a pod that has one keeps the networks and roles it was wired with, as
// its interfaces are already configured: only its addresses are checked (and replaced
// when another pod holds them), and the entries of networks that are gone are dropped.
// It returns no changes while something the pod needs is not there yet, and a warning
// when an allocation fails.
func (p *planner) podChanges(pod *corev1.Pod, pass *podPass) (map[string]*string, *warning) {
	if pass.nodes[pod.Spec.NodeName] == nil {
		return nil, nil
	}
	owner := podOwner(pod)
	keep := &podHolding{addrs: map[poolKey]bool{}, tunnelIDs: map[string]bool{}}
	current, _, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}, pod.Annotations)
	var want map[string]cluster.PodInterface
	if err == nil && len(current) > 0 {
		want, err = p.repairPod(pod, pass, current, keep)
	} else {
		want, err = p.wirePod(pod, pass, keep)
	}
	if err != nil {
		return nil, &warning{obj: pod, reason: "AddressAllocationFailed", action: "AllocateAddress", message: err.Error()}
	}
	if want == nil {
		return nil, nil
	}
	p.pods.keepOnly(owner, keep)
	changes := map[string]*string{}
	if len(want) == 0 {
		removeIfSet(changes, pod.Annotations, cluster.AnnotationPodNetworks)
		return changes, nil
	}
	v, err := cluster.PodNetworksCodec.Format(want)
	if err != nil {
		return nil, &warning{obj: pod, reason: "AddressAllocationFailed", action: "AllocateAddress", message: err.Error()}
	}
	if have, ok := pod.Annotations[cluster.AnnotationPodNetworks]; !ok || canonicalPodNetworks(pod, have) != v {
		changes[cluster.AnnotationPodNetworks] = &v
	}
	return changes, nil
}

// wirePod decides the interfaces of a pod not wired yet: the default network's, and
// the primary one of its namespace's primary user-defined network if there is one (the
// default network's role is then infrastructure-locked). It returns nil while the pod
// must wait: for its namespace's primary network to be created (or, in a namespace
// labelled k8s.ovn.org/primary-user-defined-network, to exist), for its namespace
// itself (the cache may show a pod before its namespace), or for its node's subnets.
func (p *planner) wirePod(pod *corev1.Pod, pass *podPass, keep *podHolding) (map[string]cluster.PodInterface, error) {
	var primary *netEntry
	if prims := pass.nets.primaries[pod.Namespace]; len(prims) > 0 {
		for _, e := range prims {
			if e.usable() {
				primary = e
				break
			}
		}
		if primary == nil {
			return nil, nil
		}
	} else if ns := pass.namespaces[pod.Namespace]; ns == nil {
		// The namespace's labels decide (its own, and which CUDNs select it), and the
		// cache does not show it yet: its informer lags behind the pods'.
		return nil, nil
	} else if _, required := ns.Labels[cluster.LabelPrimaryUDN]; required {
		return nil, nil
	}
	owner := podOwner(pod)
	def, _ := pass.resolve(pod, cluster.DefaultNetworkName)
	if len(def.subnets) == 0 {
		return nil, nil
	}
	role := cluster.PodRolePrimary
	if primary != nil {
		role = cluster.PodRoleInfrastructureLocked
	}
	iface, err := p.podInterface(owner, def, role, keep)
	if err != nil {
		return nil, err
	}
	want := map[string]cluster.PodInterface{cluster.DefaultNetworkName: iface}
	if primary != nil {
		t := pass.targetOf(pod, primary)
		if len(t.subnets) == 0 {
			return nil, nil
		}
		iface, err := p.podInterface(owner, t, cluster.PodRolePrimary, keep)
		if err != nil {
			return nil, err
		}
		want[pod.Namespace+"/"+primary.ref.Name] = iface
	}
	return want, nil
}

// repairPod checks the interfaces of a wired pod. An entry whose network is gone is
// dropped; one whose addresses cannot be checked (its node has no subnet of the
// network now, or the network has no IPAM) is kept as it is.
func (p *planner) repairPod(pod *corev1.Pod, pass *podPass, current map[string]cluster.PodInterface, keep *podHolding) (map[string]cluster.PodInterface, error) {
	owner := podOwner(pod)
	want := map[string]cluster.PodInterface{}
	for _, nad := range slices.Sorted(maps.Keys(current)) {
		have := current[nad]
		t, ok := pass.resolve(pod, nad)
		if !ok {
			continue
		}
		if len(t.subnets) == 0 {
			want[nad] = have
			continue
		}
		iface, err := p.podInterface(owner, t, have.Role, keep)
		if err != nil {
			return nil, err
		}
		iface.Routes, iface.GatewayIPv6LLA = have.Routes, have.GatewayIPv6LLA
		want[nad] = iface
	}
	return want, nil
}

// canonicalPodNetworks rewrites an annotation value in the codec's canonical form, or
// returns "" when it cannot be parsed.
func canonicalPodNetworks(pod *corev1.Pod, value string) string {
	ifaces, err := cluster.PodNetworksCodec.Parse(cluster.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}, value)
	if err != nil {
		return ""
	}
	s, err := cluster.PodNetworksCodec.Format(ifaces)
	if err != nil {
		return ""
	}
	return s
}

// podInterface allocates the pod's interface on a network: one address per subnet
// with the subnet's prefix length, the subnets' .1 as gateways, the MAC derived from
// the first address, and for a Layer2 network a tunnel id. It records what it used in
// keep.
func (p *planner) podInterface(owner string, t target, role string, keep *podHolding) (cluster.PodInterface, error) {
	iface := cluster.PodInterface{Role: role}
	for _, s := range t.subnets {
		k := poolKey{t.network, s}
		addr, err := p.pods.allocAddr(owner, k)
		if err != nil {
			return iface, err
		}
		keep.addrs[k] = true
		gw, err := alloc.NthAddr(s, 1)
		if err != nil {
			return iface, fmt.Errorf("network %q: gateway of %s: %w", t.network, s, err)
		}
		iface.IPs = append(iface.IPs, netip.PrefixFrom(addr, s.Bits()))
		iface.Gateways = append(iface.Gateways, gw)
	}
	if len(iface.IPs) > 0 {
		iface.MAC = alloc.MACFromIP(iface.IPs[0].Addr()).String()
	}
	if t.entry != nil && t.entry.net.Topology == cluster.Layer2 {
		id, err := p.pods.allocTunnelID(owner, t.network)
		if err != nil {
			return iface, err
		}
		keep.tunnelIDs[t.network] = true
		iface.TunnelID = id
	}
	return iface, nil
}
