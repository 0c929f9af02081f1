package cluster

import "net/netip"

// Defaults of OVN-Kubernetes that ovnk keeps, in one place: the agent's configuration,
// the model (Build, SpecNetworks), the leader and kubectl ovnk all take them from here.
// Each list is IPv4 then IPv6; a network gets those of its families. They are
// functions so that no caller can change a default for the others.

// DefaultMTU is the pods' MTU on a network that does not set one.
const DefaultMTU = 1400

// Default prefix lengths of a node's block of a Layer3 subnet.
const (
	DefaultHostSubnetIPv4 = 24
	DefaultHostSubnetIPv6 = 64
)

// DefaultJoinSubnets are the default network's join subnets: 100.64.0.0/16, fd98::/64.
func DefaultJoinSubnets() []netip.Prefix { return mustPrefixes("100.64.0.0/16", "fd98::/64") }

// UDNJoinSubnets are a primary user-defined network's join subnets when its spec sets
// none: 100.65.0.0/16, fd99::/64.
func UDNJoinSubnets() []netip.Prefix { return mustPrefixes("100.65.0.0/16", "fd99::/64") }

// DefaultTransitSubnets address the transit switches (Layer3) and the transit routers'
// peer pairs (Layer2): 100.88.0.0/16, fd97::/64.
func DefaultTransitSubnets() []netip.Prefix { return mustPrefixes("100.88.0.0/16", "fd97::/64") }

// DefaultMasqueradeSubnets are the hosts' masquerade subnets: 169.254.0.0/17,
// fd69::/112.
func DefaultMasqueradeSubnets() []netip.Prefix {
	return mustPrefixes("169.254.0.0/17", "fd69::/112")
}

// DefaultServiceSubnets are the cluster's service CIDRs when none are configured:
// 10.96.0.0/16, kubeadm's and kind's default (an IPv4 cluster's; there is no IPv6
// default).
func DefaultServiceSubnets() []netip.Prefix { return mustPrefixes("10.96.0.0/16") }

// DefaultConnectSubnets are the address space `kubectl ovnk connect` gives a
// ClusterNetworkConnect that names none, as OVN-Kubernetes' own examples have it: an
// IPv4 /16 cut into a /24 per network and an IPv6 /112 cut into /120s, which hold as
// many addresses (and links) as the /24s.
func DefaultConnectSubnets() []ConnectSubnet {
	return []ConnectSubnet{
		{CIDR: netip.MustParsePrefix("192.168.0.0/16"), NetworkPrefix: 24},
		{CIDR: netip.MustParsePrefix("fd00:10::/112"), NetworkPrefix: 120},
	}
}

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
