package netconf

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Fake is a Host over a simulated network namespace, for tests of code that
// configures the node. It runs the same Sync logic as the real Host, and the
// simulated kernel refuses what Linux refuses (an unknown link, a route through a
// link that is down or via a gateway on none of its subnets, a duplicate address,
// a second identical route or rule) and does what Linux does by itself (see the
// package tests, which run one table against both). Like this machine's kernel it
// has no VRF devices until SetVRF(true).
//
// Put the world the code under test finds into it with AddLink, AddAddress,
// AddRoute and AddRule; read the result with Dump.
type Fake struct {
	*Host
	k *fakeKernel
}

// NewFake returns an empty simulated namespace: no links, not even loopback.
func NewFake() *Fake {
	k := &fakeKernel{}
	return &Fake{Host: &Host{k: k}, k: k}
}

// SetVRF says whether the simulated kernel has VRF devices.
func (f *Fake) SetVRF(supported bool) {
	f.k.mu.Lock()
	defer f.k.mu.Unlock()
	f.k.vrf = supported
}

// FakeLink is a link as the kernel or another program (OVS) made it.
type FakeLink struct {
	// Name is the link's name.
	Name string
	// MAC is its hardware address; nil for none (loopback).
	MAC net.HardwareAddr
	// MTU is its MTU; 0 means 1500.
	MTU int
	// Up is its administrative state.
	Up bool
	// Loopback marks the loopback device.
	Loopback bool
}

// AddLink adds a link; its name must be unused.
func (f *Fake) AddLink(l FakeLink) error {
	if err := validLinkName(l.Name); err != nil {
		return err
	}
	f.k.mu.Lock()
	defer f.k.mu.Unlock()
	if f.k.byName(l.Name) != nil {
		return fmt.Errorf("add link %s: %w", l.Name, syscall.EEXIST)
	}
	if l.MTU == 0 {
		l.MTU = 1500
	}
	f.k.next++
	f.k.linkList = append(f.k.linkList, &fakeLink{link: link{
		Index: f.k.next, Name: l.Name, MAC: slices.Clone(l.MAC), MTU: l.MTU, Up: l.Up, Loopback: l.Loopback,
	}})
	return nil
}

// DeleteLink deletes a link as `ip link del` (or OVS deleting its port) does:
// its addresses and routes go with it, the rules selecting its table stay.
func (f *Fake) DeleteLink(name string) error {
	l, err := f.k.linkByName(name)
	if err != nil {
		return fmt.Errorf("delete link: %w", err)
	}
	return f.k.deleteLink(l)
}

// AddAddress adds an address (with its prefix length) to a link, as `ip addr add`.
func (f *Fake) AddAddress(linkName string, p netip.Prefix) error {
	l, err := f.k.linkByName(linkName)
	if err != nil {
		return fmt.Errorf("add address %s: %w", p, err)
	}
	if err := f.k.addAddr(l, p, false); err != nil {
		return fmt.Errorf("add address %s: %w", p, err)
	}
	return nil
}

// FakeRoute is a route as `ip route add` makes it.
type FakeRoute struct {
	// Table is the routing table; 0 means main.
	Table int
	// Dst is the destination; a /0 for a default route.
	Dst netip.Prefix
	// Via is the gateway, unset for an on-link route.
	Via netip.Addr
	// Dev names the link the route leaves through.
	Dev string
	// Protocol is the route's protocol; 0 means boot (3), as ip-route(8) does.
	Protocol int
	// Metric is the route's priority; IPv6 routes get 1024 when 0.
	Metric int
}

// AddRoute adds a route, refused as the kernel would refuse it.
func (f *Fake) AddRoute(r FakeRoute) error {
	l, err := f.k.linkByName(r.Dev)
	if err != nil {
		return fmt.Errorf("add route %s: %w", r.Dst, err)
	}
	if r.Table == 0 {
		r.Table = MainTable
	}
	if r.Protocol == 0 {
		r.Protocol = 3
	}
	if err := f.k.addRoute(route{Table: r.Table, Dst: r.Dst, Via: r.Via, LinkIndex: l.Index, Protocol: r.Protocol, Metric: r.Metric}); err != nil {
		return fmt.Errorf("add route %s: %w", r.Dst, err)
	}
	return nil
}

