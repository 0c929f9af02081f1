package topology

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// PhysicalNetwork is the bridge mapping name of the external bridge (breth0/br-ex): the
// localnet ports name it, and the node maps it to its gateway bridge
// (ovn-bridge-mappings).
const PhysicalNetwork = "physnet"

// Offset of the masquerade dummy next hop (169.254.0.4, fd69::4) that the gateway
// router sends host-bound masqueraded traffic to.
const dummyNextHopOffset = 4

// gatewayRouter builds the local node's gateway router of network n with its external
// port, external switch, default and masquerade routes and SNAT. The caller attaches its
// cluster-facing port (a join switch port for Layer3, a transit router peer for Layer2).
func (c *compiler) gatewayRouter(e *emitter, n *cluster.Network, joinIPs []netip.Prefix) (*nbdb.LogicalRouter, error) {
	nm := namesOf(n)
	node := c.local
	gw := node.Gateway
	if len(gw.IPs) == 0 || gw.MAC == "" || gw.InterfaceID == "" {
		return nil, fmt.Errorf("node %s has no usable gateway configuration (k8s.ovn.org/l3-gateway-config needs ip-addresses, mac-address and interface-id)", node.Name)
	}
	grName := nm.GatewayRouter(node.Name)
	grOptions := map[string]string{
		"chassis":                       node.ChassisID,
		"lb_force_snat_ip":              "router_ip",
		"snat-ct-zone":                  "0",
		"always_learn_from_arp_request": "false",
		"dynamic_neigh_routers":         "true",
		"mac_binding_age_threshold":     "300",
	}
	// The external port announces the router's addresses (EgressIPs move between
	// nodes) but not load-balancer VIPs, which would flood the network. A user-defined
	// network's gateway router shares the node's address with the default network's:
	// it announces nothing, or every network would claim the node's address.
	etorOptions := map[string]string{"router-port": routerToExternal + grName}
	if n.IsDefault() {
		etorOptions["nat-addresses"] = "router"
		etorOptions["exclude-lb-vips-from-garp"] = "true"
	} else {
		grOptions["disable_garp_rarp"] = "true"
	}
	gr := e.logicalRouter(grName, node.Name, grOptions)

	// A user-defined network's traffic leaves its gateway router with the network's
	// masquerade address, which the external port holds beside the node's (as a host
	// address, so it claims no subnet).
	rtoeNetworks := prefixStrings(gw.IPs)
	for _, v6 := range []bool{false, true} {
		if _, ok := ofFamily(gw.IPs, v6); !ok || n.IsDefault() {
			continue
		}
		masq, err := c.masqueradeIP(n, v6)
		if err != nil {
			return nil, err
		}
		rtoeNetworks = append(rtoeNetworks, hostPrefix(masq))
	}
	rtoe := e.routerPort(gr, &nbdb.LogicalRouterPort{Name: routerToExternal + grName, MAC: gw.MAC, Networks: rtoeNetworks}, node.Name)
	ext := e.logicalSwitch(nm.ExternalSwitch(node.Name), node.Name, nil)
	localnet := &nbdb.LogicalSwitchPort{
		Name:      LocalnetPortOf(n, node),
		Type:      "localnet",
		Addresses: []string{"unknown"},
		Options:   map[string]string{"network_name": PhysicalNetwork},
	}
	if gw.VLANID != 0 {
		vlan := gw.VLANID
		localnet.TagRequest = &vlan
	}
	e.switchPort(ext, localnet, node.Name)
	e.switchPort(ext, &nbdb.LogicalSwitchPort{
		Name:      externalToRouter + grName,
		Type:      "router",
		Addresses: []string{gw.MAC},
		Options:   etorOptions,
	}, node.Name)

	for _, v6 := range []bool{false, true} {
		nodeIP, ok := ofFamily(gw.IPs, v6)
		if !ok {
			continue
		}
		if nh, ok := addrOfFamily(gw.NextHops, v6); ok {
			def := "0.0.0.0/0"
			if v6 {
				def = "::/0"
			}
			e.route(gr, def, nh.String(), "", rtoe.Name, node.Name)
		}
		if masq, ok := ofFamily(c.state.Config.MasqueradeSubnets, v6); ok {
			nh, err := alloc.NthAddr(masq, dummyNextHopOffset)
			if err != nil {
				return nil, fmt.Errorf("masquerade next hop: %w", err)
			}
			e.route(gr, masq.Masked().String(), nh.String(), "", rtoe.Name, node.Name)
		}
		external, err := c.snatAddress(n, nodeIP.Addr(), v6)
		if err != nil {
			return nil, err
		}
		if cidr, ok := ofFamily(subnetCIDRs(n), v6); ok {
			e.snat(gr, external, cidr.String(), "", "", node.Name)
		}
		// Traffic the gateway router itself sources from its join IP (ICMP "needs
		// fragmentation" replies) leaves with the network's address too.
		if join, ok := ofFamily(joinIPs, v6); ok {
			e.snat(gr, external, join.Addr().String(), "", "", node.Name)
		}
	}
	return gr, nil
}

