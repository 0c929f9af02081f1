package topology

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// External IDs of the rows a ClusterNetworkConnect adds (OKEP-5224). They carry
// rows.OwnerTypeKey ConnectOwnerType and name the connect, so that disconnecting removes
// exactly its rows; a row that concerns one network also carries rows.NetworkKey (and a
// policy the network it leads to), so that the rows of a network that could not be
// compiled are kept like the network's own.
const (
	// ConnectOwnerType is the rows.OwnerTypeKey value of a connect's rows.
	ConnectOwnerType = "ClusterNetworkConnect"
	// ConnectNameKey names the ClusterNetworkConnect a row belongs to (upstream's
	// object-name key).
	ConnectNameKey = "k8s.ovn.org/name"
	// DestinationNetworkKey names, on a connect's policy, the network it steers traffic to.
	DestinationNetworkKey = "k8s.ovn.org/destination-network"
)

// ConnectPolicyPriority is the priority of the policies that steer a network's pod
// traffic for a connected network to the connect router: above every other policy of
// the network's router (1004, 102, EgressIP's 100), as in the OKEP's listings.
const ConnectPolicyPriority = 9001

// ConnectOf returns the ClusterNetworkConnect a row with these external IDs belongs to.
func ConnectOf(externalIDs map[string]string) (string, bool) {
	if externalIDs[rows.OwnerTypeKey] != ConnectOwnerType {
		return "", false
	}
	name := externalIDs[ConnectNameKey]
	return name, name != ""
}

// ConnectRouterName is the name of a ClusterNetworkConnect's connect router.
func ConnectRouterName(cnc string) string { return "connect_router_" + cnc }

// connectPortNames are the two ends of a network's link to a connect router: crtor- on
// the connect router, rtocr- on the network's router. A Layer3 network has one link per
// node ("crtor-<cnc>_<prefix><node>", "rtocr-<prefix><node>_<cnc>"), a Layer2 network
// one in all ("crtor-<cnc>_<network prefix without its _>", "rtocr-<…>_<cnc>").
func connectPortNames(cnc string, n *cluster.Network, node string) (connectSide, networkSide string) {
	end := n.OVNPrefix() + node
	if n.Topology == cluster.Layer2 {
		end = strings.TrimSuffix(n.OVNPrefix(), "_")
	}
	return connectRouterToRouter + cnc + "_" + end, routerToConnectRouter + end + "_" + cnc
}

// connectLink is one link between the connect router and a network's router.
type connectLink struct {
	node             *cluster.Node // the link's node (Layer3); nil for a Layer2 network
	nodeIndex        int           // the node's index in the state's nodes
	network, connect []netip.Prefix
	key              int // the connect router port's tunnel key
}

// connectedNetwork is a network of a connect with the links this zone can derive.
type connectedNetwork struct {
	net   *cluster.Network
	links []connectLink
	// local is this zone's link (the local node's, or the Layer2 link); nil if it
	// cannot be derived.
	local *connectLink
	// compiled reports that the network itself compiled in this zone: only then does
	// it have a router here to attach the local link and policies to.
	compiled bool
}

// connects compiles every ClusterNetworkConnect, after the networks: each network's
// router must already be in res.Rows to take its end of the link and its policies.
// res.Connects gets every connect's outcome. With a memo, next gets the connects'
// record.
func (c *compiler) connects(res *Result, next *memoState) {
	networks := make(map[string]*cluster.Network, len(c.state.Networks))
	for _, n := range c.state.Networks {
		networks[n.Name] = n
	}
	routers := newNetworkRouters(res.Rows)
	for _, cc := range c.state.Connects {
		e := c.newConnectEmitter(cc)
		res.Connects[cc.Name] = c.connect(e, cc, networks, routers, res.NotCompiled)
		if next != nil {
			next.connects[cc.Name] = e.finishRecord()
		}
		res.Rows.Append(&e.set)
		res.Warnings = append(res.Warnings, e.warnings...)
	}
	if next != nil {
		var prev map[string]*nbdb.LogicalRouter
		if c.memo.prev != nil {
			prev = c.memo.prev.routers
		}
		next.routers = routers.intern(prev)
	}
}

