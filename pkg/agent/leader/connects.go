package leader

import (
	"cmp"
	"fmt"
	"maps"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Conditions the leader writes on a ClusterNetworkConnect.
const (
	// ConditionConnectAccepted is True when every network the connect selects is
	// connected: it has a block of the connect subnets, and the connect router a tunnel
	// key.
	ConditionConnectAccepted = ovnkv1.ConditionAccepted
	// ConditionConnectReady is True when every node's zone reports the connect
	// programmed.
	ConditionConnectReady = "Ready"
)

// Reasons of a connect's conditions; Accepted False may also have ReasonInvalidSpec,
// ReasonSubnetOverlap or ReasonTunnelKeysExhausted, and Ready ReasonProgrammed or
// ReasonPending.
const (
	// ReasonConnectSubnetOverlap: a connect subnet overlaps one of the cluster's
	// subnets (nothing is connected) or a selected network's (that one is not).
	ReasonConnectSubnetOverlap = "ConnectSubnetOverlap"
	// ReasonConnectSubnetConflict: a connect subnet overlaps one of an older connect
	// that shares a network with this one; nothing is connected.
	ReasonConnectSubnetConflict = "ConnectSubnetConflict"
	// ReasonNetworkRefused: a selected network is secondary or has no overlay.
	ReasonNetworkRefused = "NetworkRefused"
	// ReasonConnectSubnetTooSmall: some networks get no block of the connect subnets.
	ReasonConnectSubnetTooSmall = "ConnectSubnetTooSmall"
	// ReasonBlockTooSmall: a block has no link for the nodes with the highest ids.
	ReasonBlockTooSmall = "BlockTooSmall"
	// ReasonNotAccepted: Ready is False because nothing of the connect is programmed.
	ReasonNotAccepted = "NotAccepted"
)

// maxNamedNetworks bounds how many networks a connect's message names in one list.
const maxNamedNetworks = 3

// heldConnect is what a ClusterNetworkConnect holds besides its router's tunnel key,
// which the planner's tunnelKeys holds for connectOwner: its networks' blocks.
type heldConnect struct {
	// uid tells a connect deleted and created again under its name, which starts afresh.
	uid    types.UID
	spaces []alloc.BlockSpace
	// blocks are owned by network names; nil until the connect's spec was read.
	blocks *alloc.BlockAllocator
}

// connectOwner names a connect as the owner of its router's tunnel key: no network
// name has a "/".
func connectOwner(name string) string { return "cnc/" + name }

func connectRef(c *ovnkv1.ClusterNetworkConnect) cluster.ObjectRef {
	return cluster.ObjectRef{Kind: "ClusterNetworkConnect", Name: c.Name}
}

// releaseConnect frees everything a connect holds.
func (p *planner) releaseConnect(name string) {
	p.tunnelKeys.Release(connectOwner(name))
	delete(p.connects, name)
}

// reserveConnectKeys releases what connects that are gone held and reserves the router
// keys persisted on the others. A key of the range derived from network ids is not
// reserved: it would be a network's, so the connect gets a new one.
func (p *planner) reserveConnectKeys(cncs []*ovnkv1.ClusterNetworkConnect) {
	uids := make(map[string]types.UID, len(cncs))
	for _, c := range cncs {
		uids[c.Name] = c.UID
	}
	for name, h := range p.connects {
		if uid, ok := uids[name]; !ok || uid != h.uid {
			p.releaseConnect(name)
		}
	}
	for _, c := range cncs {
		if p.connects[c.Name] == nil {
			p.connects[c.Name] = &heldConnect{uid: c.UID}
		}
		key, ok, err := cluster.ConnectTunnelKeyCodec.Lookup(connectRef(c), c.Annotations)
		if !ok || err != nil || key < alloc.FirstAllocatedTunnelKey {
			continue
		}
		owner := connectOwner(c.Name)
		reserveOrRelease(func() error { return p.tunnelKeys.Reserve(owner, []int{key}) }, func() { p.tunnelKeys.Release(owner) })
	}
}

// connectEntry is one ClusterNetworkConnect as a pass sees it.
type connectEntry struct {
	cnc  *ovnkv1.ClusterNetworkConnect
	spec *cluster.Connect // nil when the spec cannot be read
	// refused keeps the whole connect from being programmed: it holds nothing.
	refused *problem
	// problems keep some networks, or some nodes' links, from being connected; the
	// rest is.
	problems []problem
	key      int
	// connected are the networks holding blocks, by name.
	connected []connectedNetwork
	// pending are networks that get a block once they are created.
	pending []string
}

// connectedNetwork is a network's entry of k8s.ovn.org/network-connect-subnet.
type connectedNetwork struct {
	name, ownerKey string
	blocks         []netip.Prefix // IPv4 first
}

// nodeWithID is a node and its id.
type nodeWithID struct {
	name string
	id   int
}

// planConnects allocates the connects' router keys and their networks' blocks, and
// plans their annotations and statuses. Connects are validated oldest first (then by
// name): a connect whose subnets overlap an older one's while they share a network is
// refused, whatever order the leader sees them in.
func (p *planner) planConnects(s *snapshot, nets *networks, out *plan) {
	var specs []*cluster.Network
	for _, e := range nets.entries {
		if e.net != nil && nets.byName[e.name] == e {
			specs = append(specs, e.net)
		}
	}
	reserved := p.reservedRanges()
	top := p.highestNodeID(s.nodes)
	var accepted, entries []*connectEntry
	for _, c := range connectSeniority(s.cncs) {
		ce := &connectEntry{cnc: c}
		entries = append(entries, ce)
		spec, err := cluster.ConnectSpec(c, specs, s.namespaces, s.cudns)
		if err != nil {
			ce.refused = &problem{ReasonInvalidSpec, err.Error()}
		} else {
			ce.spec = spec
			ce.refused = p.acceptConnect(ce, reserved, accepted)
		}
		if ce.refused != nil {
			p.releaseConnect(c.Name)
		} else {
			accepted = append(accepted, ce)
			p.connectNetworks(ce, nets, top)
		}
		if w, ok := connectWrite(ce); ok {
			out.annotations = append(out.annotations, w)
		}
	}
	slices.SortFunc(entries, func(a, b *connectEntry) int { return cmp.Compare(a.cnc.Name, b.cnc.Name) })
	for _, ce := range entries {
		if st := connectStatus(ce, s.nodes); statusChanged(ce.cnc, st) {
			out.statuses = append(out.statuses, st)
		}
	}
}

// connectSeniority orders connects (sorted by name) oldest first, then by name.
func connectSeniority(cncs []*ovnkv1.ClusterNetworkConnect) []*ovnkv1.ClusterNetworkConnect {
	out := slices.Clone(cncs)
	slices.SortStableFunc(out, func(a, b *ovnkv1.ClusterNetworkConnect) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return out
}

// highestNodeID returns the node with the highest id the allocator holds; name is ""
// without any.
func (p *planner) highestNodeID(nodes []*corev1.Node) nodeWithID {
	var top nodeWithID
	for _, n := range nodes {
		if id, ok := p.nodeIDs.Get(n.Name); ok && (top.name == "" || id > top.id) {
			top = nodeWithID{n.Name, id}
		}
	}
	return top
}

// acceptConnect checks what keeps the whole connect from being programmed, and gives it
// its block allocator and router key; it returns the first problem.
func (p *planner) acceptConnect(ce *connectEntry, reserved []cluster.ReservedRange, accepted []*connectEntry) *problem {
	if pr := connectOverlapsReserved(ce.spec, reserved); pr != nil {
		return pr
	}
	if pr := connectConflicts(ce, accepted); pr != nil {
		return pr
	}
	h := p.connects[ce.cnc.Name] // reserveConnectKeys made it, earlier in the pass
	spaces := make([]alloc.BlockSpace, len(ce.spec.Subnets))
	for i, cs := range ce.spec.Subnets {
		spaces[i] = alloc.BlockSpace{CIDR: cs.CIDR, Bits: cs.NetworkPrefix}
	}
	if h.blocks == nil || !slices.Equal(h.spaces, spaces) {
		a, err := alloc.NewBlockAllocator(spaces...)
		if err != nil {
			return &problem{ReasonInvalidSpec, fmt.Sprintf("connectSubnets: %v", err)}
		}
		h.spaces, h.blocks = spaces, a
	}
	keys, err := p.tunnelKeys.Allocate(connectOwner(ce.cnc.Name), 1)
	if err != nil {
		return &problem{ReasonTunnelKeysExhausted, fmt.Sprintf("connect router: %v", err)}
	}
	ce.key = keys[0]
	return nil
}

// connectOverlapsReserved checks the connect subnets against the cluster's own ranges.
func connectOverlapsReserved(spec *cluster.Connect, reserved []cluster.ReservedRange) *problem {
	if err := cluster.CheckConnectReserved(spec.Subnets, reserved); err != nil {
		return &problem{ReasonConnectSubnetOverlap, err.Error()}
	}
	return nil
}

// connectConflicts checks the connect subnets against those of the older connects
// accepted already that connect one of the same networks: a network router cannot have
// two links with overlapping addresses.
func connectConflicts(ce *connectEntry, accepted []*connectEntry) *problem {
	for _, o := range accepted {
		sameSecond := o.cnc.CreationTimestamp.Equal(&ce.cnc.CreationTimestamp)
		if err := cluster.CheckConnectConflict(ce.spec, o.spec, sameSecond); err != nil {
			return &problem{ReasonConnectSubnetConflict, err.Error()}
		}
	}
	return nil
}

// connectNetworks gives the connect's networks their blocks: networks that cannot be
// connected release theirs, persisted blocks are reserved, and the networks without
// one get the lowest free. A network that is not created yet keeps the block it holds
// but gets none.
func (p *planner) connectNetworks(ce *connectEntry, nets *networks, top nodeWithID) {
	h := p.connects[ce.cnc.Name]
	persisted, _, err := cluster.ConnectSubnetsCodec.Lookup(connectRef(ce.cnc), ce.cnc.Annotations)
	if err != nil {
		persisted = nil // malformed: whatever the allocator holds is written again
	}
	ownerKey := func(e *netEntry) string {
		if !e.hasID {
			return ""
		}
		return cluster.NetworkOwnerKeyOf(e.net.Topology, e.id)
	}
	persistedOf := func(e *netEntry) []netip.Prefix { return persisted[ownerKey(e)] }

	for _, name := range slices.Sorted(maps.Keys(ce.spec.Refused)) {
		ce.problems = append(ce.problems, problem{ReasonNetworkRefused, fmt.Sprintf("network %q is not connected: %s", name, ce.spec.Refused[name])})
	}
	candidates := make([]*netEntry, len(ce.spec.Networks))
	for i, name := range ce.spec.Networks {
		candidates[i] = nets.byName[name]
	}
	var valid []*netEntry
	for _, e := range seniority(candidates, func(e *netEntry) bool { return persistedOf(e) != nil }) {
		if pr := cmpProblem(connectSubnetOverlapsNetwork(ce.spec, e), overlapsConnected(e, valid)); pr != nil {
			ce.problems = append(ce.problems, *pr)
			continue
		}
		valid = append(valid, e)
	}
	slices.SortFunc(valid, func(a, b *netEntry) int { return cmp.Compare(a.name, b.name) })

	keep := map[string]bool{}
	for _, e := range valid {
		keep[e.name] = true
	}
	for _, owner := range h.blocks.Owners() {
		if !keep[owner] {
			h.blocks.Release(owner)
		}
	}
	for _, e := range valid {
		if bl := persistedOf(e); bl != nil {
			reserveOrRelease(func() error { return h.blocks.Reserve(e.name, bl) }, func() { h.blocks.Release(e.name) })
		}
	}
	var without []string
	for _, e := range valid {
		var bl []netip.Prefix
		if e.usable() {
			if bl, err = h.blocks.Allocate(e.name); err != nil {
				without = append(without, e.name)
				continue
			}
		} else if held, ok := h.blocks.Get(e.name); ok && e.hasID {
			bl = held
		} else {
			ce.pending = append(ce.pending, e.name)
			continue
		}
		ce.connected = append(ce.connected, connectedNetwork{name: e.name, ownerKey: ownerKey(e), blocks: ipv4First(bl)})
	}
	if len(without) > 0 {
		ce.problems = append(ce.problems, tooFewBlocks(ce.spec, h.blocks.Size(), len(valid), without))
	}
	if pr := blocksTooSmall(ce, nets, top); pr != nil {
		ce.problems = append(ce.problems, *pr)
	}
}

// ipv4First orders one block per family with IPv4 first, as the annotation lists them.
func ipv4First(blocks []netip.Prefix) []netip.Prefix {
	out := slices.Clone(blocks)
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		return cmp.Compare(a.Addr().BitLen(), b.Addr().BitLen())
	})
	return out
}

