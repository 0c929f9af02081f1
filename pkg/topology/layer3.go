package topology

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// layer3 compiles a routed network: the local node's switch with its subnet, the
// cluster router, the join switch and gateway router, and the transit switch that joins
// this zone's cluster router to every other zone's, with a remote port per other node.
func (c *compiler) layer3(e *emitter, n *cluster.Network) error {
	nm := namesOf(n)
	node := c.local
	nodeSubnets := node.Subnets[n.Name]
	if len(nodeSubnets) == 0 {
		return fmt.Errorf("node %s has no subnet of network %s yet (k8s.ovn.org/node-subnets): waiting for the leader to allocate one", node.Name, n.Name)
	}
	if len(n.JoinSubnets) == 0 || len(n.TransitSubnets) == 0 {
		return fmt.Errorf("network %s has no join or transit subnets", n.Name)
	}

	// The node switch and the cluster router's port on it.
	switchName := nm.NodeSwitch(node.Name)
	a, err := podSubnetAddrs(nodeSubnets)
	if err != nil {
		return err
	}
	otherConfig, gwNetworks, gwIPs, mgmtIPs := a.otherConfig, a.gwNetworks, a.gwIPs, a.mgmtIPs
	ls := e.logicalSwitch(switchName, node.Name, otherConfig)
	cr := e.logicalRouter(nm.ClusterRouter(), "", nil)
	rtos := e.routerPort(cr, &nbdb.LogicalRouterPort{Name: routerToSwitch + switchName, MAC: alloc.MACFromIP(gwIPs[0]).String(), Networks: gwNetworks,
		Options: withGatewayMTU(n, nil)}, node.Name)
	e.routerLink(ls, switchToRouter+switchName, rtos.Name, node.Name, nil)
	mp, err := ManagementPortOf(c.state.Config, n, node)
	if err != nil {
		return err
	}
	mgmtMAC := mp.MAC
	e.switchPort(ls, &nbdb.LogicalSwitchPort{Name: mp.LSP, Addresses: []string{macAndIPs(mgmtMAC, mp.addrs())}}, node.Name)

	// The join switch links the cluster router (.1 of the join subnet) to the gateway
	// router (join base + node id).
	join := e.logicalSwitch(nm.JoinSwitch(), "", nil)
	var crJoin []netip.Addr
	var crJoinNetworks []string
	var grJoin []netip.Prefix
	for _, j := range n.JoinSubnets {
		a, err := alloc.NthAddr(j, 1)
		if err != nil {
			return fmt.Errorf("cluster router join IP in %s: %w", j, err)
		}
		crJoin = append(crJoin, a)
		crJoinNetworks = append(crJoinNetworks, netip.PrefixFrom(a, j.Bits()).String())
		g, err := alloc.GatewayRouterJoinIP(j, node.ID)
		if err != nil {
			return err
		}
		grJoin = append(grJoin, g)
	}
	rtoj := e.routerPort(cr, &nbdb.LogicalRouterPort{Name: routerToJoin + cr.Name, MAC: alloc.MACFromIP(crJoin[0]).String(), Networks: crJoinNetworks}, "")
	e.routerLink(join, joinToRouter+cr.Name, rtoj.Name, "", nil)

	gr, err := c.gatewayRouter(e, n, grJoin)
	if err != nil {
		return err
	}
	grJoinPort := e.routerPort(gr, &nbdb.LogicalRouterPort{Name: routerToJoin + gr.Name, MAC: alloc.MACFromIP(grJoin[0].Addr()).String(), Networks: prefixStrings(grJoin),
		Options: withGatewayMTU(n, nil)}, node.Name)
	e.routerLink(join, joinToRouter+gr.Name, grJoinPort.Name, node.Name, nil)
	for _, cidr := range subnetCIDRs(n) {
		if nh, ok := addrOfFamily(crJoin, cidr.Addr().Is6()); ok {
			e.route(gr, cidr.String(), nh.String(), "", "", node.Name)
		}
	}
	// Pods leave the cluster through their own node's gateway router: the node's
	// subnet, and the whole network for addresses this node hands out beyond it (as
	// upstream writes both).
	for _, s := range append(slices.Clone(nodeSubnets), subnetCIDRs(n)...) {
		if g, ok := ofFamily(grJoin, s.Addr().Is6()); ok {
			e.route(cr, s.Masked().String(), g.Addr().String(), "src-ip", "", node.Name)
		}
	}

	if err := c.transitSwitch(e, n, nm, cr); err != nil {
		return err
	}
	c.clusterPolicies(e, n, cr, rtos.Name, mgmtIPs, switchName)
	if !n.IsDefault() {
		if err := c.masqueradeReroute(e, n, cr, rtos.Name, mgmtIPs, switchName); err != nil {
			return err
		}
		if err := c.managementSNAT(e, n, cr, rtos, mgmtMAC, nodeSubnets); err != nil {
			return err
		}
		c.hostServiceRoutes(e, cr, mgmtIPs)
	}
	locked := c.localPods(e, n, ls)
	if n.IsDefault() {
		udnIsolation(e, locked, mgmtIPs)
	}
	allowFromNode(e, ls, mgmtIPs)
	return nil
}

