package topology

import (
	"fmt"
	"net/netip"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// ManagementPort is a network's management port on a node: the logical switch port the
// host's interface binds to, and what the host configures on that interface. The
// compiler writes the port; the node's agent plugs the host side (package
// agent/host); both take it from here.
type ManagementPort struct {
	Network string
	// LSP is the logical switch port, k8s-<prefix><node>: the host interface's iface-id.
	LSP string
	// MAC is derived from the first management address.
	MAC string
	// Addresses are .2 of each pod subnet on the node (Layer3: the node's subnets,
	// Layer2: the network's), with the subnet's length.
	Addresses []netip.Prefix
	// Gateways are .1 of the same subnets: the network's router, towards its other
	// subnets.
	Gateways []netip.Addr
	// Routed are the network's subnets that are not on the port's link (Layer3: the
	// whole network's CIDRs), reached through the gateway of their family.
	Routed []netip.Prefix
	// MTU is the network's.
	MTU int
	// Masquerade are the addresses a user-defined network's pods reach the host with
	// through this port (the cluster router SNATs them to the network's management
	// masquerade address), one per family of the network: the host routes its
	// replies to them back through the port. None for the default network, whose pods
	// reach the host with their own addresses.
	Masquerade []netip.Addr
}

// ManagementPortOf returns network n's management port on node: Layer3 networks need the
// node's subnet in n, Layer2 networks have one port per node with the same addresses.
// cfg gives the masquerade subnets.
func ManagementPortOf(cfg cluster.Config, n *cluster.Network, node *cluster.Node) (ManagementPort, error) {
	var subnets []netip.Prefix
	var routed []netip.Prefix
	switch n.Topology {
	case cluster.Layer3:
		subnets = node.Subnets[n.Name]
		if len(subnets) == 0 {
			return ManagementPort{}, fmt.Errorf("node %s has no subnet of network %s yet (k8s.ovn.org/node-subnets): waiting for the leader to allocate one", node.Name, n.Name)
		}
		routed = subnetCIDRs(n)
	case cluster.Layer2:
		subnets = subnetCIDRs(n)
	default:
		return ManagementPort{}, fmt.Errorf("network %s has topology %q: want Layer3 or Layer2", n.Name, n.Topology)
	}
	a, err := podSubnetAddrs(subnets)
	if err != nil {
		return ManagementPort{}, err
	}
	p := ManagementPort{
		Network:  n.Name,
		LSP:      namesOf(n).ManagementPort(node.Name),
		MAC:      alloc.MACFromIP(a.mgmtIPs[0]).String(),
		Gateways: a.gwIPs,
		Routed:   routed,
		MTU:      n.MTU,
	}
	for i, s := range subnets {
		p.Addresses = append(p.Addresses, netip.PrefixFrom(a.mgmtIPs[i], s.Bits()))
		if n.IsDefault() {
			continue
		}
		masq, err := managementMasqueradeIP(cfg, n, s.Addr().Is6())
		if err != nil {
			return ManagementPort{}, err
		}
		p.Masquerade = append(p.Masquerade, masq)
	}
	return p, nil
}

// managementMasqueradeIP is the address of family v6 that a user-defined network's
// pods reach the host with through its management port.
func managementMasqueradeIP(cfg cluster.Config, n *cluster.Network, v6 bool) (netip.Addr, error) {
	_, mgmt, err := masqueradeIPs(cfg, n, v6)
	return mgmt, err
}

// masqueradeIPs are a user-defined network's masquerade addresses of family v6: its
// gateway router's and its management port's.
func masqueradeIPs(cfg cluster.Config, n *cluster.Network, v6 bool) (gr, mgmt netip.Addr, err error) {
	masq, ok := ofFamily(cfg.MasqueradeSubnets, v6)
	if !ok {
		return gr, mgmt, fmt.Errorf("network %s needs an IPv%s masquerade subnet in the agent configuration", n.Name, familyName(v6))
	}
	if gr, mgmt, err = alloc.MasqueradeIPs(masq, n.ID); err != nil {
		return gr, mgmt, fmt.Errorf("network %s: %w", n.Name, err)
	}
	return gr, mgmt, nil
}

// addrs are the port's addresses without their lengths, as the logical switch port
// lists them.
func (p ManagementPort) addrs() []netip.Addr {
	out := make([]netip.Addr, len(p.Addresses))
	for i, a := range p.Addresses {
		out[i] = a.Addr()
	}
	return out
}

// LocalnetPortOf is the localnet port of network n's external switch on node: the port
// through which its gateway router reaches the node's external bridge. ovn-controller
// plugs it into that bridge as a patch port, which the node's flows steer by.
func LocalnetPortOf(n *cluster.Network, node *cluster.Node) string {
	return namesOf(n).LocalnetPort(node.Gateway.InterfaceID)
}