// connectSubnetOverlapsNetwork checks the connect subnets against a network's own
// ranges: its routers would have a link address inside them.
func connectSubnetOverlapsNetwork(spec *cluster.Connect, e *netEntry) *problem {
	if err := cluster.CheckConnectNetwork(spec.Subnets, e.net); err != nil {
		return &problem{ReasonConnectSubnetOverlap, err.Error()}
	}
	return nil
}

// overlapsConnected checks a network's subnets against the networks connected before
// it: the connect router could not tell where to send an address both have.
func overlapsConnected(e *netEntry, connected []*netEntry) *problem {
	nets := make([]*cluster.Network, len(connected))
	for i, o := range connected {
		nets[i] = o.net
	}
	if err := cluster.CheckConnectedOverlap(e.net, nets); err != nil {
		return &problem{ReasonSubnetOverlap, err.Error()}
	}
	return nil
}

// tooFewBlocks reports networks left without a block: it names the connect subnet with
// the fewest blocks and how many addresses the networks need.
func tooFewBlocks(spec *cluster.Connect, size uint64, networks int, without []string) problem {
	cs := spec.Subnets[0]
	for _, s := range spec.Subnets[1:] {
		if s.NetworkPrefix-s.CIDR.Bits() < cs.NetworkPrefix-cs.CIDR.Bits() {
			cs = s
		}
	}
	host := cs.CIDR.Addr().BitLen() - cs.NetworkPrefix
	return problem{ReasonConnectSubnetTooSmall, fmt.Sprintf(
		"connect subnet %s holds %s of /%d (%s addresses each), but %d networks are connected: they need %d × %s = %s addresses; %s no block; %s, larger, or select fewer networks",
		cs.CIDR, blockCount(size), cs.NetworkPrefix, power2(host), networks, networks, power2(host), times(networks, host),
		namedNetworks(without, "has", "have"), cluster.RecreateConnectFix)}
}

