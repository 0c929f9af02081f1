package netconf_test

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/test/golden"
)

// The world every case starts from: an uplink with the node's addresses, three
// management ports as OVS leaves them (taps, down, a MAC of their own; mp0 with a
// link-local address the kernel would have made, which must survive), and a
// foreign route and rule in table 1007 (protocol static) which must survive too.
func seedWorld(t *testing.T, tg *target) {
	t.Helper()
	tg.addLink(t, "eth0", "02:00:00:00:00:e0", true)
	tg.addAddr(t, "eth0", "192.0.2.10/24")
	tg.addAddr(t, "eth0", "2001:db8::10/64")
	tg.addLink(t, "ovn-k8s-mp0", "02:00:00:00:00:00", false)
	tg.addAddr(t, "ovn-k8s-mp0", "fe80::99/64")
	tg.addLink(t, "ovn-k8s-mp1", "02:00:00:00:00:01", false)
	tg.addLink(t, "ovn-k8s-mp2", "02:00:00:00:00:02", false)
	tg.addRoute(t, netconf.FakeRoute{Dst: pfx("198.51.100.0/24"), Via: addr("192.0.2.1"), Dev: "eth0", Protocol: 4})
	tg.addRoute(t, netconf.FakeRoute{Table: 1007, Dst: pfx("203.0.113.0/24"), Via: addr("192.0.2.1"), Dev: "eth0", Protocol: 4})
	tg.addRule(t, netconf.FakeRule{Priority: 3000, Dst: pfx("203.0.113.0/24"), Table: 1007, Protocol: 4})
}

// worldDump is seedWorld's state in Dump format.
var worldDump = []string{
	`link eth0 mac 02:00:00:00:00:e0 mtu 1500 up`,
	`addr eth0 192.0.2.10/24`,
	`addr eth0 2001:db8::10/64`,
	`link ovn-k8s-mp0 mac 02:00:00:00:00:00 mtu 1500 down`,
	`addr ovn-k8s-mp0 fe80::99/64`,
	`link ovn-k8s-mp1 mac 02:00:00:00:00:01 mtu 1500 down`,
	`link ovn-k8s-mp2 mac 02:00:00:00:00:02 mtu 1500 down`,
	`route main 198.51.100.0/24 via 192.0.2.1 dev eth0 proto 4`,
	`route 1007 203.0.113.0/24 via 192.0.2.1 dev eth0 proto 4`,
	`rule 3000 to 203.0.113.0/24 lookup 1007 proto 4`,
}

// world returns worldDump changed by lines: a "link NAME …" line replaces that
// link's line, a line starting with "-" removes that line, any other line is added.
// The result is sorted like Dump.
func world(lines ...string) string {
	out := slices.Clone(worldDump)
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "-"):
			out = slices.DeleteFunc(out, func(o string) bool { return o == l[1:] })
		case strings.HasPrefix(l, "link "):
			prefix := strings.Join(strings.Fields(l)[:2], " ") + " "
			out = slices.DeleteFunc(out, func(o string) bool { return strings.HasPrefix(o, prefix) })
			out = append(out, l)
		default:
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

func mac(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

func pfxs(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, pfx(s))
	}
	return out
}

// via builds a gateway route; onLink a route without gateway.
func via(dst, gw string) netconf.Route { return netconf.Route{Dst: pfx(dst), Via: addr(gw)} }
func onLink(dst string) netconf.Route  { return netconf.Route{Dst: pfx(dst)} }

func to(prio int, dst string, table int) netconf.Rule {
	return netconf.Rule{Priority: prio, Dst: pfx(dst), Table: table}
}

// The ports the cases and transitions use.
var (
	// mp0Dual is the default network's port, dual-stack, in the main table.
	mp0Dual = netconf.ManagementPort{
		Name: "ovn-k8s-mp0", MAC: mac("0a:58:0a:f4:00:02"), MTU: 1400,
		Addresses: pfxs("10.244.0.2/24", "fd00:10:244::2/64"),
		Routes: []netconf.Route{
			via("10.96.0.0/16", "10.244.0.1"), via("10.244.0.0/16", "10.244.0.1"),
			via("169.254.169.3/32", "10.244.0.1"),
			via("fd00:10:96::/112", "fd00:10:244::1"), via("fd00:10:244::/48", "fd00:10:244::1"),
		},
	}
	mp0DualDump = []string{
		`link ovn-k8s-mp0 mac 0a:58:0a:f4:00:02 mtu 1400 up alias "ovnk.io/owner=ovnk-agent table=254"`,
		`addr ovn-k8s-mp0 10.244.0.2/24`,
		`addr ovn-k8s-mp0 fd00:10:244::2/64`,
		`route main 10.96.0.0/16 via 10.244.0.1 dev ovn-k8s-mp0 proto 85`,
		`route main 10.244.0.0/16 via 10.244.0.1 dev ovn-k8s-mp0 proto 85`,
		`route main 169.254.169.3/32 via 10.244.0.1 dev ovn-k8s-mp0 proto 85`,
		`route main fd00:10:96::/112 via fd00:10:244::1 dev ovn-k8s-mp0 proto 85`,
		`route main fd00:10:244::/48 via fd00:10:244::1 dev ovn-k8s-mp0 proto 85`,
	}

	// mp1Dual is a primary user-defined network's port with table 1007 and rules.
	mp1Dual = netconf.ManagementPort{
		Name: "ovn-k8s-mp1", MAC: mac("0a:58:0a:64:00:02"), MTU: 1400,
		Addresses: pfxs("10.100.0.2/24", "fd00:100::2/64"),
		Table:     1007,
		Routes: []netconf.Route{
			via("10.96.0.0/16", "10.100.0.1"), via("10.100.0.0/16", "10.100.0.1"),
			via("fd00:10:96::/112", "fd00:100::1"),
		},
		Rules: []netconf.Rule{
			to(2000, "10.96.0.0/16", 1007), to(2000, "fd00:10:96::/112", 1007), to(2001, "10.100.0.0/16", 1007),
		},
	}
	mp1DualDump = []string{
		`link ovn-k8s-mp1 mac 0a:58:0a:64:00:02 mtu 1400 up alias "ovnk.io/owner=ovnk-agent table=1007"`,
		`addr ovn-k8s-mp1 10.100.0.2/24`,
		`addr ovn-k8s-mp1 fd00:100::2/64`,
		`route 1007 10.96.0.0/16 via 10.100.0.1 dev ovn-k8s-mp1 proto 85`,
		`route 1007 10.100.0.0/16 via 10.100.0.1 dev ovn-k8s-mp1 proto 85`,
		`route 1007 fd00:10:96::/112 via fd00:100::1 dev ovn-k8s-mp1 proto 85`,
		`rule 2000 to 10.96.0.0/16 lookup 1007 proto 85`,
		`rule 2000 to fd00:10:96::/112 lookup 1007 proto 85`,
		`rule 2001 to 10.100.0.0/16 lookup 1007 proto 85`,
		`route 1007 10.100.0.0/24 dev ovn-k8s-mp1 proto 85`,
		`route 1007 fd00:100::/64 dev ovn-k8s-mp1 proto 85`,
	}
)

func concat(lists ...[]string) []string { return slices.Concat(lists...) }

// diffLines compares two dumps: golden.Diff's listing and got in full; "" when they
// are equal.
func diffLines(want, got string) string {
	d := golden.Diff(want, got)
	if d == "" {
		return ""
	}
	return d + "(got, in full:)\n" + got
}
