package topology

import (
	"fmt"
	"net/netip"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// Priorities of the logical router policies on a network's cluster or transit router,
// as OVN-Kubernetes uses them.
const (
	// NodeSubnetPriority reroutes pod traffic for the node's own addresses to the
	// management port, so it reaches the host rather than leaving through the gateway.
	NodeSubnetPriority = 1004
	// DefaultAllowPriority lets east-west and join traffic skip lower-priority reroutes
	// (EgressIP at 100).
	DefaultAllowPriority = 102
)

// ovnKubeReplyMark is the packet mark OVN-Kubernetes sets on replies that must follow the
// normal path; the default-allow policy keeps EgressIP from rerouting them.
const ovnKubeReplyMark = "42"

// clusterPolicies adds the default-allow policies and the local node's management-port
// reroutes to the network's cluster router (Layer3) or transit router (Layer2). inport
// is the router port facing the local pods.
func (c *compiler) clusterPolicies(e *emitter, n *cluster.Network, router *nbdb.LogicalRouter, inport string, mgmtIPs []netip.Addr, switchName string) {
	node := c.local
	for _, v6 := range []bool{false, true} {
		ip := ipFamily(v6)
		if mgmt, ok := addrOfFamily(mgmtIPs, v6); ok {
			for _, host := range node.PrimaryIfAddrs {
				if host.Addr().Is6() != v6 {
					continue
				}
				c.hostReroute(e, router, inport, switchName, host.Addr(), mgmt)
			}
		}
		cidr, ok := ofFamily(subnetCIDRs(n), v6)
		if !ok {
			continue
		}
		e.policy(router, DefaultAllowPriority, fmt.Sprintf("%s.src == %s && %s.dst == %s", ip, cidr, ip, cidr), nbdb.LogicalRouterPolicyActionAllow, nil, nil, "")
		if join, ok := ofFamily(c.state.Config.DefaultJoinSubnets, v6); ok {
			e.policy(router, DefaultAllowPriority, fmt.Sprintf("%s.src == %s && %s.dst == %s", ip, cidr, ip, join.Masked()), nbdb.LogicalRouterPolicyActionAllow, nil, nil, "")
		}
	}
	if !n.IsDefault() {
		e.policy(router, DefaultAllowPriority, "pkt.mark == "+ovnKubeReplyMark, nbdb.LogicalRouterPolicyActionAllow, nil, nil, "")
	}
}

// masqueradeReroute sends what the local pods of a user-defined network address to
// the network's gateway router masquerade address (the host's replies to them come
// from it) to the management port, as upstream does, at the node-address priority.
func (c *compiler) masqueradeReroute(e *emitter, n *cluster.Network, router *nbdb.LogicalRouter, inport string, mgmtIPs []netip.Addr, switchName string) error {
	for _, v6 := range []bool{false, true} {
		mgmt, ok := addrOfFamily(mgmtIPs, v6)
		if !ok {
			continue
		}
		masq, err := c.masqueradeIP(n, v6)
		if err != nil {
			return err
		}
		c.hostReroute(e, router, inport, switchName, masq, mgmt)
	}
	return nil
}

// hostReroute sends what the local pods (entering through inport, from switchName)
// address to dst, an address the host answers, to the management port mgmt.
func (c *compiler) hostReroute(e *emitter, router *nbdb.LogicalRouter, inport, switchName string, dst, mgmt netip.Addr) {
	match := fmt.Sprintf("inport == %q && %s.dst == %s /* %s */", inport, ipFamily(dst.Is6()), dst, switchName)
	e.policy(router, NodeSubnetPriority, match, nbdb.LogicalRouterPolicyActionReroute, []string{mgmt.String()}, nil, c.local.Name)
}

// ipFamily is the match prefix of an IP family's fields.
func ipFamily(v6 bool) string {
	if v6 {
		return "ip6"
	}
	return "ip4"
}