// blockCount says "1 block" or "n blocks".
func blockCount(n uint64) string {
	if n == 1 {
		return "1 block"
	}
	return strconv.FormatUint(n, 10) + " blocks"
}

// power2 writes 2^n in decimal while that is readable, else as 2^n.
func power2(n int) string {
	if n < 40 {
		return strconv.FormatUint(1<<n, 10)
	}
	return fmt.Sprintf("2^%d", n)
}

// times writes n × 2^k like power2.
func times(n, k int) string {
	if k < 40 {
		return strconv.FormatUint(uint64(n)<<k, 10)
	}
	return fmt.Sprintf("%d × 2^%d", n, k)
}

// namedNetworks names networks, at most maxNamedNetworks of them, as the subject of
// verb: `network "a" has`, `networks "a", "b" and 2 more have`.
func namedNetworks(names []string, singular, plural string) string {
	quoted := make([]string, min(len(names), maxNamedNetworks))
	for i := range quoted {
		quoted[i] = strconv.Quote(names[i])
	}
	if len(names) == 1 {
		return "network " + quoted[0] + " " + singular
	}
	s := "networks " + strings.Join(quoted, ", ")
	if len(names) > maxNamedNetworks {
		s += fmt.Sprintf(" and %d more", len(names)-maxNamedNetworks)
	}
	return s + " " + plural
}

