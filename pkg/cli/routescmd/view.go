package routescmd

import (
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// View is what `kubectl ovnk routes -o json|yaml` prints: the tables of a network's
// routers (or of one router) in one node's zone, in ovn-nbctl's order.
type View struct {
	// Node is the node whose zone was read.
	Node    string           `json:"node"`
	Network livezone.Network `json:"network"`
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
	NAT []livezone.NAT `json:"nat,omitempty"`
}

// Route is a static route, its addresses written as ovn-nbctl prints them: host bits
// cleared, no /32 or /128, IPv6 in canonical form.
type Route struct {
	// Family is IPv4 or IPv6.
	Family string `json:"family"`
	// RouteTable is the route table the route belongs to, "" for the main one.
	RouteTable string `json:"routeTable,omitempty"`
	Prefix     string `json:"prefix"`
	// Nexthop is the next hop's address, "discard" for a route that drops, or "" for a
	// route through its output port alone (or a next hop OVN cannot parse).
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
	// Nexthops are where reroute sends the packet, sorted and written as ovn-nbctl
	// prints them.
	Nexthops []string          `json:"nexthops,omitempty"`
	Options  map[string]string `json:"options,omitempty"`
	UUID     string            `json:"uuid"`

	// listedOptions are Options as "key=value" in the order ovn-nbctl prints them,
	// which a map cannot keep, for the table.
	listedOptions []string
}

// The families routes are listed under, in ovn-nbctl's order.
const (
	ipv4 = "IPv4"
	ipv6 = "IPv6"
)

// routes lists a router's static routes as `ovn-nbctl lr-route-list` does.
func routes(z *livezone.Zone, lr *nbdb.LogicalRouter) []Route {
	var static []*nbdb.LogicalRouterStaticRoute
	for _, key := range lr.StaticRoutes {
		if r := z.Index.Routes[key]; r != nil {
			static = append(static, r)
		}
	}
	out := []Route{}
	for _, l := range nbctl.SortRoutes(static) {
		r := l.Route
		route := Route{Family: ipv4, RouteTable: r.RouteTable, Prefix: l.Prefix, Nexthop: l.Nexthop, Policy: nbdb.LogicalRouterStaticRoutePolicyDstIP, ECMP: l.ECMP, UUID: r.UUID}
		if l.IPv6 {
			route.Family = ipv6
		}
		if r.Policy != nil {
			route.Policy = *r.Policy
		}
		if r.OutputPort != nil {
			route.OutputPort = *r.OutputPort
		}
		out = append(out, route)
	}
	return out
}

// policies lists a router's policies as `ovn-nbctl lr-policy-list` does.
func policies(z *livezone.Zone, lr *nbdb.LogicalRouter) []Policy {
	var all []*nbdb.LogicalRouterPolicy
	for _, key := range lr.Policies {
		if p := z.Index.Policies[key]; p != nil {
			all = append(all, p)
		}
	}
	out := []Policy{}
	for _, l := range nbctl.SortPolicies(all) {
		p := l.Policy
		out = append(out, Policy{Priority: p.Priority, Match: p.Match, Action: p.Action, Nexthops: l.Nexthops, Options: p.Options, UUID: p.UUID, listedOptions: l.Options})
	}
	return out
}
