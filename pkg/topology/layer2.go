package topology

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// layer2 compiles a Layer2 network with OKEP-5094's transit router: one switch spanning
// every zone, and a transit router — also spanning every zone — whose port on the switch
// holds the pods' gateway (.1 of each subnet) with a MAC derived from the IPv4 gateway.
// That port, and so the gateway's IP, MAC and IPv6 link-local address, is identical on
// every node, so a pod or VM that moves keeps a valid gateway with no GARP or RA. The
// transit router reaches each node's gateway router through a /31 and /127 peer pair
// derived from the node id: a direct, peered router port for the local node, a remote
// port bound to the owning chassis for every other node.
func (c *compiler) layer2(e *emitter, n *cluster.Network) error {
	nm := namesOf(n)
	node := c.local
	if len(n.TunnelKeys) != 2 {
		return fmt.Errorf("network %s needs 2 tunnel keys (switch, transit router) in k8s.ovn.org/tunnel-keys, has %v: waiting for the leader's allocation", n.Name, n.TunnelKeys)
	}
	if len(n.JoinSubnets) == 0 || len(n.TransitSubnets) == 0 {
		return fmt.Errorf("network %s has no join or transit subnets", n.Name)
	}
	for _, t := range n.TransitSubnets {
		for _, s := range n.Subnets {
			if t.Overlaps(s.CIDR) {
				return fmt.Errorf("network %s: transit subnet %s overlaps subnet %s; a non-overlapping transit subnet must be chosen", n.Name, t, s.CIDR)
			}
		}
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
	gwNetworks, gwIPs, mgmtIPs := a.gwNetworks, a.gwIPs, a.mgmtIPs
	for k, v := range a.otherConfig {
		otherConfig[k] = v
	}
	ls := e.logicalSwitch(switchName, "", otherConfig)
	tr := e.logicalRouter(nm.TransitRouter(), "", map[string]string{"requested-tnl-key": strconv.Itoa(n.TunnelKeys[1])})
	trtos := e.routerPort(tr, &nbdb.LogicalRouterPort{Name: transitRouterToSwitch + switchName, MAC: alloc.MACFromIP(gwIPs[0]).String(), Networks: gwNetworks}, "")
	e.routerLink(ls, switchToTransitRouter+switchName, trtos.Name, "", nil)
	mgmtMAC := alloc.MACFromIP(mgmtIPs[0]).String()
	// Every node has a management port with the same addresses; each stays in its zone.
	e.switchPort(ls, &nbdb.LogicalSwitchPort{
		Name:      nm.ManagementPort(node.Name),
		Addresses: []string{macAndIPs(mgmtMAC, mgmtIPs)},
		Options:   map[string]string{"requested-chassis": node.ChassisID},
	}, node.Name)

	// Peer pairs and routes for every node, the local one included: each gateway
	// router's join IP is reached through that node's peer pair.
	var localTR, localGR []netip.Prefix
	for _, each := range c.state.Nodes {
		trSide, grSide, err := peerPairs(n, each)
		if err != nil {
			if each == node {
				return err
			}
			e.warnf("network %s: node %s skipped: %v", n.Name, each.Name, err)
			continue
		}
		grName := nm.GatewayRouter(each.Name)
		port := &nbdb.LogicalRouterPort{
			Name:     transitRouterToRouter + grName,
			MAC:      alloc.MACFromIP(trSide[0].Addr()).String(),
			Networks: prefixStrings(trSide),
			Options:  map[string]string{"requested-tnl-key": nodeIDOption(each.ID)},
		}
		if each == node {
			peer := routerToTransitRouter + grName
			port.Peer = &peer
			localTR, localGR = trSide, grSide
		} else {
			port.Options["requested-chassis"] = each.ChassisID
		}
		e.routerPort(tr, port, each.Name)
		for _, j := range n.JoinSubnets {
			joinIP, err := alloc.GatewayRouterJoinIP(j, each.ID)
			if err != nil {
				return fmt.Errorf("network %s: node %s: %w", n.Name, each.Name, err)
			}
			if nh, ok := ofFamily(grSide, j.Addr().Is6()); ok {
				e.route(tr, hostRoute(joinIP.Addr()), nh.Addr().String(), "", "", each.Name)
			}
		}
	}
	for _, cidr := range subnetCIDRs(n) {
		if nh, ok := ofFamily(localGR, cidr.Addr().Is6()); ok {
			e.route(tr, cidr.Masked().String(), nh.Addr().String(), "src-ip", "", node.Name)
		}
	}
	for _, svc := range c.state.Config.HostServiceIPs {
		if mgmt, ok := addrOfFamily(mgmtIPs, svc.Is6()); ok {
			e.route(tr, hostRoute(svc), mgmt.String(), "", "", node.Name)
		}
	}
	c.clusterPolicies(e, n, tr, trtos.Name, mgmtIPs, switchName)
	if err := c.managementSNAT(e, n, tr, trtos, mgmtMAC); err != nil {
		return err
	}

	// The gateway router keeps its join IP (conntrack and service NAT use it) and gains
	// the GR side of the peer pair on one port peered with the transit router.
	var grJoin []netip.Prefix
	for _, j := range n.JoinSubnets {
		g, err := alloc.GatewayRouterJoinIP(j, node.ID)
		if err != nil {
			return err
		}
		grJoin = append(grJoin, g)
	}
	gr, err := c.gatewayRouter(e, n, grJoin)
	if err != nil {
		return err
	}
	peer := transitRouterToRouter + gr.Name
	rtotr := e.routerPort(gr, &nbdb.LogicalRouterPort{
		Name:     routerToTransitRouter + gr.Name,
		MAC:      alloc.MACFromIP(grJoin[0].Addr()).String(),
		Networks: prefixStrings(append(append([]netip.Prefix{}, grJoin...), localGR...)),
		Peer:     &peer,
	}, node.Name)
	if n.MTU > 0 {
		rtotr.Options = map[string]string{"gateway_mtu": strconv.Itoa(n.MTU)}
	}
	for _, cidr := range subnetCIDRs(n) {
		if nh, ok := ofFamily(localTR, cidr.Addr().Is6()); ok {
			e.route(gr, cidr.Masked().String(), nh.Addr().String(), "", rtotr.Name, node.Name)
		}
	}
	c.layer2Pods(e, n, ls)
	return nil
}

// peerPairs derives a node's transit-router-side and gateway-router-side addresses,
// one of each per transit subnet family.
func peerPairs(n *cluster.Network, node *cluster.Node) (trSide, grSide []netip.Prefix, err error) {
	for _, t := range n.TransitSubnets {
		a, b, err := alloc.TransitPeers(t, node.ID)
		if err != nil {
			return nil, nil, err
		}
		trSide = append(trSide, a)
		grSide = append(grSide, b)
	}
	return trSide, grSide, nil
}