// blocksTooSmall reports blocks that have no link for the node with the highest id: a
// Layer3 network's link of node id N is the pair at offset 2N of its block.
func blocksTooSmall(ce *connectEntry, nets *networks, top nodeWithID) *problem {
	layer3 := slices.ContainsFunc(ce.connected, func(c connectedNetwork) bool { return nets.byName[c.name].net.Topology == cluster.Layer3 })
	if !layer3 || top.name == "" {
		return nil
	}
	first := ce.spec.Subnets[0]
	host := first.CIDR.Addr().BitLen() - first.NetworkPrefix
	need := cluster.Layer3LinkAddresses(top.id)
	needBits := bits.Len(uint(need - 1))
	if host >= needBits {
		return nil
	}
	links := 1 << (host - 1)
	var lengths, fixes []string
	for _, cs := range ce.spec.Subnets {
		lengths = append(lengths, fmt.Sprintf("/%d", cs.NetworkPrefix))
		fixes = append(fixes, fmt.Sprintf("%d for %s", cs.CIDR.Addr().BitLen()-needBits, cs.CIDR))
	}
	return &problem{ReasonBlockTooSmall, fmt.Sprintf(
		"blocks of %s hold %d links, for node ids 0 to %d, but node %s has id %d: a Layer3 network needs %d addresses in its block, 2 per node id from 0 to %d, so nodes with ids above %d are not connected; delete this ClusterNetworkConnect and create it again with networkPrefix %s or less",
		strings.Join(lengths, " and "), links, links-1, top.name, top.id, need, top.id, links-1, strings.Join(fixes, " and "))}
}