// transitSwitch joins this zone's cluster router to every other zone's: a router port
// on the transit switch for the local node, a remote port for each other node (its
// tunnel key is its node id, the same in every zone), and routes to every other node's
// subnets and gateway router via its transit switch address.
func (c *compiler) transitSwitch(e *emitter, n *cluster.Network, nm names, cr *nbdb.LogicalRouter) error {
	key, err := transitSwitchKey(n)
	if err != nil {
		return err
	}
	tsName := nm.TransitSwitch()
	ts := e.logicalSwitch(tsName, "", map[string]string{
		"interconn-ts":             tsName,
		"requested-tnl-key":        strconv.Itoa(key),
		"mcast_snoop":              "true",
		"mcast_querier":            "false",
		"mcast_flood_unregistered": "true",
	})
	node := c.local
	localIPs, err := transitSwitchIPs(n, node)
	if err != nil {
		return err
	}
	// The router port floods multicast onto the transit switch, so multicast between
	// zones reaches the other nodes' routers.
	rtots := e.routerPort(cr, &nbdb.LogicalRouterPort{Name: nm.TransitSwitchRouterPort(node.Name), MAC: alloc.MACFromIP(localIPs[0].Addr()).String(), Networks: prefixStrings(localIPs),
		Options: map[string]string{"mcast_flood": "true"}}, node.Name)
	e.routerLink(ts, nm.TransitSwitchPort(node.Name), rtots.Name, node.Name, map[string]string{"requested-tnl-key": nodeIDOption(node.ID)})
	return e.loop(loopTransitSwitch, ts, cr, func() error { return c.transitSwitchRemotes(e, n, nm, ts, cr) })
}

// transitSwitchRemotes adds, for every other node, its remote port on the transit
// switch ts and the routes of the cluster router cr to its subnets and gateway router.
func (c *compiler) transitSwitchRemotes(e *emitter, n *cluster.Network, nm names, ts *nbdb.LogicalSwitch, cr *nbdb.LogicalRouter) error {
	node := c.local
	transit := c.derived.of(deriveTransitSwitchIP, n.TransitSubnets)
	joins := c.derived.of(deriveJoinIP, n.JoinSubnets)
	remotes := len(c.state.Nodes) - 1
	routes := remotes * (len(n.Subnets) + len(n.JoinSubnets))
	reserve(&ts.Ports, remotes)
	reserve(&e.set.SwitchPorts, remotes)
	reserve(&cr.StaticRoutes, routes)
	reserve(&e.set.Routes, routes)
	var ips []*derived
	for i, remote := range c.state.Nodes {
		if remote == node {
			continue
		}
		err := e.nodes.emit(i, func() nodeKey { return subnetsKey(n, remote) }, ts, cr, func() error {
			var err error
			if ips, err = nodeDerived(ips, transit, i); err != nil {
				e.warnf("network %s: remote node %s skipped: %v", n.Name, remote.Name, err)
				return nil
			}
			e.switchPort(ts, &nbdb.LogicalSwitchPort{
				Name:      nm.TransitSwitchPort(remote.Name),
				Type:      "remote",
				Addresses: []string{macAndDerived(ips)},
				Options:   map[string]string{"requested-tnl-key": c.nodeTexts[i].idOption, "requested-chassis": remote.ChassisID},
			}, remote.Name)

			subnets := remote.Subnets[n.Name]
			if len(subnets) == 0 {
				e.warnf("network %s: node %s has no subnet yet; no route to it", n.Name, remote.Name)
			}
			for _, s := range subnets {
				if nh, ok := derivedOfFamily(ips, s.Addr().Is6()); ok {
					e.route(cr, prefixText(s.Masked()), nh.addr.ip, "", "", remote.Name)
				}
			}
			for j, join := range n.JoinSubnets {
				g := joins[j][i]
				if g.err != nil {
					e.warnf("network %s: node %s: %v", n.Name, remote.Name, g.err)
					continue
				}
				if nh, ok := derivedOfFamily(ips, join.Addr().Is6()); ok {
					e.route(cr, g.addr.host, nh.addr.ip, "", "", remote.Name)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// subnetsKey is what a remote node's piece reads of it on a Layer3 network, n: its
// transit switch port and routes, or its connect link.
func subnetsKey(n *cluster.Network, node *cluster.Node) nodeKey {
	return nodeKey{name: node.Name, chassis: node.ChassisID, id: node.ID, subnets: node.Subnets[n.Name]}
}

// transitSwitchKey is the transit switch's tunnel key: the first of the network's
// k8s.ovn.org/tunnel-keys, or the key derived from its network id.
func transitSwitchKey(n *cluster.Network) (int, error) {
	if len(n.TunnelKeys) > 0 {
		return n.TunnelKeys[0], nil
	}
	key, err := alloc.TransitSwitchTunnelKey(n.ID)
	if err != nil {
		return 0, fmt.Errorf("network %s: %w", n.Name, err)
	}
	return key, nil
}

// transitSwitchIPs derives a node's transit switch addresses from its id, one per
// transit subnet family.
func transitSwitchIPs(n *cluster.Network, node *cluster.Node) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, t := range n.TransitSubnets {
		ip, err := alloc.TransitSwitchIP(t, node.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, ip)
	}
	return out, nil
}

// macAndIPs is an address entry of a logical switch port: "MAC IP IP…".
func macAndIPs(mac string, ips []netip.Addr) string {
	s := mac
	for _, ip := range ips {
		s += " " + ip.String()
	}
	return s
}

// prefixText is p.String() in one allocation rather than two: a zone writes every
// other node's subnets, once per Layer3 network.
func prefixText(p netip.Prefix) string {
	if !p.IsValid() {
		return p.String() // "invalid Prefix", where AppendTo writes nothing
	}
	var buf [len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128")]byte
	return string(p.AppendTo(buf[:0]))
}

// macAndDerived is an address entry with prefix lengths, as remote router ports carry:
// the MAC derived from the first address, then every address.
func macAndDerived(ds []*derived) string {
	n := len(ds[0].addr.mac)
	for _, d := range ds {
		n += 1 + len(d.addr.text)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(ds[0].addr.mac)
	for _, d := range ds {
		b.WriteByte(' ')
		b.WriteString(d.addr.text)
	}
	return b.String()
}
