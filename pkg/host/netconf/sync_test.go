package netconf_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/netconf"
)

// step is one SyncManagementPort call and what it must return.
type step struct {
	port    netconf.ManagementPort
	errIs   []error  // the error must match each (errors.Is)
	errText []string // and contain each
}

var syncCases = []struct {
	name  string
	steps []step
	want  string // world(...) after all steps
}{
	{
		name:  "default network, dual-stack, main table",
		steps: []step{{port: mp0Dual}},
		want:  world(mp0DualDump...),
	},
	{
		name:  "user-defined network, dual-stack, own table and rules",
		steps: []step{{port: mp1Dual}},
		want:  world(mp1DualDump...),
	},
	{
		name:  "two networks",
		steps: []step{{port: mp0Dual}, {port: mp1Dual}},
		want:  world(concat(mp0DualDump, mp1DualDump)...),
	},
	{
		name: "IPv4 only, MAC and MTU left alone",
		steps: []step{{port: netconf.ManagementPort{
			Name: "ovn-k8s-mp2", Addresses: pfxs("10.200.0.2/24"), Table: 1008,
			Routes: []netconf.Route{via("10.96.0.0/16", "10.200.0.1")},
			Rules:  []netconf.Rule{to(2100, "10.96.0.0/16", 1008)},
		}}},
		want: world(
			`link ovn-k8s-mp2 mac 02:00:00:00:00:02 mtu 1500 up alias "ovnk.io/owner=ovnk-agent table=1008"`,
			`addr ovn-k8s-mp2 10.200.0.2/24`,
			`route 1008 10.96.0.0/16 via 10.200.0.1 dev ovn-k8s-mp2 proto 85`,
			`rule 2100 to 10.96.0.0/16 lookup 1008 proto 85`,
			`route 1008 10.200.0.0/24 dev ovn-k8s-mp2 proto 85`,
		),
	},
	{
		name: "IPv6 only",
		steps: []step{{port: netconf.ManagementPort{
			Name: "ovn-k8s-mp2", MTU: 1280, Addresses: pfxs("fd00:200::2/64"), Table: 1008,
			Routes: []netconf.Route{via("fd00:10:96::/112", "fd00:200::1"), via("fd00:300::/64", "fe80::1")},
			Rules:  []netconf.Rule{to(2100, "fd00:10:96::/112", 1008)},
		}}},
		want: world(
			`link ovn-k8s-mp2 mac 02:00:00:00:00:02 mtu 1280 up alias "ovnk.io/owner=ovnk-agent table=1008"`,
			`addr ovn-k8s-mp2 fd00:200::2/64`,
			`route 1008 fd00:10:96::/112 via fd00:200::1 dev ovn-k8s-mp2 proto 85`,
			`route 1008 fd00:300::/64 via fe80::1 dev ovn-k8s-mp2 proto 85`,
			`rule 2100 to fd00:10:96::/112 lookup 1008 proto 85`,
			`route 1008 fd00:200::/64 dev ovn-k8s-mp2 proto 85`,
		),
	},
	{
		// The gateway routes come first in the list; they need the on-link ones.
		name: "gateways reachable only through on-link routes of the port's table",
		steps: []step{{port: netconf.ManagementPort{
			Name: "ovn-k8s-mp2", Addresses: pfxs("10.200.0.2/24", "fd00:200::2/64"), Table: 1008,
			Routes: []netconf.Route{
				via("10.250.0.0/16", "172.16.0.1"), via("fd00:250::/64", "fd00:172::1"),
				onLink("172.16.0.0/16"), onLink("fd00:172::/64"),
			},
		}}},
		want: world(
			`link ovn-k8s-mp2 mac 02:00:00:00:00:02 mtu 1500 up alias "ovnk.io/owner=ovnk-agent table=1008"`,
			`addr ovn-k8s-mp2 10.200.0.2/24`,
			`addr ovn-k8s-mp2 fd00:200::2/64`,
			`route 1008 10.250.0.0/16 via 172.16.0.1 dev ovn-k8s-mp2 proto 85`,
			`route 1008 172.16.0.0/16 dev ovn-k8s-mp2 proto 85`,
			`route 1008 fd00:172::/64 dev ovn-k8s-mp2 proto 85`,
			`route 1008 fd00:250::/64 via fd00:172::1 dev ovn-k8s-mp2 proto 85`,
			`route 1008 10.200.0.0/24 dev ovn-k8s-mp2 proto 85`,
			`route 1008 fd00:200::/64 dev ovn-k8s-mp2 proto 85`,
		),
	},
	{
		name: "unreachable gateways fail alone, the rest is applied",
		steps: []step{{
			port: netconf.ManagementPort{
				Name: "ovn-k8s-mp1", Addresses: pfxs("10.100.0.2/24", "fd00:100::2/64"), Table: 1007,
				Routes: []netconf.Route{
					via("10.97.0.0/16", "10.245.0.1"), via("10.96.0.0/16", "10.100.0.1"),
					via("fd00:97::/64", "fd00:245::1"), via("fd00:10:96::/112", "fd00:100::1"),
				},
				Rules: []netconf.Rule{to(2000, "10.96.0.0/16", 1007)},
			},
			errIs: []error{netconf.ErrGatewayUnreachable},
			errText: []string{
				"management port ovn-k8s-mp1: route 10.97.0.0/16 via 10.245.0.1 table 1007",
				"management port ovn-k8s-mp1: route fd00:97::/64 via fd00:245::1 table 1007",
			},
		}},
		want: world(
			`link ovn-k8s-mp1 mac 02:00:00:00:00:01 mtu 1500 up alias "ovnk.io/owner=ovnk-agent table=1007"`,
			`addr ovn-k8s-mp1 10.100.0.2/24`,
			`addr ovn-k8s-mp1 fd00:100::2/64`,
			`route 1007 10.96.0.0/16 via 10.100.0.1 dev ovn-k8s-mp1 proto 85`,
			`route 1007 fd00:10:96::/112 via fd00:100::1 dev ovn-k8s-mp1 proto 85`,
			`rule 2000 to 10.96.0.0/16 lookup 1007 proto 85`,
			`route 1007 10.100.0.0/24 dev ovn-k8s-mp1 proto 85`,
			`route 1007 fd00:100::/64 dev ovn-k8s-mp1 proto 85`,
		),
	},
	{
		name: "oif rules, as a VRF's: a socket bound to the port routes in its table",
		steps: []step{{
			port: netconf.ManagementPort{
				Name: "ovn-k8s-mp1", Addresses: pfxs("10.100.0.2/24", "fd00:100::2/64"), Table: 100001,
				Routes: []netconf.Route{{Dst: pfx("10.100.0.0/24")}, via("10.128.0.0/16", "10.100.0.1")},
				Rules: []netconf.Rule{
					{Priority: 2000, Dst: pfx("0.0.0.0/0"), Oif: "ovn-k8s-mp1", Table: 100001},
					{Priority: 2000, Dst: pfx("::/0"), Oif: "ovn-k8s-mp1", Table: 100001},
					to(2000, "169.254.0.12/32", 100001),
				},
			},
		}},
		want: world(
			`link ovn-k8s-mp1 mac 02:00:00:00:00:01 mtu 1500 up alias "ovnk.io/owner=ovnk-agent table=100001"`,
			`addr ovn-k8s-mp1 10.100.0.2/24`,
			`addr ovn-k8s-mp1 fd00:100::2/64`,
			`route 100001 10.100.0.0/24 dev ovn-k8s-mp1 proto 85`,
			`route 100001 10.128.0.0/16 via 10.100.0.1 dev ovn-k8s-mp1 proto 85`,
			`rule 2000 to 0.0.0.0/0 oif ovn-k8s-mp1 lookup 100001 proto 85`,
			`rule 2000 to ::/0 oif ovn-k8s-mp1 lookup 100001 proto 85`,
			`rule 2000 to 169.254.0.12/32 lookup 100001 proto 85`,
			`route 100001 fd00:100::/64 dev ovn-k8s-mp1 proto 85`,
		),
	},
	{
		name: "unknown link",
		steps: []step{{
			port:    netconf.ManagementPort{Name: "ovn-k8s-mp9", Addresses: pfxs("10.9.0.2/24")},
			errIs:   []error{netconf.ErrLinkNotFound},
			errText: []string{"management port ovn-k8s-mp9: link ovn-k8s-mp9: link not found"},
		}},
		want: world(),
	},
	{
		name: "a second port may not take a table another port records",
		steps: []step{
			{port: mp1Dual},
			{
				port:    netconf.ManagementPort{Name: "ovn-k8s-mp2", Addresses: pfxs("10.200.0.2/24"), Table: 1007},
				errIs:   []error{netconf.ErrTableInUse},
				errText: []string{"management port ovn-k8s-mp2: table 1007: routing table used by another management port ovn-k8s-mp1"},
			},
		},
		want: world(mp1DualDump...),
	},
	// Refused before anything is written.
	invalid("duplicate address", netconf.ManagementPort{Name: "ovn-k8s-mp1", Addresses: pfxs("10.100.0.2/24", "10.100.0.2/16")},
		"duplicate address 10.100.0.2/16 (also 10.100.0.2/24)"),
	invalid("link-local address", netconf.ManagementPort{Name: "ovn-k8s-mp1", Addresses: pfxs("fe80::2/64")},
		"address fe80::2/64 is not global unicast"),
	invalid("table 0 rule", netconf.ManagementPort{Name: "ovn-k8s-mp1", Table: 1007, Rules: []netconf.Rule{to(2000, "10.96.0.0/16", 0)}},
		"rule 2000: to 10.96.0.0/16 lookup 0: table 0"),
	invalid("rule selecting another table", netconf.ManagementPort{Name: "ovn-k8s-mp1", Table: 1007, Rules: []netconf.Rule{to(2000, "10.96.0.0/16", 1008)}},
		"selects table 1008, not the port's table 1007"),
	invalid("rules on a port in main", netconf.ManagementPort{Name: "ovn-k8s-mp0", Rules: []netconf.Rule{to(2000, "10.96.0.0/16", 254)}},
		"rules need a table of its own"),
	invalid("gateway of the other family", netconf.ManagementPort{Name: "ovn-k8s-mp1", Routes: []netconf.Route{via("10.96.0.0/16", "fd00::1")}},
		"route 10.96.0.0/16 via fd00::1: gateway must be an address of the destination's family"),
	invalid("host bits in a destination", netconf.ManagementPort{Name: "ovn-k8s-mp1", Routes: []netconf.Route{onLink("10.96.0.1/16")}},
		"destination must be a prefix without host bits (10.96.0.0/16)"),
	invalid("two routes to one destination", netconf.ManagementPort{Name: "ovn-k8s-mp1", Routes: []netconf.Route{onLink("10.96.0.0/16"), via("10.96.0.0/16", "10.0.0.1")}},
		"a second route to 10.96.0.0/16"),
	invalid("MTU too small for IPv6", netconf.ManagementPort{Name: "ovn-k8s-mp1", MTU: 1200, Addresses: pfxs("fd00::2/64")},
		"MTU 1200 is below 1280"),
	invalid("multicast MAC", netconf.ManagementPort{Name: "ovn-k8s-mp1", MAC: mac("01:00:5e:00:00:01")},
		`MAC "01:00:5e:00:00:01" is not a 6-byte unicast address`),
	invalid("the kernel's own table", netconf.ManagementPort{Name: "ovn-k8s-mp1", Table: 255},
		"table 255 is not usable"),
	invalid("over-long name", netconf.ManagementPort{Name: "ovn-k8s-mp-too-long"},
		`link name "ovn-k8s-mp-too-long" must have 1 to 15 characters`),
}

