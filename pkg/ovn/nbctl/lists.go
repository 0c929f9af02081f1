package nbctl

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// router finds a router by name, with an error naming it when it is not in the set.
func (p *Printer) router(name string) (*nbdb.LogicalRouter, error) {
	lr := p.ix.Router(name)
	if lr == nil {
		return nil, fmt.Errorf("router %q not found", name)
	}
	return lr, nil
}

// RouteList prints a router's static routes like `ovn-nbctl lr-route-list`: IPv4 then
// IPv6, each by route table, longest prefix first.
func (p *Printer) RouteList(w io.Writer, routerName string) error {
	lr, err := p.router(routerName)
	if err != nil {
		return err
	}
	var v4, v6 []*nbdb.LogicalRouterStaticRoute
	for _, key := range lr.StaticRoutes {
		r := p.ix.Routes[key]
		if r == nil {
			continue
		}
		if isIPv6Route(r) {
			v6 = append(v6, r)
		} else {
			v4 = append(v4, r)
		}
	}
	var b strings.Builder
	writeRoutes(&b, "IPv4 Routes", v4)
	if len(v4) > 0 && len(v6) > 0 {
		b.WriteString("\n")
	}
	writeRoutes(&b, "IPv6 Routes", v6)
	_, err = io.WriteString(w, b.String())
	return err
}

func isIPv6Route(r *nbdb.LogicalRouterStaticRoute) bool {
	return strings.Contains(r.IPPrefix, ":")
}

func routePolicy(r *nbdb.LogicalRouterStaticRoute) string {
	if r.Policy != nil {
		return string(*r.Policy)
	}
	return string(nbdb.LogicalRouterStaticRoutePolicyDstIP)
}

// prefixOf parses a route prefix, which OVN also accepts as a bare address (a host route).
func prefixOf(s string) netip.Prefix {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen())
	}
	return netip.Prefix{}
}

func writeRoutes(b *strings.Builder, title string, routes []*nbdb.LogicalRouterStaticRoute) {
	if len(routes) == 0 {
		return
	}
	sort.Slice(routes, func(i, j int) bool {
		a, c := routes[i], routes[j]
		if a.RouteTable != c.RouteTable {
			return a.RouteTable < c.RouteTable
		}
		pa, pc := prefixOf(a.IPPrefix), prefixOf(c.IPPrefix)
		if pa.Bits() != pc.Bits() {
			return pa.Bits() > pc.Bits()
		}
		if cmp := pa.Addr().Compare(pc.Addr()); cmp != 0 {
			return cmp < 0
		}
		if routePolicy(a) != routePolicy(c) {
			return routePolicy(a) < routePolicy(c)
		}
		return a.Nexthop < c.Nexthop
	})
	// Routes sharing table, prefix and policy are ECMP paths.
	type ecmpKey struct{ table, prefix, policy string }
	paths := map[ecmpKey]int{}
	for _, r := range routes {
		paths[ecmpKey{r.RouteTable, r.IPPrefix, routePolicy(r)}]++
	}
	b.WriteString(title + "\n")
	table := "\x00" // no table printed yet
	for _, r := range routes {
		if r.RouteTable != table {
			table = r.RouteTable
			if table == "" {
				b.WriteString("Route Table <main>:\n")
			} else {
				fmt.Fprintf(b, "Route Table %s:\n", table)
			}
		}
		nexthop := r.Nexthop
		if nexthop == "" {
			nexthop = "discard"
		}
		fmt.Fprintf(b, "%25s %25s %s", r.IPPrefix, nexthop, routePolicy(r))
		if r.OutputPort != nil {
			fmt.Fprintf(b, " %s", *r.OutputPort)
		}
		if paths[ecmpKey{r.RouteTable, r.IPPrefix, routePolicy(r)}] > 1 {
			b.WriteString(" ecmp")
		}
		b.WriteString("\n")
	}
}

// PolicyList prints a router's policies like `ovn-nbctl lr-policy-list`, highest
// priority first.
func (p *Printer) PolicyList(w io.Writer, routerName string) error {
	lr, err := p.router(routerName)
	if err != nil {
		return err
	}
	var policies []*nbdb.LogicalRouterPolicy
	for _, key := range lr.Policies {
		if pol := p.ix.Policies[key]; pol != nil {
			policies = append(policies, pol)
		}
	}
	sort.Slice(policies, func(i, j int) bool {
		if policies[i].Priority != policies[j].Priority {
			return policies[i].Priority > policies[j].Priority
		}
		return policies[i].Match < policies[j].Match
	})
	var b strings.Builder
	if len(policies) > 0 {
		b.WriteString("Routing Policies\n")
	}
	for _, pol := range policies {
		fmt.Fprintf(&b, "%10d %50s %15s", pol.Priority, pol.Match, string(pol.Action))
		nexthops := slices.Clone(pol.Nexthops)
		if len(nexthops) == 0 && pol.Nexthop != nil {
			nexthops = []string{*pol.Nexthop}
		}
		sort.Strings(nexthops)
		if len(nexthops) > 0 {
			fmt.Fprintf(&b, " %25s", nexthops[0])
			for _, nh := range nexthops[1:] {
				b.WriteString(", " + nh)
			}
		}
		if len(pol.Options) > 0 {
			keys := make([]string, 0, len(pol.Options))
			for k := range pol.Options {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			opts := make([]string, len(keys))
			for i, k := range keys {
				opts[i] = k + "=" + pol.Options[k]
			}
			b.WriteString("               " + strings.Join(opts, ","))
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// NATList prints a router's NAT rules like `ovn-nbctl lr-nat-list`.
func (p *Printer) NATList(w io.Writer, routerName string) error {
	lr, err := p.router(routerName)
	if err != nil {
		return err
	}
	nats := p.nats(lr)
	var b strings.Builder
	if len(nats) > 0 {
		b.WriteString("TYPE             GATEWAY_PORT          EXTERNAL_IP        EXTERNAL_PORT    LOGICAL_IP          EXTERNAL_MAC         LOGICAL_PORT\n")
	}
	for _, nat := range nats {
		line := fmt.Sprintf("%-17s%-22s%-19s%-17s%-20s%-21s%s",
			nat.Type, p.portName(nat.GatewayPort), nat.ExternalIP, nat.ExternalPortRange,
			nat.LogicalIP, deref(nat.ExternalMAC), deref(nat.LogicalPort))
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// portName resolves a reference to a router port to the port's name.
func (p *Printer) portName(key *string) string {
	if key == nil {
		return ""
	}
	if lrp := p.ix.RouterPorts[*key]; lrp != nil {
		return lrp.Name
	}
	return *key
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
