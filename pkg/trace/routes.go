package trace

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// Route priorities as northd ranks them: the prefix length first, so a longer prefix
// always wins, whether it matches the source or the destination; at equal length a
// connected network beats a static destination route, which beats a source route.
// This is why a /32 source route can steal traffic from a /16 destination route
// (OKEP-5094's join-IP routes).
const (
	routePrioMultiplier = 3
	routeOffsetSrc      = 0
	routeOffsetStatic   = 1
	routeOffsetConnect  = 2
)

// routeChoice is where routing sends a packet: out of port, to nexthop.
type routeChoice struct {
	port    *nbdb.LogicalRouterPort
	nexthop netip.Addr
}

// candidate is one route that matches the packet.
type candidate struct {
	priority int
	prefix   netip.Prefix
	src      bool
	row      *nbdb.LogicalRouterStaticRoute // nil for a connected network
	choice   routeChoice
	discard  bool
}

// route picks the route lr uses for the packet that entered through in; false means
// none did and the path has ended.
func (w *walker) route(z *Zone, lr *nbdb.LogicalRouter, in *nbdb.LogicalRouterPort) (routeChoice, bool) {
	best := z.routeCandidates(lr, in, w.p.IPSrc, w.p.IPDst)
	if len(best) == 0 {
		w.end(Verdict{Kind: NoRoute, Zone: z.Node, Datapath: lr.Name,
			Reason: fmt.Sprintf("no route to %s on router %s", w.p.IPDst, lr.Name)})
		return routeChoice{}, false
	}
	first := best[0]
	h := Hop{Zone: z.Node, Datapath: lr.Name, Kind: "router", Stage: StageRoute, InPort: in.Name}
	if first.row == nil {
		h.OutPort = first.choice.port.Name
		h.Row = &Row{Table: "Logical_Router_Port", UUID: first.choice.port.UUID, Match: "ip.dst == " + first.prefix.String(), Owner: ownerOf(first.choice.port.ExternalIDs)}
		h.Note = fmt.Sprintf("%s is on connected network %s of port %s", w.p.IPDst, first.prefix, first.choice.port.Name)
	} else {
		h.Row = routeRow(first.row, first.priority)
		dir := "destination"
		if first.src {
			dir = "source"
		}
		if first.discard {
			h.Note = fmt.Sprintf("%s route %s discards", dir, first.prefix)
			w.hop(h)
			w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: lr.Name, Row: h.Row,
				Reason: fmt.Sprintf("discarded by route %s on router %s", first.prefix, lr.Name)})
			return routeChoice{}, false
		}
		h.OutPort = first.choice.port.Name
		h.Note = fmt.Sprintf("%s route %s via %s out of %s", dir, first.prefix, first.choice.nexthop, first.choice.port.Name)
		if len(best) > 1 {
			for _, c := range best {
				h.Nexthops = append(h.Nexthops, c.choice.nexthop.String())
			}
			h.Note += fmt.Sprintf(" (ECMP: one of %d next hops)", len(best))
		}
	}
	w.hop(h)
	return first.choice, true
}

// routeCandidates returns the routes of the best priority that match, ECMP members in
// a stable order; empty when no route matches.
func (z *Zone) routeCandidates(lr *nbdb.LogicalRouter, in *nbdb.LogicalRouterPort, src, dst netip.Addr) []candidate {
	var best []candidate
	consider := func(c candidate) {
		switch {
		case len(best) == 0 || c.priority > best[0].priority:
			best = append(best[:0], c)
		case c.priority == best[0].priority && c.row != nil && best[0].row != nil && !c.discard && !best[0].discard:
			best = append(best, c) // ECMP: static routes of one prefix, none discarding
		}
	}
	for p, nets := range z.addressedPorts(lr) {
		for _, n := range nets {
			// The link-local network is every port's: it routes only out of the port
			// the packet came in through.
			if n.Addr().IsLinkLocalUnicast() && p != in {
				continue
			}
			if n.Addr().Is6() == dst.Is6() && n.Masked().Contains(dst) {
				consider(candidate{priority: n.Bits()*routePrioMultiplier + routeOffsetConnect, prefix: n.Masked(), choice: routeChoice{port: p, nexthop: dst}})
			}
		}
	}
	table := in.Options["route_table"]
	for _, id := range lr.StaticRoutes {
		r := z.ix.Routes[id]
		if r == nil {
			continue
		}
		isSrc := r.Policy != nil && *r.Policy == nbdb.LogicalRouterStaticRoutePolicySrcIP
		if !inRouteTable(r, table) {
			continue
		}
		prefix, ok := parsePrefixOrAddr(r.IPPrefix)
		if !ok || prefix.Addr().Is6() != dst.Is6() {
			continue
		}
		prefix = prefix.Masked()
		against, offset := dst, routeOffsetStatic
		if isSrc {
			against, offset = src, routeOffsetSrc
		}
		if !prefix.Contains(against) {
			continue
		}
		c := candidate{priority: prefix.Bits()*routePrioMultiplier + offset, prefix: prefix, src: isSrc, row: r}
		if r.Nexthop == "discard" {
			c.discard = true
			consider(c)
			continue
		}
		nh, err := netip.ParseAddr(r.Nexthop)
		if err != nil {
			continue
		}
		port := z.portTowards(lr, nh)
		if r.OutputPort != nil && *r.OutputPort != "" {
			port = z.routerPorts[*r.OutputPort]
			if _, _, ok := routerPortAddrs(port); port == nil || z.routerOf[port.Name] != lr || !ok {
				port = nil // another router's port, or one without a MAC: northd ignores the route
			}
		}
		if port == nil {
			continue // northd installs no flow for a route it has no path for
		}
		c.choice = routeChoice{port: port, nexthop: nh}
		consider(c)
	}
	slices.SortStableFunc(best, func(a, b candidate) int {
		return cmp.Compare(a.choice.nexthop.String(), b.choice.nexthop.String())
	})
	return best
}

// inRouteTable reports whether a route applies to a packet that came in through a port
// of route table table ("" for none): only the routes of that very table, the main
// table's only to ports without one. Source and destination routes alike: 25.03's
// northd matches both on the port's table (reg7), where 23.03 gave main-table source
// routes to every port.
func inRouteTable(r *nbdb.LogicalRouterStaticRoute, table string) bool {
	return r.RouteTable == table
}

func routeRow(r *nbdb.LogicalRouterStaticRoute, priority int) *Row {
	action := "via " + r.Nexthop
	if r.OutputPort != nil && *r.OutputPort != "" {
		action += " dev " + *r.OutputPort
	}
	field := "ip.dst"
	if r.Policy != nil && *r.Policy == nbdb.LogicalRouterStaticRoutePolicySrcIP {
		field = "ip.src"
	}
	m := field + " == " + r.IPPrefix
	if r.RouteTable != "" {
		m = "route_table == " + r.RouteTable + " && " + m
	}
	return &Row{Table: "Logical_Router_Static_Route", UUID: r.UUID, Priority: &priority, Match: m, Action: action, Owner: ownerOf(r.ExternalIDs)}
}

// sortPolicies orders policies highest priority first, ties by UUID.
func sortPolicies(ps []*nbdb.LogicalRouterPolicy) {
	slices.SortFunc(ps, func(a, b *nbdb.LogicalRouterPolicy) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), strings.Compare(a.UUID, b.UUID))
	})
}