func invalid(name string, p netconf.ManagementPort, text string) struct {
	name  string
	steps []step
	want  string
} {
	return struct {
		name  string
		steps []step
		want  string
	}{name: "invalid: " + name, steps: []step{{port: p, errIs: []error{netconf.ErrInvalid}, errText: []string{text}}}, want: world()}
}

// checkErr fails t unless err is what s expects.
func checkErr(t *testing.T, s step, err error) {
	t.Helper()
	if len(s.errIs) == 0 && len(s.errText) == 0 {
		if err != nil {
			t.Fatalf("sync %s: %v", s.port.Name, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("sync %s: no error, want %v %q", s.port.Name, s.errIs, s.errText)
	}
	for _, target := range s.errIs {
		if !errors.Is(err, target) {
			t.Errorf("sync %s: error %q is not %q", s.port.Name, err, target)
		}
	}
	for _, text := range s.errText {
		if !strings.Contains(err.Error(), text) {
			t.Errorf("sync %s: error %q does not contain %q", s.port.Name, err, text)
		}
	}
	if errors.Is(err, netconf.ErrGatewayUnreachable) {
		var re *netconf.RouteError
		if !errors.As(err, &re) || re.Port != s.port.Name {
			t.Errorf("sync %s: error %q carries no *RouteError for the port", s.port.Name, err)
		}
	}
}

// TestSyncManagementPort runs every case against the Fake and a fresh namespace of
// the real kernel, compares the state with the expected dump, then repeats the
// steps: nothing may change and nothing may be written the second time.
func TestSyncManagementPort(t *testing.T) {
	for _, kind := range kinds {
		for _, c := range syncCases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				ctx := context.Background()
				tg := newTarget(t, kind)
				seedWorld(t, tg)
				for _, s := range c.steps {
					before := tg.writes()
					changed, err := tg.host.SyncManagementPort(ctx, s.port)
					checkErr(t, s, err)
					if wrote := tg.writes() > before; changed != wrote {
						t.Errorf("sync %s: changed=%v, but wrote=%v", s.port.Name, changed, wrote)
					}
				}
				if diff := diffLines(c.want, tg.dump(t)); diff != "" {
					t.Fatalf("state (-want +got):\n%s", diff)
				}
				before := tg.writes()
				for _, s := range c.steps {
					changed, err := tg.host.SyncManagementPort(ctx, s.port)
					checkErr(t, s, err)
					if changed {
						t.Errorf("repeated sync %s changed something", s.port.Name)
					}
				}
				if n := tg.writes() - before; n != 0 {
					t.Errorf("repeated syncs wrote %d times", n)
				}
				if diff := diffLines(c.want, tg.dump(t)); diff != "" {
					t.Fatalf("state after repeating (-want +got):\n%s", diff)
				}
			})
		}
	}
}
