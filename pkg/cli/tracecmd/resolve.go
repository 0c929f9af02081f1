package tracecmd

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/trace"
)

// endpointKind says what SRC or DST names.
type endpointKind int

const (
	podEndpoint endpointKind = iota
	ipEndpoint
	nodeEndpoint
)

// nodePrefix marks a node among SRC and DST, as kubectl names one (node/NAME).
const nodePrefix = "node/"

// endpoint is SRC or DST as the user wrote it.
type endpoint struct {
	arg  string
	kind endpointKind
	pod  string // namespace/name
	ip   netip.Addr
	node string
}

// parseEndpoint reads SRC or DST (what): node/NAME, an IP address, or [NAMESPACE/]POD
// with namespace as the default. A string that reads as an IP address is one, even if a
// pod could have that name.
func parseEndpoint(what, arg, namespace string) (endpoint, error) {
	e := endpoint{arg: arg}
	if name, ok := strings.CutPrefix(arg, nodePrefix); ok {
		if name == "" {
			return e, fmt.Errorf("%s %q names no node: write node/NAME", what, arg)
		}
		e.kind, e.node = nodeEndpoint, name
		return e, nil
	}
	if ip, err := netip.ParseAddr(arg); err == nil {
		e.kind, e.ip = ipEndpoint, ip.Unmap()
		return e, nil
	}
	ns, name := namespace, arg
	if i := strings.Index(arg, "/"); i >= 0 {
		ns, name = arg[:i], arg[i+1:]
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 || len(validation.IsDNS1123Label(ns)) > 0 {
		return e, fmt.Errorf("%s %q is neither [NAMESPACE/]POD, an IP address nor node/NAME", what, arg)
	}
	e.kind, e.pod = podEndpoint, ns+"/"+name
	return e, nil
}

// packetFlags are the flags that shape the traced packet.
type packetFlags struct {
	proto   trace.Proto
	port    uint16
	network string
	ipv6    bool
	reply   bool
}

// resolver turns SRC and DST into a trace request: the zone and port the packet starts
// from and the addresses it carries. It reads the zones of both ends, at the same time,
// because a node's management port and the network of a pod's port are in its zone.
type resolver struct {
	inv       *inventory
	zones     *zoneCache
	namespace string // the namespace of -n or the kubeconfig, for --network NAME
	cluster   *trace.Cluster
}

func newResolver(inv *inventory, zones *zoneCache, namespace string) *resolver {
	return &resolver{inv: inv, zones: zones, namespace: namespace, cluster: trace.NewCluster(zones, inv.chassis, inv.ports)}
}

// resolve builds the request for a packet from src to dst.
func (r *resolver) resolve(ctx context.Context, src, dst endpoint, pf packetFlags) (trace.Request, error) {
	from, err := r.source(ctx, src, pf.network)
	if err != nil {
		return trace.Request{}, err
	}
	dstPorts, dstNode, err := r.destinationNode(ctx, dst)
	if err != nil {
		return trace.Request{}, err
	}
	nodes := []string{from.Node}
	if dstNode != "" {
		nodes = append(nodes, dstNode)
	}
	if err := r.zones.prefetch(ctx, nodes...); err != nil {
		return trace.Request{}, err
	}
	if src.kind == nodeEndpoint {
		if from, err = r.managementPort(ctx, src.node, pf.network); err != nil {
			return trace.Request{}, err
		}
	} else if err := r.programmed(ctx, from); err != nil {
		return trace.Request{}, err
	}
	srcIP, dstIP, err := r.addresses(ctx, src, dst, from, dstPorts, pf.ipv6)
	if err != nil {
		return trace.Request{}, err
	}
	return trace.Request{Node: from.Node, Port: from.Port, Src: srcIP, Dst: dstIP,
		Proto: pf.proto, DstPort: pf.port, Reply: pf.reply}, nil
}

// source finds the port a packet from src enters through: a pod's port on its primary
// network (or network), the pod port that has src's address, or for a node only the
// node, until its zone says which management port to use.
func (r *resolver) source(ctx context.Context, src endpoint, network string) (trace.PodPort, error) {
	switch src.kind {
	case ipEndpoint:
		if network != "" {
			return trace.PodPort{}, fmt.Errorf("--network picks the source pod's network, and SRC %s is an address, which has one network already: drop --network, or name the pod", src.ip)
		}
		return r.ownerOf(src.ip)
	case nodeEndpoint:
		if !r.inv.hasNode(src.node) {
			return trace.PodPort{}, r.inv.unknownNode("SRC", src.node)
		}
		return trace.PodPort{Node: src.node}, nil
	}
	if err := r.inv.checkPod(ctx, "SRC", src.pod); err != nil {
		return trace.PodPort{}, err
	}
	// PodEndpoint knows a network by its user-facing name, its OVN name and the pod's
	// attachment's name.
	p, err := r.cluster.PodEndpoint(src.pod, network)
	if err != nil {
		return trace.PodPort{}, fmt.Errorf("SRC: %w", err)
	}
	return p, nil
}

// programmed checks that a pod's port is in its node's zone: a pod's addresses are
// allocated before its node's agent writes the port.
func (r *resolver) programmed(ctx context.Context, p trace.PodPort) error {
	z, err := r.zones.Zone(ctx, p.Node)
	if err != nil {
		return err
	}
	if lsp, _ := z.SwitchPort(p.Port); lsp == nil {
		return fmt.Errorf("pod %s's port %s is not in node %s's zone yet: has its agent programmed network %s there? (kubectl ovnk status shows each node's progress)",
			p.Pod, p.Port, p.Node, p.Network)
	}
	return nil
}

// ownerOf is the pod port that has ip. An address several pods have (user-defined
// networks may reuse subnets) does not say where to start.
func (r *resolver) ownerOf(ip netip.Addr) (trace.PodPort, error) {
	var pods []string
	for _, p := range r.inv.ports {
		if slices.Contains(p.IPs, ip) && !slices.Contains(pods, p.Pod) {
			pods = append(pods, p.Pod)
		}
	}
	switch len(pods) {
	case 0:
		return trace.PodPort{}, fmt.Errorf("SRC %s is no pod's address: a trace starts at a pod or a node, so name the pod (NAMESPACE/POD) or the node (node/NAME)", ip)
	case 1:
		p, _ := r.cluster.PodOfIP(ip)
		return p, nil
	}
	return trace.PodPort{}, fmt.Errorf("SRC %s is the address of several pods, on different networks (%s): name the pod instead", ip, listSome(pods))
}

// destinationNode finds the node whose zone the packet is headed for, when DST says:
// a pod's node (with the pod's ports), a pod address's node, or the node itself.
func (r *resolver) destinationNode(ctx context.Context, dst endpoint) ([]trace.PodPort, string, error) {
	switch dst.kind {
	case ipEndpoint:
		if p, ok := r.cluster.PodOfIP(dst.ip); ok {
			return nil, p.Node, nil
		}
		return nil, "", nil
	case nodeEndpoint:
		if !r.inv.hasNode(dst.node) {
			return nil, "", r.inv.unknownNode("DST", dst.node)
		}
		return nil, dst.node, nil
	}
	if err := r.inv.checkPod(ctx, "DST", dst.pod); err != nil {
		return nil, "", err
	}
	var ports []trace.PodPort
	for _, p := range r.inv.ports {
		if p.Pod == dst.pod {
			ports = append(ports, p)
		}
	}
	if len(ports) == 0 {
		return nil, "", fmt.Errorf("DST: pod %s has no addresses on any network (no k8s.ovn.org/pod-networks yet): is it scheduled and running?", dst.pod)
	}
	return ports, ports[0].Node, nil
}

// managementPort is the port a node's own traffic enters its zone through on network
// ("" for the default network): k8s-<node>, or k8s-<network prefix><node>.
func (r *resolver) managementPort(ctx context.Context, node, network string) (trace.PodPort, error) {
	z, err := r.zones.Zone(ctx, node)
	if err != nil {
		return trace.PodPort{}, err
	}
	var tried []string
	for _, n := range networkCandidates(network, r.namespace) {
		name := "k8s-" + cluster.OVNPrefix(n) + node
		if lsp, _ := z.SwitchPort(name); lsp != nil {
			return trace.PodPort{Node: node, Network: cluster.UserNetworkName(n), Port: name, IPs: trace.PortIPs(lsp)}, nil
		}
		tried = append(tried, name)
	}
	return trace.PodPort{}, fmt.Errorf("node %s's zone has no management port %s: is network %q on that node? (kubectl ovnk topology --node %s shows what is)",
		node, strings.Join(tried, " or "), cmp.Or(network, cluster.DefaultNetworkName), node)
}

// networkCandidates are the OVN network names --network may mean, as the live views
// read them: default, NAMESPACE/NAME (a UserDefinedNetwork), an OVN name, or a bare
// name — a ClusterUserDefinedNetwork, else a UserDefinedNetwork of namespace.
func networkCandidates(network, namespace string) []string {
	switch {
	case network == "" || network == cluster.DefaultNetworkName:
		return []string{cluster.DefaultNetworkName}
	case strings.Contains(network, "/"):
		ns, name, _ := strings.Cut(network, "/")
		return []string{cluster.UDNNetworkName(ns, name)}
	}
	out := []string{network}
	for _, n := range []string{cluster.CUDNNetworkName(network), cluster.UDNNetworkName(namespace, network)} {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// addresses picks the packet's source and destination addresses: of one family, IPv4
// first unless -6 asks for IPv6 or an address given as SRC or DST decides. A pod as DST
// is reached at its address on the source's network when it has one there, else at its
// primary network's; a node at its primary address.
func (r *resolver) addresses(ctx context.Context, src, dst endpoint, from trace.PodPort, dstPorts []trace.PodPort, ipv6 bool) (netip.Addr, netip.Addr, error) {
	families := []bool{false, true}
	if ipv6 {
		families = []bool{true}
	}
	for _, fixed := range []endpoint{src, dst} {
		if fixed.kind != ipEndpoint {
			continue
		}
		if ipv6 && fixed.ip.Is4() {
			return netip.Addr{}, netip.Addr{}, fmt.Errorf("-6 asks for IPv6, and %s is an IPv4 address: drop -6 or give an IPv6 address", fixed.ip)
		}
		families = []bool{fixed.ip.Is6()}
	}
	if src.kind == ipEndpoint && dst.kind == ipEndpoint && src.ip.Is6() != dst.ip.Is6() {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("SRC %s and DST %s are of different IP families", src.ip, dst.ip)
	}
	candidates := r.destinationPorts(ctx, from, dstPorts)
	var missing []string
	for _, v6 := range families {
		srcIP, ok := trace.PickAddr(from.IPs, v6)
		if src.kind == ipEndpoint {
			srcIP, ok = src.ip, true
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("SRC %s has no IPv%s address on network %s", src.arg, family(v6), from.Network))
			continue
		}
		dstIP, ok := r.destinationAddr(dst, candidates, v6)
		if !ok {
			missing = append(missing, fmt.Sprintf("DST %s has no IPv%s address%s", dst.arg, family(v6), where(dst, candidates)))
			continue
		}
		return srcIP, dstIP, nil
	}
	if ipv6 {
		missing = append(missing, "drop -6 to try IPv4")
	}
	return netip.Addr{}, netip.Addr{}, fmt.Errorf("no address to trace between: %s", strings.Join(missing, "; "))
}

func family(v6 bool) string {
	if v6 {
		return "6"
	}
	return "4"
}

// where says where a DST without an address of a family was looked at.
func where(dst endpoint, ports []trace.PodPort) string {
	switch dst.kind {
	case nodeEndpoint:
		return " in k8s.ovn.org/node-primary-ifaddr"
	case podEndpoint:
		if len(ports) == 0 {
			return " on the source's network, and no primary network"
		}
		var nets []string
		for _, p := range ports {
			nets = append(nets, p.Network)
		}
		return " on " + strings.Join(nets, " or ")
	}
	return ""
}

// destinationPorts orders a DST pod's ports as they are tried: the one on the
// source's network, then the pod's primary network's.
func (r *resolver) destinationPorts(ctx context.Context, from trace.PodPort, ports []trace.PodPort) []trace.PodPort {
	var same, primary []trace.PodPort
	srcNet := r.networkOf(ctx, from)
	for _, p := range ports {
		switch {
		case sameNetwork(srcNet, from, r.networkOf(ctx, p), p):
			same = append(same, p)
		case p.Primary:
			primary = append(primary, p)
		}
	}
	return append(same, primary...)
}

// networkOf is the OVN network of a port's switch in its node's zone, "" when the zone
// cannot say.
func (r *resolver) networkOf(ctx context.Context, p trace.PodPort) string {
	z, err := r.zones.Zone(ctx, p.Node)
	if err != nil {
		return ""
	}
	if _, ls := z.SwitchPort(p.Port); ls != nil {
		return ls.ExternalIDs[rows.NetworkKey]
	}
	return ""
}

// sameNetwork compares two ports' networks by their zones' word, or when a zone has
// none (its node has not programmed the port yet), by the attachments' names.
func sameNetwork(netA string, a trace.PodPort, netB string, b trace.PodPort) bool {
	if netA != "" && netB != "" {
		return netA == netB
	}
	return a.Network == b.Network
}

// destinationAddr is DST's address of a family.
func (r *resolver) destinationAddr(dst endpoint, ports []trace.PodPort, v6 bool) (netip.Addr, bool) {
	switch dst.kind {
	case ipEndpoint:
		return dst.ip, dst.ip.Is6() == v6
	case nodeEndpoint:
		var addrs []netip.Addr
		for _, p := range r.inv.primary[dst.node] {
			addrs = append(addrs, p.Addr())
		}
		return trace.PickAddr(addrs, v6)
	}
	for _, p := range ports {
		if ip, ok := trace.PickAddr(p.IPs, v6); ok {
			return ip, true
		}
	}
	return netip.Addr{}, false
}
