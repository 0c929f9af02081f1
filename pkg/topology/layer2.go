package topology

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// Tunnel keys of the transit router's ports, as upstream assigns them: a port of one
// zone only (the one facing the switch) takes a key of 1–9, and the peer port standing
// for a node's gateway router, which every zone has, 10 + the node's id, so it is the
// same in every zone and never meets a local port's key.
const (
	transitRouterSwitchPortKey = 1
	transitRouterPeerKeyBase   = 10
)

// upgradeSuffix ends the names of the two ports a transit-router zone keeps while other
// nodes still run the legacy Layer2 topology (OKEP-5094's upgrade topology).
const upgradeSuffix = "-upgrade"

// layer2 compiles a Layer2 network: one switch spanning every zone, with the local
// node's management port and pods and a remote port for every other node's pod. How
// the pods reach their gateway depends on the local node's Layer2 topology
// (Options.Layer2): OKEP-5094's transit router, or the legacy gateway router attached
// to the switch.
func (c *compiler) layer2(e *emitter, n *cluster.Network) error {
	nm := namesOf(n)
	node := c.local
	if len(n.TunnelKeys) != 2 {
		return fmt.Errorf("network %s needs 2 tunnel keys (switch, transit router) in k8s.ovn.org/tunnel-keys, has %v: waiting for the leader's allocation", n.Name, n.TunnelKeys)
	}
	if len(n.JoinSubnets) == 0 {
		return fmt.Errorf("network %s has no join subnets", n.Name)
	}
	switchName := nm.Layer2Switch()
	otherConfig := map[string]string{
		"interconn-ts":      switchName,
		"requested-tnl-key": strconv.Itoa(n.TunnelKeys[0]),
	}
	a, err := podSubnetAddrs(subnetCIDRs(n))
	if err != nil {
		return err
	}
	for k, v := range a.otherConfig {
		otherConfig[k] = v
	}
	grJoin, err := joinIPs(n, node)
	if err != nil {
		return err
	}
	ls := e.logicalSwitch(switchName, "", otherConfig)
	mp, err := ManagementPortOf(c.state.Config, n, node)
	if err != nil {
		return err
	}
	mgmtMAC := mp.MAC
	// Every node has a management port with the same addresses; each stays in its zone.
	e.switchPort(ls, &nbdb.LogicalSwitchPort{
		Name:      mp.LSP,
		Addresses: []string{macAndIPs(mgmtMAC, mp.addrs())},
		Options:   map[string]string{"requested-chassis": node.ChassisID},
	}, node.Name)
	l2 := &layer2Net{n: n, nm: nm, ls: ls, addrs: a, mgmtMAC: mgmtMAC, grJoin: grJoin}
	if c.opts.Layer2 == Layer2Legacy {
		err = c.layer2Legacy(e, l2)
	} else {
		err = c.layer2TransitRouter(e, l2)
	}
	if err != nil {
		return err
	}
	c.layer2Pods(e, n, ls)
	allowFromNode(e, ls, a.mgmtIPs)
	return nil
}

// layer2Net is what both Layer2 topologies build on.
type layer2Net struct {
	n       *cluster.Network
	nm      names
	ls      *nbdb.LogicalSwitch
	addrs   subnetAddrs
	mgmtMAC string
	grJoin  []netip.Prefix // the local gateway router's join IPs
}