// connect compiles one connect into e and returns what it left out, nil if nothing.
// A connect without pod connectivity or without its tunnel key compiles nothing; a
// network without its block, or whose links cannot be derived, is left out of it, and
// so is a node whose link cannot be derived.
func (c *compiler) connect(e *connectEmitter, cc *cluster.Connect, networks map[string]*cluster.Network,
	routers *networkRouters, notCompiled map[string]error) error {
	if !cc.PodNetwork {
		return fmt.Errorf("spec.connectivity does not list PodNetwork, and ovnk does not program ClusterIPServiceNetwork yet: nothing is connected; add PodNetwork to connect the pods")
	}
	if cc.TunnelKey == 0 {
		return fmt.Errorf("waiting for the leader to allocate the connect router's tunnel key (%s)", cluster.AnnotationConnectRouterTunnelKey)
	}
	var problems []error
	var members []*connectedNetwork
	var fenced []*cluster.Network // Layer2 networks left out on this legacy node
	keys := map[int]string{}      // port tunnel key → network, to refuse rather than collide
	for _, name := range cc.Networks {
		n := networks[name]
		if n == nil {
			problems = append(problems, fmt.Errorf("network %s is selected but not in the cluster state", name))
			continue
		}
		if n.Topology == cluster.Layer2 && c.opts.Layer2 == Layer2Legacy {
			// The legacy topology has no router shared by the nodes to link.
			problems = append(problems, fmt.Errorf("network %s: node %s still runs the legacy Layer2 topology: the network joins the connect here once the node has moved to the transit router (drain it; kubectl ovnk upgrade-status)", name, c.local.Name))
			c.fenceLegacy(e, cc, n, networks, routers)
			fenced = append(fenced, n)
			continue
		}
		cn, errs := c.connectedNetwork(cc, n, notCompiled[name] == nil)
		if cn != nil {
			if err := claimKeys(keys, cn); err != nil {
				errs, cn = append(errs, err), nil
			}
		}
		for _, err := range errs {
			problems = append(problems, fmt.Errorf("network %s: %w", name, err))
		}
		if cn != nil {
			members = append(members, cn)
		}
	}

	cr := e.router(ConnectRouterName(cc.Name), cc.TunnelKey)
	for _, cn := range members {
		c.link(e, cr, cc.Name, cn, routers)
	}
	for _, cn := range members {
		c.steer(e, cc.Name, cn, members, routers)
		c.fenceMember(e, cn, fenced, routers)
	}
	return oneLine(problems)
}

// fenceLegacy drops, on a legacy zone's gateway router, what the network's pods on this
// node send to the connect's other networks. Upgraded zones route those networks' traffic
// into the network's switch, so it reaches pods here; their replies would otherwise
// take the gateway router's default route out of the cluster.
func (c *compiler) fenceLegacy(e *connectEmitter, cc *cluster.Connect, n *cluster.Network, networks map[string]*cluster.Network, routers *networkRouters) {
	nm := namesOf(n)
	gr := nm.GatewayRouter(c.local.Name)
	if !routers.has(gr) {
		return // the network did not compile here
	}
	for _, name := range cc.Networks {
		other := networks[name]
		if other == nil || other == n {
			continue
		}
		for _, dst := range subnetCIDRs(other) {
			e.policy(routers.edit(gr), dstMatch(routerToSwitch+nm.Layer2Switch(), dst), nbdb.LogicalRouterPolicyActionDrop, nil, n, other, c.local.Name)
		}
	}
}

// fenceMember drops, on a linked network's router in a legacy zone, what its pods here
// send to the Layer2 networks left out of the connect on this node: with no steering
// to them in this zone, it would leave the cluster by the default route. Their pods on
// upgraded nodes reach this network's pods here, but the replies stop here.
func (c *compiler) fenceMember(e *connectEmitter, cn *connectedNetwork, fenced []*cluster.Network, routers *networkRouters) {
	nr, ok := cn.router(routers)
	if !ok || len(fenced) == 0 {
		return
	}
	inport, node := c.podInport(cn)
	for _, other := range fenced {
		for _, dst := range subnetCIDRs(other) {
			e.policy(routers.edit(nr), dstMatch(inport, dst), nbdb.LogicalRouterPolicyActionDrop, nil, cn.net, other, node)
		}
	}
}

// podInport is the port through which a linked network's pods reach its router in this
// zone, and the node its policies belong to ("" for a Layer2 network's, shared).
func (c *compiler) podInport(cn *connectedNetwork) (inport, node string) {
	nm := namesOf(cn.net)
	if cn.net.Topology == cluster.Layer2 {
		return transitRouterToSwitch + nm.Layer2Switch(), ""
	}
	return routerToSwitch + nm.NodeSwitch(c.local.Name), c.local.Name
}

