package cluster

import (
	"fmt"
	"net/netip"
	"slices"
)

// The checks on a connect's subnets and networks that decide what the leader connects,
// and that kubectl ovnk connect runs first to refuse what the leader would. The errors
// read as the leader's conditions do; the plugin reads their fields to name its flags.

// RecreateConnectFix is how a wrong connectSubnets is fixed: the field cannot change.
const RecreateConnectFix = "delete this ClusterNetworkConnect and create it again with other connectSubnets (they cannot be changed)"

// ConnectReservedError says that a connect subnet overlaps one of the cluster's own
// ranges: nothing of the connect is connected.
type ConnectReservedError struct {
	Subnet netip.Prefix
	Range  ReservedRange
}

func (e *ConnectReservedError) Error() string {
	return fmt.Sprintf("connect subnet %s overlaps %s, so nothing is connected; %s, overlapping none of the cluster's subnets",
		e.Subnet, e.Range.What, RecreateConnectFix)
}

// ConnectNetworkOverlapError says that a connect subnet overlaps one of a selected
// network's own ranges (Range.What names it within the network, "join subnet
// 100.65.0.0/16"): its routers would have a link address inside it, so that network is
// not connected.
type ConnectNetworkOverlapError struct {
	Network string
	Subnet  netip.Prefix
	Range   ReservedRange
}

func (e *ConnectNetworkOverlapError) Error() string {
	return fmt.Sprintf("network %q is not connected: connect subnet %s overlaps its %s; %s, overlapping none of the networks' subnets, or select other networks",
		e.Network, e.Subnet, e.Range.What, RecreateConnectFix)
}

// ConnectedOverlapError says that a network's subnet overlaps one of a network
// connected before it: the connect router could not tell where to send an address
// both have, so the later network is not connected.
type ConnectedOverlapError struct {
	Network, Other      string
	Subnet, OtherSubnet netip.Prefix
}

func (e *ConnectedOverlapError) Error() string {
	return fmt.Sprintf("network %q is not connected: its subnet %s overlaps subnet %s of network %q, which is connected; connected networks need subnets that do not overlap, so select only one of them",
		e.Network, e.Subnet, e.OtherSubnet, e.Other)
}

// ConnectConflictError says that a connect subnet overlaps one of an older connect
// that connects one of the same networks: that network's router cannot have two links
// with overlapping addresses, so nothing of the younger connect is connected.
type ConnectConflictError struct {
	Subnet, OtherSubnet netip.Prefix
	// Other is the older connect.
	Other string
	// Shared are the networks both connect, sorted; the message names the first.
	Shared []string
	// SameSecond says both were created in the same second, so Other comes first by
	// name rather than by age.
	SameSecond bool
}

func (e *ConnectConflictError) Error() string {
	precedence := "was created first"
	if e.SameSecond {
		precedence = "was created in the same second and comes first by name"
	}
	return fmt.Sprintf("connect subnet %s overlaps connect subnet %s of ClusterNetworkConnect %q, which %s and also connects network %q, so nothing is connected; %s, not overlapping %q's, or select networks %q does not",
		e.Subnet, e.OtherSubnet, e.Other, precedence, e.Shared[0], RecreateConnectFix, e.Other, e.Other)
}

// CheckConnectReserved checks the connect subnets against the cluster's own ranges
// (a *ConnectReservedError), each subnet in turn against every range in order.
func CheckConnectReserved(subnets []ConnectSubnet, reserved []ReservedRange) error {
	for _, cs := range subnets {
		for _, r := range reserved {
			if cs.CIDR.Overlaps(r.Prefix) {
				return &ConnectReservedError{Subnet: cs.CIDR, Range: r}
			}
		}
	}
	return nil
}

// CheckConnectNetwork checks the connect subnets against n's own ranges: its subnets,
// join subnets and transit subnets (a *ConnectNetworkOverlapError).
func CheckConnectNetwork(subnets []ConnectSubnet, n *Network) error {
	var own []ReservedRange
	for _, s := range n.Subnets {
		own = append(own, ReservedRange{Prefix: s.CIDR, What: fmt.Sprintf("subnet %s", s.CIDR)})
	}
	for _, j := range n.JoinSubnets {
		own = append(own, ReservedRange{Prefix: j, What: fmt.Sprintf("join subnet %s", j)})
	}
	for _, t := range n.TransitSubnets {
		own = append(own, ReservedRange{Prefix: t, What: fmt.Sprintf("transit subnet %s", t)})
	}
	for _, cs := range subnets {
		for _, r := range own {
			if cs.CIDR.Overlaps(r.Prefix) {
				return &ConnectNetworkOverlapError{Network: n.Name, Subnet: cs.CIDR, Range: r}
			}
		}
	}
	return nil
}

// CheckConnectedOverlap checks n's subnets against those of the networks connected
// before it, in order (a *ConnectedOverlapError).
func CheckConnectedOverlap(n *Network, connected []*Network) error {
	for _, o := range connected {
		for _, s := range n.Subnets {
			for _, os := range o.Subnets {
				if s.CIDR.Overlaps(os.CIDR) {
					return &ConnectedOverlapError{Network: n.Name, Subnet: s.CIDR, Other: o.Name, OtherSubnet: os.CIDR}
				}
			}
		}
	}
	return nil
}

// CheckConnectConflict checks c's subnets against those of the older connect when the
// two connect a network in common (a *ConnectConflictError). sameSecond says they were
// created in the same second, for the message.
func CheckConnectConflict(c, older *Connect, sameSecond bool) error {
	var shared []string
	for _, n := range c.Networks {
		if slices.Contains(older.Networks, n) {
			shared = append(shared, n)
		}
	}
	if len(shared) == 0 {
		return nil
	}
	slices.Sort(shared)
	for _, cs := range c.Subnets {
		for _, os := range older.Subnets {
			if cs.CIDR.Overlaps(os.CIDR) {
				return &ConnectConflictError{Subnet: cs.CIDR, OtherSubnet: os.CIDR, Other: older.Name, Shared: shared, SameSecond: sameSecond}
			}
		}
	}
	return nil
}