// layer2TransitRouter builds OKEP-5094's topology: a transit router, spanning every
// zone, whose port on the switch holds the pods' gateway (.1 of each subnet) with a MAC
// derived from the IPv4 gateway. That port, and so the gateway's IP, MAC and IPv6
// link-local address, is identical on every node, so a pod or VM that moves keeps a
// valid gateway with no GARP or RA. The transit router reaches each node's gateway
// router through a /31 and /127 peer pair derived from the node id: a direct, peered
// router port for the local node, a remote port bound to the owning chassis for every
// other node on this topology.
//
// While some nodes still run the legacy topology, the zone also keeps OKEP-5094's
// upgrade pieces for them (legacyPeers).
func (c *compiler) layer2TransitRouter(e *emitter, l2 *layer2Net) error {
	n, nm, node := l2.n, l2.nm, c.local
	if len(n.TransitSubnets) == 0 {
		return fmt.Errorf("network %s has no transit subnets", n.Name)
	}
	for _, t := range n.TransitSubnets {
		for _, s := range n.Subnets {
			if t.Overlaps(s.CIDR) {
				return fmt.Errorf("network %s: transit subnet %s overlaps subnet %s; a non-overlapping transit subnet must be chosen", n.Name, t, s.CIDR)
			}
		}
	}
	switchName := nm.Layer2Switch()
	tr := e.logicalRouter(nm.TransitRouter(), "", map[string]string{"requested-tnl-key": strconv.Itoa(n.TunnelKeys[1])})
	trtos := e.routerPort(tr, &nbdb.LogicalRouterPort{Name: transitRouterToSwitch + switchName, MAC: alloc.MACFromIP(l2.addrs.gwIPs[0]).String(), Networks: l2.addrs.gwNetworks,
		Options: withGatewayMTU(n, map[string]string{"requested-tnl-key": strconv.Itoa(transitRouterSwitchPortKey)})}, "")
	e.routerLink(l2.ls, switchToTransitRouter+switchName, trtos.Name, "", nil)

	var localTR, localGR []netip.Prefix
	var legacy []*cluster.Node
	err := e.loop(loopTransitRouter, nil, tr, func() (err error) {
		localTR, localGR, legacy, err = c.transitRouterPeers(e, n, nm, tr)
		return err
	})
	if err != nil {
		return err
	}
	if err := c.legacyPeers(e, l2, tr, legacy); err != nil {
		return err
	}
	for _, cidr := range subnetCIDRs(n) {
		if nh, ok := ofFamily(localGR, cidr.Addr().Is6()); ok {
			e.route(tr, cidr.Masked().String(), nh.Addr().String(), "src-ip", "", node.Name)
		}
	}
	c.hostServiceRoutes(e, tr, l2.addrs.mgmtIPs)
	c.clusterPolicies(e, n, tr, trtos.Name, l2.addrs.mgmtIPs, switchName)
	if err := c.managementSNAT(e, n, tr, trtos, l2.mgmtMAC, subnetCIDRs(n)); err != nil {
		return err
	}

	// The gateway router keeps its join IP (conntrack and service NAT use it) and gains
	// the GR side of the peer pair on one port peered with the transit router.
	gr, err := c.gatewayRouter(e, n, l2.grJoin)
	if err != nil {
		return err
	}
	peer := transitRouterToRouter + gr.Name
	rtotr := e.routerPort(gr, &nbdb.LogicalRouterPort{
		Name:     routerToTransitRouter + gr.Name,
		MAC:      alloc.MACFromIP(l2.grJoin[0].Addr()).String(),
		Networks: prefixStrings(append(append([]netip.Prefix{}, l2.grJoin...), localGR...)),
		Peer:     &peer,
	}, node.Name)
	rtotr.Options = withGatewayMTU(n, nil)
	for _, cidr := range subnetCIDRs(n) {
		if nh, ok := ofFamily(localTR, cidr.Addr().Is6()); ok {
			e.route(gr, cidr.Masked().String(), nh.Addr().String(), "", rtotr.Name, node.Name)
		}
	}
	return nil
}