// dstMatch matches packets from inport to the subnet dst.
func dstMatch(inport string, dst netip.Prefix) string {
	return fmt.Sprintf("inport == %q && %s.dst == %s", inport, ipFamily(dst.Addr().Is6()), dst.Masked())
}

// maxProblems bounds how many problems a connect's error spells out: it becomes a line
// of the node's zone report.
const maxProblems = 5

// oneLine joins problems into one error of one line, nil if there are none.
func oneLine(problems []error) error {
	if len(problems) == 0 {
		return nil
	}
	texts := make([]string, 0, maxProblems+1)
	for _, p := range problems[:min(len(problems), maxProblems)] {
		texts = append(texts, p.Error())
	}
	if len(problems) > maxProblems {
		texts = append(texts, fmt.Sprintf("and %d more", len(problems)-maxProblems))
	}
	return errors.New(strings.Join(texts, "; "))
}

// connectedNetwork derives a network's links: one per node for Layer3, a node whose
// link cannot be derived being left out and reported; one for Layer2. It returns nil
// when the network has no block yet or no link can be derived at all.
func (c *compiler) connectedNetwork(cc *cluster.Connect, n *cluster.Network, compiled bool) (*connectedNetwork, []error) {
	blocks := cc.Blocks[n.Name]
	if len(blocks) == 0 {
		return nil, []error{fmt.Errorf("no block of the connect subnets yet (%s): waiting for the leader", cluster.AnnotationConnectSubnets)}
	}
	cn := &connectedNetwork{net: n, compiled: compiled}
	if n.Topology == cluster.Layer2 {
		l, err := deriveLink(cc, blocks, 0)
		if err != nil {
			return nil, []error{err}
		}
		cn.links = []connectLink{l}
		cn.local = &cn.links[0]
		return cn, nil
	}
	var errs []error
	for i, node := range c.state.Nodes {
		l, err := deriveLink(cc, blocks, node.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s (id %d) has no link: %w", node.Name, node.ID, err))
			continue
		}
		l.node, l.nodeIndex = node, i
		cn.links = append(cn.links, l)
	}
	for i := range cn.links {
		if cn.links[i].node == c.local {
			cn.local = &cn.links[i]
		}
	}
	if len(cn.links) == 0 {
		return nil, errs
	}
	return cn, errs
}

// deriveLink derives link index of a network from its blocks, one address pair per
// block, and the connect router port's tunnel key from the first block (the blocks of
// a network have the same index in every family).
func deriveLink(cc *cluster.Connect, blocks []netip.Prefix, index int) (connectLink, error) {
	var l connectLink
	for i, b := range blocks {
		sub, ok := connectSubnetOf(cc, b)
		if !ok {
			return l, fmt.Errorf("block %s is of an IP family the connect has no connect subnet of", b)
		}
		nw, cr, err := alloc.ConnectLink(b, index)
		if err != nil {
			return l, err
		}
		if i == 0 {
			if l.key, err = alloc.ConnectPortTunnelKey(sub.CIDR, sub.NetworkPrefix, nw); err != nil {
				return l, err
			}
		}
		l.network = append(l.network, nw)
		l.connect = append(l.connect, cr)
	}
	return l, nil
}

func connectSubnetOf(cc *cluster.Connect, block netip.Prefix) (cluster.ConnectSubnet, bool) {
	for _, s := range cc.Subnets {
		if s.CIDR.Addr().Is4() == block.Addr().Is4() {
			return s, true
		}
	}
	return cluster.ConnectSubnet{}, false
}

// claimKeys records the port tunnel keys of a network's links, failing if one is taken
// by another network of the connect (a block handed out twice): the later network in
// name order is left out, the same in every zone.
func claimKeys(keys map[int]string, cn *connectedNetwork) error {
	for _, l := range cn.links {
		if other, taken := keys[l.key]; taken {
			return fmt.Errorf("its link %s would take port tunnel key %d, which network %s's link has: their blocks overlap; each network needs a block of its own",
				l.network[0], l.key, other)
		}
	}
	for _, l := range cn.links {
		keys[l.key] = cn.net.Name
	}
	return nil
}

