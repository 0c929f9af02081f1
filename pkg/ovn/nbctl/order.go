package nbctl

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// The orders here are ovn-nbctl's (utilities/ovn-nbctl.c). Where it leaves two rows
// tied, the order it shows follows from its database's UUID order, which is each row's
// key here: a live snapshot's rows are keyed by UUID, so they list exactly as ovn-nbctl
// lists them; compiled rows, keyed by identity, list in an order fixed by their keys.

// ListedRoute is a static route as `ovn-nbctl lr-route-list` lists it.
type ListedRoute struct {
	Route *nbdb.LogicalRouterStaticRoute
	// IPv6 says the route is listed under "IPv6 Routes" rather than "IPv4 Routes".
	IPv6 bool
	// Prefix and Nexthop are as printed: normalised, "discard" kept, "" for a route
	// through an output port alone or a next hop OVS cannot parse.
	Prefix, Nexthop string
	// ECMP says a neighbouring route has the same table, policy and prefix as
	// written: traffic is spread across all of them.
	ECMP bool

	priority int
	addr     netip.Addr // as written, host bits included
}

// SortRoutes returns routes in `ovn-nbctl lr-route-list` order: IPv4 then IPv6; within
// each by route table; then by OVN's priority for the route, which is 2·length+1 for a
// dst-ip prefix and 2·length for a src-ip one, highest first (so a src-ip /24 follows
// every dst-ip /24); then by address, next hop as written, and output port (none
// first). Routes whose prefix does not parse are left out, as ovn-nbctl leaves them.
func SortRoutes(routes []*nbdb.LogicalRouterStaticRoute) []ListedRoute {
	byKey := slices.Clone(routes)
	slices.SortFunc(byKey, func(a, b *nbdb.LogicalRouterStaticRoute) int { return cmp.Compare(a.UUID, b.UUID) })
	out := make([]ListedRoute, 0, len(routes))
	for _, r := range byKey {
		p, ok := parseCIDR(r.IPPrefix)
		if !ok {
			continue
		}
		l := ListedRoute{Route: r, IPv6: p.Addr().Is6(), Prefix: normalizedOrEmpty(r.IPPrefix), priority: 2*p.Bits() + 1, addr: p.Addr()}
		if r.Policy != nil && *r.Policy != nbdb.LogicalRouterStaticRoutePolicyDstIP {
			l.priority = 2 * p.Bits()
		}
		switch r.Nexthop {
		case "discard", "":
			l.Nexthop = r.Nexthop
		default:
			l.Nexthop = normalizedOrEmpty(r.Nexthop)
		}
		out = append(out, l)
	}
	// Stable, so routes tied on every field stay in key order, as glibc's qsort (a
	// merge sort) keeps them in ovn-nbctl's UUID order.
	slices.SortStableFunc(out, func(a, b ListedRoute) int {
		if a.IPv6 != b.IPv6 {
			return boolOrder(a.IPv6, b.IPv6)
		}
		return cmp.Or(sameRoute(a, b), strings.Compare(a.Route.Nexthop, b.Route.Nexthop), compareOutputPorts(a.Route, b.Route))
	})
	for i := range out {
		out[i].ECMP = i > 0 && out[i-1].IPv6 == out[i].IPv6 && sameRoute(out[i-1], out[i]) == 0 ||
			i+1 < len(out) && out[i+1].IPv6 == out[i].IPv6 && sameRoute(out[i], out[i+1]) == 0
	}
	return out
}

// sameRoute compares what makes two routes of one family paths of the same route:
// table, priority (highest first) and address as written, host bits included.
func sameRoute(a, b ListedRoute) int {
	return cmp.Or(
		strings.Compare(a.Route.RouteTable, b.Route.RouteTable),
		cmp.Compare(b.priority, a.priority),
		a.addr.Compare(b.addr),
	)
}