// FakeRule is an ip rule "to Dst lookup Table" as `ip rule add` makes it.
type FakeRule struct {
	// Priority orders the rule.
	Priority int
	// Dst is the destination it matches.
	Dst netip.Prefix
	// Table is the table it selects.
	Table int
	// Protocol is its protocol (0: none given).
	Protocol int
	// Oif is the outgoing link it matches instead of a destination ("" none).
	Oif string
}

// AddRule adds a rule, refused as the kernel would refuse it.
func (f *Fake) AddRule(r FakeRule) error {
	if err := f.k.addRule(rule(r)); err != nil {
		return fmt.Errorf("add rule: %w", err)
	}
	return nil
}

// Dump returns the simulated namespace as sorted lines, one per object:
//
//	link NAME mac MAC mtu N up|down [master NAME] [alias "…"]
//	addr LINK PREFIX
//	route TABLE DST [via GW] dev LINK proto N
//	rule PRIORITY to DST lookup TABLE proto N
//
// Tables are numbers except main, local and default. Loopback, the kernel's own
// routes (connected, local, broadcast) and default rules are left out, as they are
// from the package tests' dump of a real namespace, which the same cases compare.
func (f *Fake) Dump() string {
	f.k.mu.Lock()
	defer f.k.mu.Unlock()
	names := map[int]string{}
	for _, l := range f.k.linkList {
		names[l.Index] = l.Name
	}
	var lines []string
	for _, l := range f.k.linkList {
		if l.Loopback {
			continue
		}
		lines = append(lines, dumpLink(l.Name, l.MAC.String(), l.MTU, l.Up, names[l.MasterIndex], l.Alias))
		for _, a := range l.addrs {
			lines = append(lines, "addr "+l.Name+" "+a.String())
		}
	}
	for _, r := range f.k.routeList {
		lines = append(lines, dumpRoute(r.Table, r.Dst, r.Via, names[r.LinkIndex], r.Protocol))
	}
	for _, r := range f.k.ruleList {
		lines = append(lines, dumpRule(r.Priority, r.Dst, r.Oif, r.Table, r.Protocol))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// dumpLink formats a link line of Dump; the tests format a real namespace with it.
func dumpLink(name, mac string, mtu int, up bool, master, alias string) string {
	s := fmt.Sprintf("link %s mac %s mtu %d ", name, mac, mtu)
	if up {
		s += "up"
	} else {
		s += "down"
	}
	if master != "" {
		s += " master " + master
	}
	if alias != "" {
		s += " alias " + strconv.Quote(alias)
	}
	return s
}

// dumpRoute formats a route line of Dump.
func dumpRoute(table int, dst netip.Prefix, via netip.Addr, dev string, protocol int) string {
	s := "route " + tableName(table) + " " + dst.String()
	if via.IsValid() {
		s += " via " + via.String()
	}
	return s + fmt.Sprintf(" dev %s proto %d", dev, protocol)
}

// dumpRule formats a rule line of Dump; oif, when set, follows the destination.
func dumpRule(priority int, dst netip.Prefix, oif string, table, protocol int) string {
	if oif != "" {
		return fmt.Sprintf("rule %d to %s oif %s lookup %s proto %d", priority, dst, oif, tableName(table), protocol)
	}
	return fmt.Sprintf("rule %d to %s lookup %s proto %d", priority, dst, tableName(table), protocol)
}

func tableName(t int) string {
	switch t {
	case MainTable:
		return "main"
	case localTable:
		return "local"
	case defaultTable:
		return "default"
	}
	return strconv.Itoa(t)
}