// snatAddress is the address a network's pod traffic leaves the gateway router with:
// the node's for the default network; the network's own masquerade address for a
// user-defined network, which the host then masquerades to the node's address, so
// replies find their way back to the right network.
func (c *compiler) snatAddress(n *cluster.Network, nodeIP netip.Addr, v6 bool) (string, error) {
	if n.IsDefault() {
		return nodeIP.String(), nil
	}
	grIP, err := c.masqueradeIP(n, v6)
	if err != nil {
		return "", err
	}
	return grIP.String(), nil
}

// masqueradeIP is a user-defined network's gateway router masquerade address.
func (c *compiler) masqueradeIP(n *cluster.Network, v6 bool) (netip.Addr, error) {
	gr, _, err := masqueradeIPs(c.state.Config, n, v6)
	return gr, err
}

// managementSNAT masquerades traffic from the pods of subnets (the node's subnet of a
// Layer3 network, the whole of a Layer2 one) to the management port, so the host sees
// it from the network's masquerade address. On a distributed router the
// NAT sits on port, the router port facing the pods' switch, which therefore becomes a
// gateway port of this chassis; a gateway router (port nil) is bound to its chassis
// already.
func (c *compiler) managementSNAT(e *emitter, n *cluster.Network, router *nbdb.LogicalRouter, port *nbdb.LogicalRouterPort, mgmtMAC string, subnets []netip.Prefix) error {
	portName := ""
	if port != nil {
		portName = port.Name
	}
	for _, v6 := range []bool{false, true} {
		cidr, ok := ofFamily(subnets, v6)
		if !ok {
			continue
		}
		mgmtIP, err := managementMasqueradeIP(c.state.Config, n, v6)
		if err != nil {
			return err
		}
		e.snat(router, mgmtIP.String(), cidr.Masked().String(), portName, "eth.dst == "+mgmtMAC, c.local.Name)
	}
	if port != nil {
		e.gatewayChassis(port, c.local.ChassisID, c.local.Name)
	}
	return nil
}

func familyName(v6 bool) string {
	if v6 {
		return "6"
	}
	return "4"
}

// nodeIDOption is a node id as the requested-tnl-key option of the ports that stand for
// that node on a transit switch or router: equal in every zone because the id is.
func nodeIDOption(id int) string { return strconv.Itoa(id) }

// withGatewayMTU adds gateway_mtu to the options of a router port that faces a
// network's pods or its gateway router's join side: a packet larger than the network's
// MTU about to leave through the gateway gets an ICMP "fragmentation needed" (or
// "packet too big") back instead of vanishing. A network without an MTU gets none.
func withGatewayMTU(n *cluster.Network, options map[string]string) map[string]string {
	if n.MTU <= 0 {
		return options
	}
	if options == nil {
		options = map[string]string{}
	}
	options["gateway_mtu"] = strconv.Itoa(n.MTU)
	return options
}