// connectWrite plans the connect's annotations: its router key and its networks'
// blocks, or neither when it is refused.
func connectWrite(ce *connectEntry) (annotationWrite, bool) {
	changes := map[string]*string{}
	annotations := ce.cnc.Annotations
	want := map[string][]netip.Prefix{}
	if ce.refused == nil {
		setIfChanged(changes, annotations, cluster.AnnotationConnectRouterTunnelKey, strconv.Itoa(ce.key))
		for _, c := range ce.connected {
			want[c.ownerKey] = c.blocks
		}
	} else {
		removeIfSet(changes, annotations, cluster.AnnotationConnectRouterTunnelKey)
	}
	have, _, err := cluster.ConnectSubnetsCodec.Lookup(connectRef(ce.cnc), annotations)
	switch {
	case len(want) == 0:
		removeIfSet(changes, annotations, cluster.AnnotationConnectSubnets)
	case err != nil || !maps.EqualFunc(have, want, slices.Equal):
		if v, err := cluster.ConnectSubnetsCodec.Format(want); err == nil {
			changes[cluster.AnnotationConnectSubnets] = &v
		}
	}
	if len(changes) == 0 {
		return annotationWrite{}, false
	}
	return annotationWrite{obj: ce.cnc, changes: changes, owner: connectOwner(ce.cnc.Name)}, true
}

// connectStatus returns the status the leader writes on a connect.
func connectStatus(ce *connectEntry, nodes []*corev1.Node) statusWrite {
	gen := ce.cnc.Generation
	accepted := metav1.Condition{Type: ConditionConnectAccepted, ObservedGeneration: gen, Status: metav1.ConditionTrue, Reason: ReasonAllocated}
	ready := metav1.Condition{Type: ConditionConnectReady, ObservedGeneration: gen}
	summary := ovnkv1.ConnectStatusFailure
	if ce.refused != nil {
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, ce.refused.reason, ce.refused.message
		ready.Status, ready.Reason = metav1.ConditionFalse, ReasonNotAccepted
		ready.Message = "nothing is programmed: see condition " + ConditionConnectAccepted
	} else {
		var parts []string
		for _, pr := range ce.problems {
			parts = append(parts, pr.message)
		}
		parts = append(parts, connectedMessage(ce)...)
		if len(ce.problems) > 0 {
			accepted.Status, accepted.Reason = metav1.ConditionFalse, ce.problems[0].reason
		}
		accepted.Message = strings.Join(parts, "; ")
		ready.Status, ready.Reason, ready.Message = zoneReadiness(cluster.ConnectZoneStatusKey(ce.cnc.Name), "connect", nodes)
		switch {
		case len(ce.problems) == 0 && ready.Status == metav1.ConditionTrue:
			summary = ovnkv1.ConnectStatusSuccess
		case len(ce.problems) == 0:
			summary = "" // on its way
		}
	}
	return statusWrite{obj: ce.cnc, owner: connectOwner(ce.cnc.Name), conditions: []metav1.Condition{accepted, ready}, connectStatus: summary}
}

// connectedMessage says what the connect connects, which networks wait to be created,
// and that services are not connected.
func connectedMessage(ce *connectEntry) []string {
	var parts []string
	if len(ce.connected) == 0 {
		parts = append(parts, fmt.Sprintf("no network is connected yet; connect router tunnel key %d", ce.key))
	} else {
		var named []string
		for _, c := range ce.connected[:min(len(ce.connected), maxNamedNetworks)] {
			blocks := make([]string, len(c.blocks))
			for i, b := range c.blocks {
				blocks[i] = b.String()
			}
			named = append(named, fmt.Sprintf("%q %s", c.name, strings.Join(blocks, " and ")))
		}
		if more := len(ce.connected) - len(named); more > 0 {
			named = append(named, fmt.Sprintf("and %d more", more))
		}
		noun := "networks"
		if len(ce.connected) == 1 {
			noun = "network"
		}
		parts = append(parts, fmt.Sprintf("connects %d %s through connect router tunnel key %d: %s",
			len(ce.connected), noun, ce.key, strings.Join(named, ", ")))
	}
	if len(ce.pending) > 0 {
		parts = append(parts, namedNetworks(ce.pending, "is", "are")+" connected once created (see condition "+ovnkv1.ConditionNetworkCreated+")")
	}
	if ce.spec.ServiceNetwork {
		parts = append(parts, "ClusterIPServiceNetwork connectivity is accepted, but only pod connectivity is programmed: ovnk does not program services yet")
	}
	return parts
}