// link adds a network's links: on the connect router a port per link — peered with the
// network router's port for this zone's link, bound to its node's chassis for another
// node's — and a route to each subnet behind the link via the network router's
// address. This zone's link needs the network's router here; if the network did not
// compile, the link it had is kept (its rows carry the network) and no new one is made.
// Another node's link depends on that node alone: it is a piece of the connect's memo.
func (c *compiler) link(e *connectEmitter, cr *nbdb.LogicalRouter, cnc string, cn *connectedNetwork, routers *networkRouters) {
	n := cn.net
	nr, compiled := cn.router(routers)
	pieces := c.links(e, n)
	for _, l := range cn.links {
		if l.node == nil || l.node == c.local {
			if compiled {
				c.linkRows(e, cr, cnc, n, l, routers.edit(nr))
			}
			continue
		}
		// Another node's link never fails the connect.
		_ = pieces.emit(l.nodeIndex, func() nodeKey { return subnetsKey(n, l.node) }, nil, cr, func() error {
			c.linkRows(e, cr, cnc, n, l, nil)
			return nil
		})
	}
}

// linkRows adds one link of network n to the connect router cr: this zone's when nr,
// the network's router, is given, another node's when it is nil.
func (c *compiler) linkRows(e *connectEmitter, cr *nbdb.LogicalRouter, cnc string, n *cluster.Network, l connectLink, nr *nbdb.LogicalRouter) {
	node := ""
	if l.node != nil {
		node = l.node.Name
	}
	connectPort, networkPort := connectPortNames(cnc, n, node)
	p := &nbdb.LogicalRouterPort{
		Name:     connectPort,
		MAC:      alloc.MACFromIP(l.connect[0].Addr()).String(),
		Networks: prefixStrings(l.connect),
		Options:  map[string]string{"requested-tnl-key": strconv.Itoa(l.key)},
	}
	if nr != nil {
		p.Peer = &networkPort
		e.routerPort(nr, &nbdb.LogicalRouterPort{
			Name:     networkPort,
			MAC:      alloc.MACFromIP(l.network[0].Addr()).String(),
			Networks: prefixStrings(l.network),
			Peer:     &connectPort,
		}, n, node)
	} else {
		p.Options["requested-chassis"] = l.node.ChassisID
	}
	e.routerPort(cr, p, n, node)

	behind := subnetCIDRs(n)
	if l.node != nil {
		behind = l.node.Subnets[n.Name]
		if len(behind) == 0 {
			e.warnf("connect %s: network %s: node %s has no subnet yet; no route to it", cnc, n.Name, node)
		}
	}
	for _, s := range behind {
		if nh, ok := ofFamily(l.network, s.Addr().Is6()); ok {
			e.route(cr, s.Masked().String(), nh.Addr().String(), n, node)
		}
	}
}

// steer adds the policies on a network's router in this zone that send its pods'
// traffic for every other network of the connect to the connect router: matched on
// the router's port toward the pods, rerouted to the connect router's address on this
// zone's link. Replies take the same path from the other side.
func (c *compiler) steer(e *connectEmitter, cnc string, cn *connectedNetwork, members []*connectedNetwork, routers *networkRouters) {
	nr, ok := cn.router(routers)
	if !ok || cn.local == nil {
		return
	}
	inport, node := c.podInport(cn)
	for _, other := range members {
		if other == cn {
			continue
		}
		for _, dst := range subnetCIDRs(other.net) {
			nh, ok := ofFamily(cn.local.connect, dst.Addr().Is6())
			if !ok {
				continue
			}
			e.policy(routers.edit(nr), dstMatch(inport, dst), nbdb.LogicalRouterPolicyActionReroute, []string{nh.Addr().String()}, cn.net, other.net, node)
		}
	}
}

// router names the network's router in this zone that links to connect routers (the
// cluster router of a Layer3 network, the transit router of a Layer2 one), and reports
// whether the zone has it: not if the network did not compile here.
func (cn *connectedNetwork) router(routers *networkRouters) (string, bool) {
	if !cn.compiled {
		return "", false
	}
	nm := namesOf(cn.net)
	name := nm.ClusterRouter()
	if cn.net.Topology == cluster.Layer2 {
		name = nm.TransitRouter()
	}
	return name, routers.has(name)
}

// connectEmitter accumulates one connect's rows. Unlike a network's emitter it marks
// rows with the connect, and with the network each row concerns, if any.
type connectEmitter struct {
	cc       *cluster.Connect
	set      rows.Set
	warnings []string

	// The memo's record of the connect; nil when the compile has no memo.
	rec  *recorder
	prev *connectMemo // the last compile's record of the connect
	// reuse says prev's pieces may be reused as far as the connect and the zone-wide
	// inputs go; pieces are the links' pieces by network.
	reuse  bool
	pieces map[string]*nodePieces
}

