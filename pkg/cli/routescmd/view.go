package routescmd

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/cli/zoneview"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// View is what `kubectl ovnk routes -o json|yaml` prints: the tables of a network's
// routers (or of one router) in one node's zone, in ovn-nbctl's order.
type View struct {
	// Node is the node whose zone was read.
	Node    string           `json:"node"`
	Network zoneview.Network `json:"network"`
	// Routers are sorted by name.
	Routers []Router `json:"routers"`
}

// Router is one router's tables. Policies and NAT are filled only when asked for
// (--policies, --nat).
type Router struct {
	Name string `json:"name"`
	// Role is cluster router, gateway router or transit router.
	Role string `json:"role,omitempty"`
	// Routes are ordered as `ovn-nbctl lr-route-list` prints them: IPv4 then IPv6, each
	// by route table, then longest prefix first (dst-ip before src-ip), then address.
	Routes []Route `json:"routes"`
	// Policies are ordered as `ovn-nbctl lr-policy-list` prints them: highest priority
	// first, then by match.
	Policies []Policy `json:"policies,omitempty"`
	// NAT is ordered as `ovn-nbctl lr-nat-list` prints it.
	NAT []zoneview.NAT `json:"nat,omitempty"`
}

// Route is a static route.
type Route struct {
	// Family is IPv4 or IPv6.
	Family string `json:"family"`
	// RouteTable is the route table the route belongs to, "" for the main one.
	RouteTable string `json:"routeTable,omitempty"`
	Prefix     string `json:"prefix"`
	// Nexthop is the next hop's address, or "discard" for a route that drops.
	Nexthop string `json:"nexthop"`
	// Policy is dst-ip or src-ip: whether Prefix matches the destination or the source.
	Policy     string `json:"policy"`
	OutputPort string `json:"outputPort,omitempty"`
	// ECMP says other routes share the table, prefix and policy: traffic is spread
	// across all of them.
	ECMP bool   `json:"ecmp,omitempty"`
	UUID string `json:"uuid"`
}

// Policy is a routing policy.
type Policy struct {
	Priority int    `json:"priority"`
	Match    string `json:"match"`
	// Action is allow, drop, reroute or jump.
	Action string `json:"action"`
	// Nexthops are where reroute sends the packet.
	Nexthops []string          `json:"nexthops,omitempty"`
	Options  map[string]string `json:"options,omitempty"`
	UUID     string            `json:"uuid"`
}

// The families routes are listed under, in ovn-nbctl's order.
const (
	ipv4 = "IPv4"
	ipv6 = "IPv6"
)

// routes lists a router's static routes in `ovn-nbctl lr-route-list` order.
func routes(z *zoneview.Zone, lr *nbdb.LogicalRouter) []Route {
	out := []Route{}
	for _, key := range lr.StaticRoutes {
		r := z.Index.Routes[key]
		if r == nil {
			continue
		}
		route := Route{Family: ipv4, RouteTable: r.RouteTable, Prefix: r.IPPrefix, Nexthop: r.Nexthop, Policy: string(nbdb.LogicalRouterStaticRoutePolicyDstIP), UUID: r.UUID}
		if strings.Contains(r.IPPrefix, ":") {
			route.Family = ipv6
		}
		if route.Nexthop == "" {
			route.Nexthop = "discard"
		}
		if r.Policy != nil {
			route.Policy = string(*r.Policy)
		}
		if r.OutputPort != nil {
			route.OutputPort = *r.OutputPort
		}
		out = append(out, route)
	}
	slices.SortFunc(out, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), compareRoutes(a, b), cmp.Compare(a.Nexthop, b.Nexthop), compareOutputPorts(a, b))
	})
	// Routes that only their next hops tell apart are the paths of one ECMP route.
	for i := range out {
		out[i].ECMP = i > 0 && out[i].Family == out[i-1].Family && compareRoutes(out[i], out[i-1]) == 0 ||
			i+1 < len(out) && out[i].Family == out[i+1].Family && compareRoutes(out[i], out[i+1]) == 0
	}
	return out
}

// compareRoutes orders two routes of one family as ovn-nbctl does: by route table,
// then longest prefix first — a dst-ip route before a src-ip route of the same length,
// as OVN's priority 2·length+1 for dst-ip and 2·length for src-ip says — then by
// address.
func compareRoutes(a, b Route) int {
	pa, pb := prefixOf(a.Prefix), prefixOf(b.Prefix)
	return cmp.Or(
		cmp.Compare(a.RouteTable, b.RouteTable),
		cmp.Compare(routePriority(pb, b.Policy), routePriority(pa, a.Policy)),
		pa.Addr().Compare(pb.Addr()),
	)
}

func routePriority(p netip.Prefix, policy string) int {
	if policy == string(nbdb.LogicalRouterStaticRoutePolicySrcIP) {
		return 2 * p.Bits()
	}
	return 2*p.Bits() + 1
}

// compareOutputPorts puts a route without an output port before one with.
func compareOutputPorts(a, b Route) int {
	switch {
	case a.OutputPort == "" && b.OutputPort != "":
		return -1
	case a.OutputPort != "" && b.OutputPort == "":
		return 1
	}
	return cmp.Compare(a.OutputPort, b.OutputPort)
}

// prefixOf parses a route's prefix, which OVN also accepts as a bare address (a host
// route).
func prefixOf(s string) netip.Prefix {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen())
	}
	return netip.Prefix{}
}

// policies lists a router's policies in `ovn-nbctl lr-policy-list` order.
func policies(z *zoneview.Zone, lr *nbdb.LogicalRouter) []Policy {
	out := []Policy{}
	for _, key := range lr.Policies {
		p := z.Index.Policies[key]
		if p == nil {
			continue
		}
		nexthops := slices.Clone(p.Nexthops)
		if len(nexthops) == 0 && p.Nexthop != nil {
			nexthops = []string{*p.Nexthop}
		}
		slices.Sort(nexthops)
		out = append(out, Policy{Priority: p.Priority, Match: p.Match, Action: string(p.Action), Nexthops: nexthops, Options: p.Options, UUID: p.UUID})
	}
	slices.SortFunc(out, func(a, b Policy) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Match, b.Match))
	})
	return out
}
