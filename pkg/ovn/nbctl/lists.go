package nbctl

import (
	"fmt"
	"io"
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

// RouteList prints a router's static routes exactly as `ovn-nbctl lr-route-list` does,
// in SortRoutes' order.
func (p *Printer) RouteList(w io.Writer, routerName string) error {
	lr, err := p.router(routerName)
	if err != nil {
		return err
	}
	var routes []*nbdb.LogicalRouterStaticRoute
	for _, key := range lr.StaticRoutes {
		if r := p.ix.Routes[key]; r != nil {
			routes = append(routes, r)
		}
	}
	var b strings.Builder
	listed := SortRoutes(routes)
	for i, l := range listed {
		first := i == 0 || listed[i-1].IPv6 != l.IPv6
		if first {
			if i > 0 {
				b.WriteString("\n")
			}
			if l.IPv6 {
				b.WriteString("IPv6 Routes\n")
			} else {
				b.WriteString("IPv4 Routes\n")
			}
		}
		if table := l.Route.RouteTable; first || listed[i-1].Route.RouteTable != table {
			if !first {
				b.WriteString("\n")
			}
			if table == "" {
				table = "<main>"
			}
			fmt.Fprintf(&b, "Route Table %s:\n", table)
		}
		writeRoute(&b, l)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func writeRoute(b *strings.Builder, l ListedRoute) {
	r := l.Route
	b.WriteString(rightAligned(l.Prefix, 25) + " " + rightAligned(l.Nexthop, 25))
	policy := nbdb.LogicalRouterStaticRoutePolicyDstIP
	if r.Policy != nil {
		policy = *r.Policy
	}
	b.WriteString(" " + policy)
	if r.OutputPort != nil {
		b.WriteString(" " + *r.OutputPort)
	}
	if _, learned := r.ExternalIDs["ic-learned-route"]; learned {
		b.WriteString(" (learned)")
	}
	if l.ECMP {
		b.WriteString(" ecmp")
	}
	// smap_get_bool(options, "ecmp_symmetric_reply", false): only "true", in any case.
	if strings.EqualFold(r.Options["ecmp_symmetric_reply"], "true") {
		b.WriteString(" ecmp-symmetric-reply")
	}
	if r.BFD != nil {
		b.WriteString(" bfd")
	}
	b.WriteString("\n")
}

// PolicyList prints a router's policies exactly as `ovn-nbctl lr-policy-list` does, in
// SortPolicies' order.
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
	var b strings.Builder
	listed := SortPolicies(policies)
	if len(listed) > 0 {
		b.WriteString("Routing Policies\n")
	}
	for _, l := range listed {
		pol := l.Policy
		fmt.Fprintf(&b, "%10d %s %s", pol.Priority, rightAligned(pol.Match, 50), rightAligned(pol.Action, 15))
		if len(l.Nexthops) > 0 {
			b.WriteString(" " + rightAligned(l.Nexthops[0], 25))
			for _, nh := range l.Nexthops[1:] {
				b.WriteString(", " + nh)
			}
		}
		if len(l.Options) > 0 {
			b.WriteString(strings.Repeat(" ", 15) + strings.Join(l.Options, ","))
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// NATList prints a router's NAT rules exactly as `ovn-nbctl lr-nat-list` does, in
// SortNATs' order, each rule as ListedNAT.Line prints it.
func (p *Printer) NATList(w io.Writer, routerName string) error {
	lr, err := p.router(routerName)
	if err != nil {
		return err
	}
	var nats []*nbdb.NAT
	for _, key := range lr.Nat {
		if nat := p.ix.NATs[key]; nat != nil {
			nats = append(nats, nat)
		}
	}
	var b strings.Builder
	listed := SortNATs(nats, p.ix)
	if len(listed) > 0 {
		b.WriteString(NATListHeader + "\n")
	}
	for _, l := range listed {
		b.WriteString(l.Line() + "\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// NATListHeader is the first line of `ovn-nbctl lr-nat-list` (OVN 25.03, which added
// MATCH) for a router with NAT rules.
const NATListHeader = "TYPE             GATEWAY_PORT          MATCH                 EXTERNAL_IP        EXTERNAL_PORT    LOGICAL_IP          EXTERNAL_MAC         LOGICAL_PORT"

// Line is the row `ovn-nbctl lr-nat-list` prints for the rule, without its newline:
// columns cut to fixed widths (a match to 18 bytes, an external IP to 15, so a long
// IPv6 address is cut short), and EXTERNAL_MAC and LOGICAL_PORT filled only for a rule
// that has both. Tests that compare other listings of NAT with ovn-nbctl's print the
// rows through it, so these widths are written down once.
func (l ListedNAT) Line() string {
	nat := l.NAT
	line := natKeyColumns(nat, l.GatewayPort) + leftAligned(nat.ExternalIP, 19, 15) + leftAligned(nat.ExternalPortRange, 17, 13)
	if nat.ExternalMAC != nil && nat.LogicalPort != nil {
		return line + leftAligned(nat.LogicalIP, 20, 16) + leftAligned(*nat.ExternalMAC, 21, 17) + *nat.LogicalPort
	}
	return line + nat.LogicalIP
}

// natKeyColumns are the type, gateway port and match columns of an lr-nat-list row,
// as printf's "%-17.13s%-22.18s%-22.18s" prints them. They begin the text ovn-nbctl
// sorts rules by, as they begin the row.
func natKeyColumns(nat *nbdb.NAT, gatewayPort string) string {
	return leftAligned(nat.Type, 17, 13) + leftAligned(gatewayPort, 22, 18) + leftAligned(nat.Match, 22, 18)
}
