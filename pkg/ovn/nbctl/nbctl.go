// Package nbctl prints a set of NB rows the way ovn-nbctl 25.03 prints a live database
// (show, lr-route-list, lr-policy-list, lr-nat-list), so operators read ovnk's desired
// state and its live snapshots in the shape they already know. For a live snapshot,
// whose rows are keyed by UUID, the three lists are byte-identical to ovn-nbctl's, and
// show holds ovn-nbctl's blocks in name order with a few lines more; the tests compare
// both with the real binary. Output is deterministic: the same rows always print the
// same text, which golden tests rely on.
package nbctl

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Printer prints one set of rows. Build it with New.
type Printer struct {
	set *rows.Set
	ix  *rows.Index
}

// New returns a printer for s. s must not change while the printer is used.
func New(s *rows.Set) *Printer { return &Printer{set: s, ix: rows.NewIndex(s)} }

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// header is "switch <uuid> (name)" for live rows and "switch (name)" for compiled rows,
// whose keys are identities rather than UUIDs.
func header(kind, key, name string) string {
	if uuidRe.MatchString(key) {
		return fmt.Sprintf("%s %s (%s)", kind, key, name)
	}
	return fmt.Sprintf("%s (%s)", kind, name)
}

// Show prints every switch and router with its ports and NAT, like `ovn-nbctl show`:
// each block holds what ovn-nbctl prints, in its order. Switches, routers and ports come
// by name and NAT rules by type, external and logical IP, where ovn-nbctl prints them
// in database order, which compiled rows do not have. After ovn-nbctl's
// lines come those it leaves out but transit topologies depend on: a router port's
// peer, a port's requested chassis and tunnel key, a NAT rule's match and logical
// port. Only names matching filter are printed when filter is not empty.
func (p *Printer) Show(w io.Writer, filter string) error {
	var b strings.Builder
	switches := slices.Clone(p.set.Switches)
	sort.Slice(switches, func(i, j int) bool { return switches[i].Name < switches[j].Name })
	for _, ls := range switches {
		if filter != "" && ls.Name != filter {
			continue
		}
		b.WriteString(header("switch", ls.UUID, ls.Name) + alias(ls.ExternalIDs, "neutron:network_name") + "\n")
		for _, lsp := range p.switchPorts(ls) {
			writeSwitchPort(&b, lsp)
		}
	}
	routers := slices.Clone(p.set.Routers)
	sort.Slice(routers, func(i, j int) bool { return routers[i].Name < routers[j].Name })
	for _, lr := range routers {
		if filter != "" && lr.Name != filter {
			continue
		}
		b.WriteString(header("router", lr.UUID, lr.Name) + alias(lr.ExternalIDs, "neutron:router_name") + "\n")
		for _, lrp := range p.routerPorts(lr) {
			p.writeRouterPort(&b, lrp)
		}
		for _, nat := range p.nats(lr) {
			b.WriteString("    " + natHeader(nat) + "\n")
			fmt.Fprintf(&b, "        external ip: \"%s\"\n", nat.ExternalIP)
			if nat.ExternalPortRange != "" {
				fmt.Fprintf(&b, "        external port(s): \"%s\"\n", nat.ExternalPortRange)
			}
			fmt.Fprintf(&b, "        logical ip: \"%s\"\n", nat.LogicalIP)
			fmt.Fprintf(&b, "        type: \"%s\"\n", nat.Type)
			if nat.Match != "" {
				fmt.Fprintf(&b, "        match: \"%s\"\n", nat.Match)
			}
			if nat.LogicalPort != nil {
				fmt.Fprintf(&b, "        logical port: \"%s\"\n", *nat.LogicalPort)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// alias is the " (aka NAME)" ovn-nbctl adds for the name a Neutron row carries.
func alias(externalIDs map[string]string, key string) string {
	if name := externalIDs[key]; name != "" {
		return " (aka " + name + ")"
	}
	return ""
}

// natHeader is "nat <uuid>" as ovn-nbctl prints it; compiled rows have no UUID, so they
// are labelled by type and external IP instead.
func natHeader(nat *nbdb.NAT) string {
	if uuidRe.MatchString(nat.UUID) {
		return "nat " + nat.UUID
	}
	return fmt.Sprintf("nat (%s %s)", nat.Type, nat.ExternalIP)
}

func (p *Printer) switchPorts(ls *nbdb.LogicalSwitch) []*nbdb.LogicalSwitchPort {
	out := make([]*nbdb.LogicalSwitchPort, 0, len(ls.Ports))
	for _, key := range ls.Ports {
		if lsp := p.ix.SwitchPorts[key]; lsp != nil {
			out = append(out, lsp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (p *Printer) routerPorts(lr *nbdb.LogicalRouter) []*nbdb.LogicalRouterPort {
	out := make([]*nbdb.LogicalRouterPort, 0, len(lr.Ports))
	for _, key := range lr.Ports {
		if lrp := p.ix.RouterPorts[key]; lrp != nil {
			out = append(out, lrp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (p *Printer) nats(lr *nbdb.LogicalRouter) []*nbdb.NAT {
	out := make([]*nbdb.NAT, 0, len(lr.Nat))
	for _, key := range lr.Nat {
		if nat := p.ix.NATs[key]; nat != nil {
			out = append(out, nat)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		if out[i].ExternalIP != out[j].ExternalIP {
			return out[i].ExternalIP < out[j].ExternalIP
		}
		return out[i].LogicalIP < out[j].LogicalIP
	})
	return out
}

func writeSwitchPort(b *strings.Builder, lsp *nbdb.LogicalSwitchPort) {
	fmt.Fprintf(b, "    port %s%s\n", lsp.Name, alias(lsp.ExternalIDs, "neutron:port_name"))
	if lsp.Type != "" {
		fmt.Fprintf(b, "        type: %s\n", lsp.Type)
	}
	if lsp.ParentName != nil {
		fmt.Fprintf(b, "        parent: %s\n", *lsp.ParentName)
	}
	if lsp.Tag != nil {
		fmt.Fprintf(b, "        tag: %d\n", *lsp.Tag)
	}
	// A lone "router" address is left out, as ovn-nbctl calls it clutter.
	if len(lsp.Addresses) > 0 && !slices.Equal(lsp.Addresses, []string{"router"}) {
		fmt.Fprintf(b, "        addresses: %s\n", quoteList(slices.Sorted(slices.Values(lsp.Addresses))))
	}
	if rp, ok := lsp.Options["router-port"]; ok {
		fmt.Fprintf(b, "        router-port: %s\n", rp)
	}
	writeTransitOptions(b, lsp.Options)
}

func (p *Printer) writeRouterPort(b *strings.Builder, lrp *nbdb.LogicalRouterPort) {
	fmt.Fprintf(b, "    port %s\n", lrp.Name)
	fmt.Fprintf(b, "        mac: \"%s\"\n", lrp.MAC)
	fmt.Fprintf(b, "        ipv6-lla: \"%s\"\n", linkLocal(lrp.MAC))
	if len(lrp.Networks) > 0 {
		fmt.Fprintf(b, "        networks: %s\n", quoteList(slices.Sorted(slices.Values(lrp.Networks))))
	}
	if table, ok := lrp.Options["route_table"]; ok {
		fmt.Fprintf(b, "        route-table: %s\n", table)
	}
	if len(lrp.GatewayChassis) > 0 {
		// ovn-nbctl show means to order gateway chassis by priority but does not read
		// the priorities, so they come in database (key) order.
		keys := slices.Sorted(slices.Values(lrp.GatewayChassis))
		var names []string
		for _, key := range keys {
			if gc := p.ix.GatewayChassis[key]; gc != nil {
				names = append(names, gc.ChassisName)
			}
		}
		fmt.Fprintf(b, "        gateway chassis: [%s]\n", strings.Join(names, " "))
	}
	if lrp.Peer != nil {
		fmt.Fprintf(b, "        peer: %s\n", *lrp.Peer)
	}
	writeTransitOptions(b, lrp.Options)
}

// writeTransitOptions prints the options that make a port span zones.
func writeTransitOptions(b *strings.Builder, opts map[string]string) {
	for _, k := range []string{"requested-chassis", "requested-tnl-key"} {
		if v, ok := opts[k]; ok {
			fmt.Fprintf(b, "        %s: %s\n", k, v)
		}
	}
}

// linkLocal is the ipv6-lla ovn-nbctl show prints under every router port's MAC,
// IPv6 networks or not: the EUI-64 link-local address of the MAC as
// ethAddrFromString reads it, which for a MAC it cannot read is the zero MAC's,
// fe80::200:ff:fe00:0.
func linkLocal(mac string) string {
	ea, _ := ethAddrFromString(mac)
	lla, err := alloc.LinkLocalFromMAC(ea[:])
	if err != nil {
		panic(err) // six bytes always make a link-local address
	}
	return lla.String()
}

// ethAddrFromString reads a MAC as Open vSwitch's eth_addr_from_string does, which
// ovn-nbctl uses: ovs_scan of six "%hhx" separated by ':', with nothing after. Each
// field may follow white space and have a sign, a 0x and any number of hex digits,
// and keeps the value's low byte, so "0x0a: 58:+a:0:1:123" reads 0a:58:0a:00:01:23.
// A string it cannot read is the zero MAC and false.
func ethAddrFromString(s string) ([6]byte, bool) {
	var ea [6]byte
	i := 0
	for f := range ea {
		if f > 0 {
			if i >= len(s) || s[i] != ':' {
				return [6]byte{}, false
			}
			i++
		}
		for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 { // C's isspace
			i++
		}
		negative := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
			i += 2
		}
		var value byte // wraps as the C conversion to unsigned char does
		digits := 0
		for ; i < len(s); i++ {
			d, ok := hexDigit(s[i])
			if !ok {
				break
			}
			value = value*16 + d
			digits++
		}
		if digits == 0 {
			return [6]byte{}, false
		}
		if negative {
			value = -value
		}
		ea[f] = value
	}
	if i != len(s) {
		return [6]byte{}, false
	}
	return ea, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// quoteList is ovn-nbctl's ["a", "b"]: each item between double quotes as it is,
// without escaping.
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = `"` + s + `"`
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Dump prints show followed by every router's routes, policies and NAT, each under a
// heading naming the ovn-nbctl command that prints the same: the whole NB state of a
// zone in one deterministic text.
func (p *Printer) Dump(w io.Writer) error {
	if err := p.Show(w, ""); err != nil {
		return err
	}
	names := make([]string, 0, len(p.set.Routers))
	for _, lr := range p.set.Routers {
		names = append(names, lr.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		lists := []struct {
			cmd   string
			print func(io.Writer, string) error
		}{
			{"lr-route-list", p.RouteList},
			{"lr-policy-list", p.PolicyList},
			{"lr-nat-list", p.NATList},
		}
		for _, l := range lists {
			var b strings.Builder
			if err := l.print(&b, name); err != nil {
				return err
			}
			if b.Len() == 0 {
				continue
			}
			if _, err := fmt.Fprintf(w, "\n# ovn-nbctl %s %s\n%s", l.cmd, name, b.String()); err != nil {
				return err
			}
		}
	}
	return nil
}