func compareOutputPorts(a, b *nbdb.LogicalRouterStaticRoute) int {
	switch {
	case a.OutputPort != nil && b.OutputPort != nil:
		return strings.Compare(*a.OutputPort, *b.OutputPort)
	case a.OutputPort == nil && b.OutputPort == nil:
		return 0
	}
	return boolOrder(a.OutputPort != nil, b.OutputPort != nil)
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// ListedPolicy is a routing policy as `ovn-nbctl lr-policy-list` lists it.
type ListedPolicy struct {
	Policy *nbdb.LogicalRouterPolicy
	// Nexthops are the policy's nexthops column, normalised ("" for one OVS cannot
	// parse), in the database's order: sorted as written. The deprecated single
	// nexthop column is not listed.
	Nexthops []string
	// Options are "key=value" in the order ovn-nbctl prints them, its string map's
	// hash order.
	Options []string
}

// SortPolicies returns policies in `ovn-nbctl lr-policy-list` order: highest priority
// first, then by match.
func SortPolicies(policies []*nbdb.LogicalRouterPolicy) []ListedPolicy {
	byKey := slices.Clone(policies)
	slices.SortFunc(byKey, func(a, b *nbdb.LogicalRouterPolicy) int { return cmp.Compare(a.UUID, b.UUID) })
	slices.SortStableFunc(byKey, func(a, b *nbdb.LogicalRouterPolicy) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), strings.Compare(a.Match, b.Match))
	})
	out := make([]ListedPolicy, len(byKey))
	for i, p := range byKey {
		nexthops := slices.Sorted(slices.Values(p.Nexthops))
		for j, nh := range nexthops {
			nexthops[j] = normalizedOrEmpty(nh)
		}
		out[i] = ListedPolicy{Policy: p, Nexthops: nexthops, Options: smapEntries(p.Options)}
	}
	return out
}

// smapEntries lists a map as "key=value" in the order ovn-nbctl iterates it: the
// database hands over a map sorted by key, which fills an smap in that order.
func smapEntries(m map[string]string) []string {
	keys := slices.Sorted(maps.Keys(m))
	entries := make([]string, 0, len(keys))
	for _, i := range smapOrder(keys) {
		entries = append(entries, keys[i]+"="+m[keys[i]])
	}
	return entries
}

// ListedNAT is a NAT rule as `ovn-nbctl lr-nat-list` lists it.
type ListedNAT struct {
	NAT *nbdb.NAT
	// GatewayPort is the name of the router port in the rule's gateway_port, or "".
	GatewayPort string

	key string
}

// SortNATs returns nats in `ovn-nbctl lr-nat-list` order, ix resolving their gateway
// ports. ovn-nbctl sorts by a text of the columns a row begins with (type, gateway port
// name and, from OVN 25.03, match, each cut and padded as natKeyColumns prints them)
// followed by the whole external IP; rules with the same text keep the order of its
// string map, which depends on how many rules the router has and their UUIDs. So
// rules whose matches differ only after their first 18 bytes go by external IP, then
// by that map's order.
func SortNATs(nats []*nbdb.NAT, ix *rows.Index) []ListedNAT {
	byKey := slices.Clone(nats)
	slices.SortFunc(byKey, func(a, b *nbdb.NAT) int { return cmp.Compare(a.UUID, b.UUID) })
	keys := make([]string, len(byKey))
	for i, nat := range byKey {
		keys[i] = natKeyColumns(nat, gatewayPortName(nat, ix)) + nat.ExternalIP
	}
	out := make([]ListedNAT, 0, len(nats))
	for _, i := range smapOrder(keys) {
		out = append(out, ListedNAT{NAT: byKey[i], GatewayPort: gatewayPortName(byKey[i], ix), key: keys[i]})
	}
	slices.SortStableFunc(out, func(a, b ListedNAT) int { return strings.Compare(a.key, b.key) })
	return out
}

// gatewayPortName resolves a NAT rule's reference to a router port to the port's name.
func gatewayPortName(nat *nbdb.NAT, ix *rows.Index) string {
	if nat.GatewayPort == nil {
		return ""
	}
	if lrp := ix.RouterPorts[*nat.GatewayPort]; lrp != nil {
		return lrp.Name
	}
	return *nat.GatewayPort
}
