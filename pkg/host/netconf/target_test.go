package netconf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/test/testenv"
)

// target is one place the same cases run: a Fake, or a fresh network namespace of
// the real kernel. Seeding goes through the Fake's methods or through ip(8), and
// dump reads the Fake's Dump or formats `ip -j` output the same way: the real
// namespace is read by an independent tool, not by the code under test.
type target struct {
	kind   string
	host   netconf.Interface
	fake   *netconf.Fake  // nil for the kernel
	ns     *testenv.Netns // nil for the Fake
	writes func() int
	vrf    bool // whether VRF devices can be made
}

var kinds = []string{"fake", "kernel"}

func newTarget(t *testing.T, kind string) *target {
	t.Helper()
	if kind == "fake" {
		f := netconf.NewFake()
		tg := &target{kind: kind, host: f, fake: f, writes: netconf.CountWrites(f.Host)}
		tg.must(t, f.AddLink(netconf.FakeLink{Name: "lo", MTU: 65536, Up: true, Loopback: true}))
		tg.must(t, f.AddAddress("lo", netip.MustParsePrefix("127.0.0.1/8")))
		tg.must(t, f.AddAddress("lo", netip.MustParsePrefix("::1/128")))
		return tg
	}
	testenv.NeedBinaries(t, "ip")
	ns := testenv.NewNetns(t)
	h, err := netconf.Open(ns.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	tg := &target{kind: kind, host: h, ns: ns, writes: netconf.CountWrites(h)}
	// Probe the kernel rather than assume: a kernel with VRF devices changes the
	// expected outcome of the VRF cases.
	if _, err := tg.ip(context.Background(), "link", "add", "vrfprobe", "type", "vrf", "table", "1"); err == nil {
		tg.vrf = true
		tg.run(t, "link", "del", "vrfprobe")
	}
	return tg
}

func (tg *target) must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", tg.kind, err)
	}
}

func (tg *target) ip(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return tg.ns.IP(ctx, args...)
}