// transitRouterPeers adds the peer pairs of every node on the transit-router topology,
// the local one included, to the transit router tr, with routes to each gateway
// router's join IP through its node's peer pair. It returns the local node's pair,
// transit router side and gateway router side, and the nodes still on the legacy
// topology.
func (c *compiler) transitRouterPeers(e *emitter, n *cluster.Network, nm names, tr *nbdb.LogicalRouter) (localTR, localGR []netip.Prefix, legacy []*cluster.Node, err error) {
	node := c.local
	peers := c.derived.of(deriveTransitPeers, n.TransitSubnets)
	joins := c.derived.of(deriveJoinIP, n.JoinSubnets)
	nodes := len(c.state.Nodes)
	reserve(&tr.Ports, nodes)
	reserve(&e.set.RouterPorts, nodes)
	reserve(&tr.StaticRoutes, nodes*len(n.JoinSubnets))
	reserve(&e.set.Routes, nodes*len(n.JoinSubnets))
	var pairs, nodeJoins []*derived
	// peerPort adds node i's peer port, from its peer pairs (in pairs), and the routes
	// to its gateway router's join IPs.
	peerPort := func(i int, each *cluster.Node) error {
		grName := nm.GatewayRouter(each.Name)
		port := &nbdb.LogicalRouterPort{
			Name:     transitRouterToRouter + grName,
			MAC:      pairs[0].addr.mac,
			Networks: make([]string, len(pairs)),
			Options:  map[string]string{"requested-tnl-key": c.nodeTexts[i].peerKey},
		}
		for k, p := range pairs {
			port.Networks[k] = p.addr.text
		}
		if each == node {
			peer := routerToTransitRouter + grName
			port.Peer = &peer
		} else {
			port.Options["requested-chassis"] = each.ChassisID
		}
		e.routerPort(tr, port, each.Name)
		var err error
		if nodeJoins, err = nodeDerived(nodeJoins, joins, i); err != nil {
			return fmt.Errorf("network %s: node %s: %w", n.Name, each.Name, err)
		}
		for _, j := range nodeJoins {
			if nh, ok := derivedOfFamily(pairs, j.addr.prefix.Addr().Is6()); ok {
				e.route(tr, j.addr.host, nh.peer.ip, "", "", each.Name)
			}
		}
		return nil
	}
	for i, each := range c.state.Nodes {
		switch {
		case each == node:
			if pairs, err = nodeDerived(pairs, peers, i); err != nil {
				return nil, nil, nil, err
			}
			if err = peerPort(i, each); err != nil {
				return nil, nil, nil, err
			}
			localTR, localGR = splitPairs(pairs)
		case each.Layer2TransitRouter():
			err = e.nodes.emit(i, func() nodeKey { return nodeKey{name: each.Name, chassis: each.ChassisID, id: each.ID} }, nil, tr, func() error {
				var err error
				if pairs, err = nodeDerived(pairs, peers, i); err != nil {
					e.warnf("network %s: node %s skipped: %v", n.Name, each.Name, err)
					return nil
				}
				return peerPort(i, each)
			})
			if err != nil {
				return nil, nil, nil, err
			}
		default:
			legacy = append(legacy, each)
		}
	}
	return localTR, localGR, legacy, nil
}

