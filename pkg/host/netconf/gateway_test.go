package netconf_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/netconf"
)

// seedUplinks builds a node with two uplinks: eth0 carries the best default route
// of both families (and a worse IPv4 one), eth1 only a worse IPv4 default route
// of its own; eth2 has no address; a management port has an address that host
// CIDRs must leave out.
func seedUplinks(t *testing.T, tg *target) {
	t.Helper()
	tg.addLink(t, "eth0", "02:00:00:00:00:e0", true)
	tg.addAddr(t, "eth0", "192.0.2.10/24")
	tg.addAddr(t, "eth0", "2001:db8::10/64")
	tg.addAddr(t, "eth0", "fe80::10/64")
	tg.addAddr(t, "eth0", "192.0.2.11/24")
	tg.addLink(t, "eth1", "02:00:00:00:00:e1", true)
	tg.addAddr(t, "eth1", "198.51.100.5/24")
	tg.addLink(t, "eth2", "02:00:00:00:00:e2", true)
	tg.addLink(t, "ovn-k8s-mp0", "02:00:00:00:00:00", true)
	tg.addAddr(t, "ovn-k8s-mp0", "10.244.0.2/24")
	tg.addRoute(t, netconf.FakeRoute{Dst: pfx("0.0.0.0/0"), Via: addr("192.0.2.1"), Dev: "eth0", Protocol: 4, Metric: 100})
	tg.addRoute(t, netconf.FakeRoute{Dst: pfx("0.0.0.0/0"), Via: addr("192.0.2.254"), Dev: "eth0", Protocol: 4, Metric: 200})
	tg.addRoute(t, netconf.FakeRoute{Dst: pfx("::/0"), Via: addr("2001:db8::1"), Dev: "eth0", Protocol: 4})
	tg.addRoute(t, netconf.FakeRoute{Dst: pfx("0.0.0.0/0"), Via: addr("198.51.100.1"), Dev: "eth1", Protocol: 4, Metric: 300})
}

func TestGatewayAndHostCIDRs(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tg := newTarget(t, kind)
			seedUplinks(t, tg)

			for _, c := range []struct {
				iface    string
				mac      string
				addrs    []netip.Prefix
				nextHops []netip.Addr
				err      error
			}{
				{
					iface: "eth0", mac: "02:00:00:00:00:e0",
					addrs:    pfxs("192.0.2.10/24", "192.0.2.11/24", "2001:db8::10/64"),
					nextHops: []netip.Addr{addr("192.0.2.1"), addr("2001:db8::1")},
				},
				{
					iface: "eth1", mac: "02:00:00:00:00:e1",
					addrs:    pfxs("198.51.100.5/24"),
					nextHops: []netip.Addr{addr("198.51.100.1")},
				},
				{iface: "eth2", err: netconf.ErrNoAddress},
				{iface: "eth9", err: netconf.ErrLinkNotFound},
			} {
				got, err := tg.host.Gateway(ctx, c.iface)
				if c.err != nil {
					if !errors.Is(err, c.err) {
						t.Errorf("Gateway(%s): error %v, want %v", c.iface, err, c.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Gateway(%s): %v", c.iface, err)
				}
				if got.MAC.String() != c.mac || !slices.Equal(got.Addresses, c.addrs) || !slices.Equal(got.NextHops, c.nextHops) {
					t.Errorf("Gateway(%s) = %s %v %v, want %s %v %v", c.iface, got.MAC, got.Addresses, got.NextHops, c.mac, c.addrs, c.nextHops)
				}
			}

			cidrs, err := tg.host.HostCIDRs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := pfxs("192.0.2.10/24", "192.0.2.11/24", "198.51.100.5/24", "2001:db8::10/64"); !slices.Equal(cidrs, want) {
				t.Errorf("HostCIDRs = %v, want %v", cidrs, want)
			}
		})
	}
}