func (tg *target) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := tg.ip(context.Background(), args...)
	if err != nil {
		t.Fatalf("ip %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// addLink adds a tap, as OVS makes an internal port on the userspace datapath.
func (tg *target) addLink(t *testing.T, name, mac string, up bool) {
	t.Helper()
	if tg.fake != nil {
		hw, err := net.ParseMAC(mac)
		tg.must(t, err)
		tg.must(t, tg.fake.AddLink(netconf.FakeLink{Name: name, MAC: hw, Up: up}))
		return
	}
	tg.run(t, "tuntap", "add", name, "mode", "tap")
	tg.run(t, "link", "set", name, "address", mac)
	if up {
		tg.run(t, "link", "set", name, "up")
	}
}

func (tg *target) addAddr(t *testing.T, link, prefix string) {
	t.Helper()
	if tg.fake != nil {
		tg.must(t, tg.fake.AddAddress(link, netip.MustParsePrefix(prefix)))
		return
	}
	tg.run(t, "addr", "add", prefix, "dev", link)
}

func (tg *target) addRoute(t *testing.T, r netconf.FakeRoute) {
	t.Helper()
	if tg.fake != nil {
		tg.must(t, tg.fake.AddRoute(r))
		return
	}
	args := []string{"route", "add", r.Dst.String()}
	if r.Via.IsValid() {
		args = append(args, "via", r.Via.String())
	}
	args = append(args, "dev", r.Dev)
	if r.Table != 0 {
		args = append(args, "table", strconv.Itoa(r.Table))
	}
	if r.Protocol != 0 {
		args = append(args, "proto", strconv.Itoa(r.Protocol))
	}
	if r.Metric != 0 {
		args = append(args, "metric", strconv.Itoa(r.Metric))
	}
	tg.run(t, args...)
}

func (tg *target) addRule(t *testing.T, r netconf.FakeRule) {
	t.Helper()
	if tg.fake != nil {
		tg.must(t, tg.fake.AddRule(r))
		return
	}
	tg.run(t, "rule", "add", "to", r.Dst.String(), "lookup", strconv.Itoa(r.Table),
		"pref", strconv.Itoa(r.Priority), "protocol", strconv.Itoa(r.Protocol))
}

func (tg *target) deleteLink(t *testing.T, name string) {
	t.Helper()
	if tg.fake != nil {
		tg.must(t, tg.fake.DeleteLink(name))
		return
	}
	tg.run(t, "link", "del", name)
}

// dump returns the target's state in the Fake's Dump format.
func (tg *target) dump(t *testing.T) string {
	t.Helper()
	if tg.fake != nil {
		return tg.fake.Dump()
	}
	var lines []string
	var links []struct {
		Name     string   `json:"ifname"`
		Flags    []string `json:"flags"`
		MTU      int      `json:"mtu"`
		Address  string   `json:"address"`
		LinkType string   `json:"link_type"`
		Master   string   `json:"master"`
		Alias    string   `json:"ifalias"`
		Addrs    []struct {
			Local     string `json:"local"`
			PrefixLen int    `json:"prefixlen"`
		} `json:"addr_info"`
	}
	tg.decode(t, &links, "-d", "addr", "show")
	for _, l := range links {
		if l.LinkType == "loopback" {
			continue
		}
		lines = append(lines, netconf.DumpLink(l.Name, l.Address, l.MTU, slices.Contains(l.Flags, "UP"), l.Master, l.Alias))
		for _, a := range l.Addrs {
			lines = append(lines, fmt.Sprintf("addr %s %s/%d", l.Name, a.Local, a.PrefixLen))
		}
	}
	for _, family := range []string{"-4", "-6"} {
		var routes []struct {
			Type     string `json:"type"`
			Dst      string `json:"dst"`
			Gateway  string `json:"gateway"`
			Dev      string `json:"dev"`
			Table    string `json:"table"`
			Protocol string `json:"protocol"`
		}
		tg.decode(t, &routes, family, "route", "show", "table", "all")
		for _, r := range routes {
			if (r.Type != "" && r.Type != "unicast") || r.Protocol == "kernel" {
				continue
			}
			var via netip.Addr
			if r.Gateway != "" {
				via = netip.MustParseAddr(r.Gateway)
			}
			lines = append(lines, netconf.DumpRoute(tableNumber(t, r.Table), parseDst(t, family, r.Dst, -1), via, r.Dev, protocolNumber(t, r.Protocol)))
		}
		var rules []struct {
			Priority int    `json:"priority"`
			Dst      string `json:"dst"`
			DstLen   int    `json:"dstlen"`
			Oif      string `json:"oif"`
			Table    string `json:"table"`
			Protocol string `json:"protocol"`
		}
		tg.decode(t, &rules, family, "rule", "show")
		for _, r := range rules {
			// The kernel's default rules, and rules without a destination (a VRF
			// kernel's l3mdev rule), are not what the cases are about.
			if r.Priority == 0 || r.Priority == 32766 || r.Priority == 32767 || (r.Dst == "" && r.Oif == "") {
				continue
			}
			lines = append(lines, netconf.DumpRule(r.Priority, parseDst(t, family, r.Dst, r.DstLen), r.Oif, tableNumber(t, r.Table), protocolNumber(t, r.Protocol)))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func (tg *target) decode(t *testing.T, v any, args ...string) {
	t.Helper()
	out := tg.run(t, append([]string{"-j"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decode ip -j %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// parseDst reads ip's "default", "10.0.0.0/8" or an address with a separate length.
func parseDst(t *testing.T, family, dst string, bits int) netip.Prefix {
	t.Helper()
	if dst == "default" || dst == "" {
		if family == "-6" {
			return netip.MustParsePrefix("::/0")
		}
		return netip.MustParsePrefix("0.0.0.0/0")
	}
	if strings.Contains(dst, "/") {
		return netip.MustParsePrefix(dst)
	}
	a := netip.MustParseAddr(dst)
	if bits <= 0 {
		// ip -j leaves dstlen out of a host rule (and a route's dst is a bare
		// address only for a host route).
		bits = a.BitLen()
	}
	return netip.PrefixFrom(a, bits)
}

func tableNumber(t *testing.T, name string) int {
	t.Helper()
	switch name {
	case "", "main":
		return 254
	case "local":
		return 255
	case "default":
		return 253
	}
	n, err := strconv.Atoi(name)
	if err != nil {
		t.Fatalf("table %q: %v", name, err)
	}
	return n
}

// protocolNumber reads ip's protocol names (/etc/iproute2/rt_protos) back.
func protocolNumber(t *testing.T, name string) int {
	t.Helper()
	switch name {
	case "":
		return 0
	case "redirect":
		return 1
	case "kernel":
		return 2
	case "boot":
		return 3
	case "static":
		return 4
	}
	n, err := strconv.Atoi(name)
	if err != nil {
		t.Fatalf("protocol %q: %v", name, err)
	}
	return n
}