func (c *compiler) newConnectEmitter(cc *cluster.Connect) *connectEmitter {
	e := &connectEmitter{cc: cc}
	if c.memo == nil {
		return e
	}
	e.rec = &recorder{set: &e.set, warnings: &e.warnings}
	e.pieces = map[string]*nodePieces{}
	if c.memo.prev != nil {
		e.prev = c.memo.prev.connects[cc.Name]
	}
	e.reuse = c.memo.reuse && e.prev != nil && reflect.DeepEqual(e.prev.cc, cc)
	return e
}

// links returns the list of network n's pieces, nil without a memo. They may be reused
// if the connect and the zone-wide inputs are unchanged: another node's link reads
// nothing of its network but the name (only a Layer3 network has them).
func (c *compiler) links(e *connectEmitter, n *cluster.Network) *nodePieces {
	if e.rec == nil {
		return nil
	}
	var old []*piece[nodeKey]
	if e.prev != nil {
		old = e.prev.links[n.Name]
	}
	l := c.newNodePieces(e.rec, old, e.reuse)
	e.pieces[n.Name] = l
	return l
}

// finishRecord interns the connect's rows outside pieces and returns its record, nil
// without a memo.
func (e *connectEmitter) finishRecord() *connectMemo {
	if e.rec == nil {
		return nil
	}
	var prevRows map[string]model.Model
	if e.prev != nil {
		prevRows = e.prev.rows
	}
	m := &connectMemo{cc: e.cc, rows: e.rec.intern(prevRows), links: make(map[string][]*piece[nodeKey], len(e.pieces))}
	for name, l := range e.pieces {
		m.links[name] = l.next
	}
	return m
}

func (e *connectEmitter) ids(id string, n *cluster.Network, node string) map[string]string {
	m := map[string]string{
		rows.OwnerControllerKey: rows.OwnerController,
		rows.OwnerTypeKey:       ConnectOwnerType,
		ConnectNameKey:          e.cc.Name,
		rows.IDKey:              id,
	}
	if n != nil {
		m[rows.NetworkKey] = n.Name
		m[rows.TopologyKey] = strings.ToLower(string(n.Topology))
	}
	if node != "" {
		m[rows.NodeKey] = node
	}
	return m
}

// router adds the connect router: a router of no single network, with the connect's
// datapath tunnel key, the same in every zone.
func (e *connectEmitter) router(name string, key int) *nbdb.LogicalRouter {
	id := "LR:" + name
	lr := &nbdb.LogicalRouter{UUID: id, Name: name, Options: map[string]string{"requested-tnl-key": strconv.Itoa(key)}, ExternalIDs: e.ids(id, nil, "")}
	e.set.Routers = append(e.set.Routers, lr)
	return lr
}

func (e *connectEmitter) routerPort(lr *nbdb.LogicalRouter, lrp *nbdb.LogicalRouterPort, n *cluster.Network, node string) {
	lrp.UUID = "LRP:" + lrp.Name
	lrp.ExternalIDs = e.ids(lrp.UUID, n, node)
	lr.Ports = append(lr.Ports, lrp.UUID)
	e.set.RouterPorts = append(e.set.RouterPorts, lrp)
}

func (e *connectEmitter) route(lr *nbdb.LogicalRouter, prefix, nexthop string, n *cluster.Network, node string) {
	id := fmt.Sprintf("route:%s:%s:dst-ip:%s", lr.Name, prefix, nexthop)
	e.set.Routes = append(e.set.Routes, &nbdb.LogicalRouterStaticRoute{UUID: id, IPPrefix: prefix, Nexthop: nexthop, ExternalIDs: e.ids(id, n, node)})
	lr.StaticRoutes = append(lr.StaticRoutes, id)
}

// policy adds a reroute policy; its identity names the connect, since two connects
// sharing two networks give the same match a different next hop.
func (e *connectEmitter) policy(lr *nbdb.LogicalRouter, match string, action nbdb.LogicalRouterPolicyAction, nexthops []string, n, dst *cluster.Network, node string) {
	id := fmt.Sprintf("policy:%s:%d:%s:%s", lr.Name, ConnectPolicyPriority, match, e.cc.Name)
	ids := e.ids(id, n, node)
	ids[DestinationNetworkKey] = dst.Name
	e.set.Policies = append(e.set.Policies, &nbdb.LogicalRouterPolicy{UUID: id, Priority: ConnectPolicyPriority, Match: match,
		Action: action, Nexthops: nexthops, ExternalIDs: ids})
	lr.Policies = append(lr.Policies, id)
}

func (e *connectEmitter) warnf(format string, args ...any) {
	e.warnings = append(e.warnings, fmt.Sprintf(format, args...))
}
