package cluster

import (
	"fmt"
	"net/netip"
	"slices"
)

// ClusterRanges are the cluster's own address ranges, which the agent's configuration
// sets (docs/agent-config.md) and no object holds. No user-defined network's subnets or
// join subnets and no connect subnet may overlap them (CheckReserved,
// CheckConnectReserved). The leader has them from its configuration; kubectl ovnk reads
// the same configuration from the agent's ConfigMap, so that it refuses what the leader
// would.
type ClusterRanges struct {
	// ClusterSubnets are the default network's subnets.
	ClusterSubnets []netip.Prefix
	// JoinSubnets are the default network's join subnets.
	JoinSubnets []netip.Prefix
	// TransitSubnets address the default network's transit switch.
	TransitSubnets []netip.Prefix
	// MasqueradeSubnets are the hosts' masquerade subnets.
	MasqueradeSubnets []netip.Prefix
	// ServiceSubnets are the cluster's service CIDRs.
	ServiceSubnets []netip.Prefix
	// NodeSubnets are the default network's subnets the nodes publish, each node's
	// share of the cluster subnets: they stand in for ClusterSubnets where the
	// configuration is not known (kubectl ovnk without the agent's ConfigMap).
	NodeSubnets []NodeSubnet
}

// NodeSubnet is a subnet of the default network that a node publishes
// (AnnotationNodeSubnets).
type NodeSubnet struct {
	Node   string
	Prefix netip.Prefix
}

// ConfiguredRanges are the ranges of a configuration (the agent's
// Config.ClusterConfig and Config.DefaultNetwork, which the leader runs with), read as
// Build reads it: when cfg or def sets no join or transit subnets, the default network
// has the defaults of its cluster subnets' families. It fails when def is not a valid
// default network.
func ConfiguredRanges(cfg Config, def DefaultNetworkConfig) (ClusterRanges, error) {
	n, err := defaultNetwork(def, cfg.DefaultJoinSubnets, nil)
	if err != nil {
		return ClusterRanges{}, err
	}
	return RangesOf(cfg, n), nil
}

// RangesOf are the ranges of cfg and of the default network Build made of it (def),
// which holds the cluster, join and transit subnets.
func RangesOf(cfg Config, def *Network) ClusterRanges {
	r := ClusterRanges{
		JoinSubnets:       slices.Clone(def.JoinSubnets),
		TransitSubnets:    slices.Clone(def.TransitSubnets),
		MasqueradeSubnets: slices.Clone(cfg.MasqueradeSubnets),
		ServiceSubnets:    slices.Clone(cfg.ServiceSubnets),
	}
	for _, s := range def.Subnets {
		r.ClusterSubnets = append(r.ClusterSubnets, s.CIDR)
	}
	return r
}

// Reserved lists the ranges as the checks take them: the cluster subnets, then the
// join, transit, masquerade and service subnets and the nodes' subnets, each named as the leader's conditions
// and kubectl ovnk's messages name it.
func (r ClusterRanges) Reserved() []ReservedRange {
	var out []ReservedRange
	add := func(prefixes []netip.Prefix, format string) {
		for _, p := range prefixes {
			out = append(out, ReservedRange{Prefix: p, What: fmt.Sprintf(format, p)})
		}
	}
	add(r.ClusterSubnets, `cluster subnet %s of network "default"`)
	add(r.JoinSubnets, `join subnet %s of network "default"`)
	add(r.TransitSubnets, "transit subnet %s")
	add(r.MasqueradeSubnets, "masquerade subnet %s")
	add(r.ServiceSubnets, "service subnet %s")
	for _, n := range r.NodeSubnets {
		out = append(out, ReservedRange{Prefix: n.Prefix, What: fmt.Sprintf(`subnet %s of network "default" on node %s`, n.Prefix, n.Node)})
	}
	return out
}

// Layer3LinkAddresses is how many addresses a Layer3 network's block in a connect subnet
// needs for the node with the highest node id, top: a node's link is the pair of
// addresses at offset 2×id of the block, so 2 per id from 0 to top. Ids are allocated,
// not counted, so nodes without an id yet need nothing until they get one. The leader
// refuses a smaller block (BlockTooSmall), and kubectl ovnk connect refuses it first,
// by this rule.
func Layer3LinkAddresses(top int) int {
	return 2 * (top + 1)
}