// legacyPeers keeps the nodes that still run the legacy Layer2 topology reachable
// from a transit-router zone, as OKEP-5094's upgrade topology does:
//
//   - their gateway routers stay remote ports of the switch ("stor-GR_…", with their
//     tunnel keys), so the transit router can resolve their join IPs;
//   - a router port "stotr-<switch>-upgrade" keeps this node's old gateway port tunnel
//     key, so what legacy nodes send to this node's gateway router (its join IP and
//     MAC, as they still see it) arrives, on "trtos-<switch>-upgrade": a transit router
//     port with the gateway router's MAC and a dummy address of the join subnet, which
//     makes the join subnet connected;
//   - a /32 (/128) route per legacy node's join IP, via that IP itself (which only the
//     upgrade port's connected subnet holds): without it the pods' src-ip route to the gateway router would win
//     over the join subnet's connected route whenever the pod subnet is longer than it.
//
// The local node's own join IP is routed through its peer pair, by the longer prefix.
// Nothing is added once every node runs the transit-router topology.
func (c *compiler) legacyPeers(e *emitter, l2 *layer2Net, tr *nbdb.LogicalRouter, legacy []*cluster.Node) error {
	if len(legacy) == 0 {
		return nil
	}
	n, nm := l2.n, l2.nm
	key, ok := c.local.Layer2GatewayTunnelIDs[n.Name]
	if !ok {
		return fmt.Errorf("network %s: node %s has no gateway port tunnel key in %s, which nodes still on the legacy Layer2 topology (%s) need: waiting for the leader's allocation",
			n.Name, c.local.Name, cluster.AnnotationLayer2GatewayTunnelIDs, legacy[0].Name)
	}
	// The dummy address must be no gateway router's: with a small join subnet, a high
	// node id reaches the subnet's top.
	nodeJoinIPs := map[netip.Addr]bool{}
	for _, each := range c.state.Nodes {
		joins, _ := joinIPs(n, each) // a node without one is reported where it is used
		for _, j := range joins {
			nodeJoinIPs[j.Addr()] = true
		}
	}
	var dummies []netip.Prefix
	for _, j := range n.JoinSubnets {
		d, err := alloc.UpgradeJoinIP(j, func(a netip.Addr) bool { return nodeJoinIPs[a] })
		if err != nil {
			return fmt.Errorf("network %s: %w", n.Name, err)
		}
		dummies = append(dummies, d)
	}
	switchName := nm.Layer2Switch()
	upgrade := e.routerPort(tr, &nbdb.LogicalRouterPort{
		Name:     transitRouterToSwitch + switchName + upgradeSuffix,
		MAC:      alloc.MACFromIP(l2.grJoin[0].Addr()).String(),
		Networks: prefixStrings(dummies),
	}, c.local.Name)
	e.routerLink(l2.ls, switchToTransitRouter+switchName+upgradeSuffix, upgrade.Name, c.local.Name,
		map[string]string{"requested-tnl-key": strconv.Itoa(key)})
	for _, each := range legacy {
		err := e.gateways.emit(c.nodeIndex[each.Name], func() nodeKey { return gatewayKey(n, each) }, l2.ls, tr, func() error {
			if !c.remoteGatewayPort(e, n, nm, l2.ls, each) {
				return nil
			}
			joins, err := joinIPs(n, each)
			if err != nil {
				return err
			}
			for _, j := range joins {
				e.route(tr, hostPrefix(j.Addr()), j.Addr().String(), "", "", each.Name)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// gatewayKey is what a remote node's legacy gateway port reads of it (remoteGatewayPort).
func gatewayKey(n *cluster.Network, node *cluster.Node) nodeKey {
	key, ok := node.Layer2GatewayTunnelIDs[n.Name]
	return nodeKey{name: node.Name, chassis: node.ChassisID, id: node.ID, gatewayKey: key, hasGatewayKey: ok}
}

// layer2Legacy builds the Layer2 topology before OKEP-5094: the local gateway router is
// attached to the switch by a port holding both its join IPs and the pods' gateway
// addresses, and is the pods' only router (cluster policies, host service routes and
// the management port's SNAT live on it). Every other node's gateway router is a
// remote port of the switch with its join IPs and MAC, keyed by the tunnel key the
// leader gave that node's gateway port on this network.
func (c *compiler) layer2Legacy(e *emitter, l2 *layer2Net) error {
	n, nm, node := l2.n, l2.nm, c.local
	key, ok := node.Layer2GatewayTunnelIDs[n.Name]
	if !ok {
		return fmt.Errorf("network %s: node %s has no gateway port tunnel key in %s: waiting for the leader's allocation",
			n.Name, node.Name, cluster.AnnotationLayer2GatewayTunnelIDs)
	}
	gr, err := c.gatewayRouter(e, n, l2.grJoin)
	if err != nil {
		return err
	}
	switchName := nm.Layer2Switch()
	rtos := e.routerPort(gr, &nbdb.LogicalRouterPort{
		Name:     routerToSwitch + switchName,
		MAC:      alloc.MACFromIP(l2.grJoin[0].Addr()).String(),
		Networks: append(prefixStrings(l2.grJoin), l2.addrs.gwNetworks...),
	}, node.Name)
	rtos.Options = withGatewayMTU(n, nil)
	e.routerLink(l2.ls, switchToRouter+gr.Name, rtos.Name, node.Name, map[string]string{"requested-tnl-key": strconv.Itoa(key)})
	err = e.loop(loopLegacyGateways, l2.ls, nil, func() error { return c.legacyGateways(e, n, nm, l2.ls) })
	if err != nil {
		return err
	}
	c.hostServiceRoutes(e, gr, l2.addrs.mgmtIPs)
	c.clusterPolicies(e, n, gr, rtos.Name, l2.addrs.mgmtIPs, switchName)
	// A gateway router is bound to its chassis: the SNAT needs no gateway port.
	return c.managementSNAT(e, n, gr, nil, l2.mgmtMAC, subnetCIDRs(n))
}

// legacyGateways adds every other node's legacy gateway router port to the switch ls
// (remoteGatewayPort).
func (c *compiler) legacyGateways(e *emitter, n *cluster.Network, nm names, ls *nbdb.LogicalSwitch) error {
	for i, each := range c.state.Nodes {
		if each == c.local {
			continue
		}
		err := e.gateways.emit(i, func() nodeKey { return gatewayKey(n, each) }, ls, nil, func() error {
			c.remoteGatewayPort(e, n, nm, ls, each)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// remoteGatewayPort adds another node's legacy gateway router port to the switch ls as
// a remote port: its MAC and join IPs, so the switch answers ARP/ND for them, and the
// tunnel key under which that node's zone receives. It reports false, with a warning,
// when the node cannot have one yet.
func (c *compiler) remoteGatewayPort(e *emitter, n *cluster.Network, nm names, ls *nbdb.LogicalSwitch, node *cluster.Node) bool {
	key, ok := node.Layer2GatewayTunnelIDs[n.Name]
	if !ok {
		e.warnf("network %s: node %s has no gateway port tunnel key in %s yet; its gateway router is unreachable from this zone",
			n.Name, node.Name, cluster.AnnotationLayer2GatewayTunnelIDs)
		return false
	}
	joins, err := joinIPs(n, node)
	if err != nil {
		e.warnf("network %s: node %s skipped: %v", n.Name, node.Name, err)
		return false
	}
	ips := make([]netip.Addr, len(joins))
	for i, j := range joins {
		ips[i] = j.Addr()
	}
	e.switchPort(ls, &nbdb.LogicalSwitchPort{
		Name:      switchToRouter + nm.GatewayRouter(node.Name),
		Type:      "remote",
		Addresses: []string{macAndIPs(alloc.MACFromIP(ips[0]).String(), ips)},
		Options:   map[string]string{"requested-chassis": node.ChassisID, "requested-tnl-key": strconv.Itoa(key)},
	}, node.Name)
	return true
}

// hostServiceRoutes sends the ClusterIPs the host serves (API server, DNS) to the
// management port.
func (c *compiler) hostServiceRoutes(e *emitter, lr *nbdb.LogicalRouter, mgmtIPs []netip.Addr) {
	for _, svc := range c.state.Config.HostServiceIPs {
		if mgmt, ok := addrOfFamily(mgmtIPs, svc.Is6()); ok {
			e.route(lr, svc.String(), mgmt.String(), "", "", c.local.Name)
		}
	}
}

// joinIPs are a node's gateway router join IPs on network n, one per join subnet.
func joinIPs(n *cluster.Network, node *cluster.Node) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(n.JoinSubnets))
	for _, j := range n.JoinSubnets {
		g, err := alloc.GatewayRouterJoinIP(j, node.ID)
		if err != nil {
			return nil, fmt.Errorf("network %s: node %s: %w", n.Name, node.Name, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// splitPairs returns the transit-router and gateway-router sides of a node's derived
// peer pairs.
func splitPairs(pairs []*derived) (trSide, grSide []netip.Prefix) {
	for _, p := range pairs {
		trSide = append(trSide, p.addr.prefix)
		grSide = append(grSide, p.peer.prefix)
	}
	return trSide, grSide
}
