package testenv_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/test/testenv"
)

func TestFRRConfigRender(t *testing.T) {
	cfg := testenv.BGPConfig{
		AS:       64512,
		RouterID: netip.MustParseAddr("192.0.2.1"),
		Neighbors: []testenv.BGPNeighbor{
			{Address: netip.MustParseAddr("192.0.2.2"), AS: 64512},
			{Address: netip.MustParseAddr("2001:db8::2"), AS: 64513},
		},
		// Not masked on purpose: FRR rejects a network statement with host bits set.
		Networks: []netip.Prefix{netip.MustParsePrefix("203.0.113.7/24")},
	}
	got, err := cfg.Render("r1")
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	want := `frr defaults traditional
hostname r1
!
router bgp 64512
 bgp router-id 192.0.2.1
 no bgp default ipv4-unicast
 no bgp ebgp-requires-policy
 no bgp network import-check
 timers bgp 3 9
 neighbor 192.0.2.2 remote-as 64512
 neighbor 192.0.2.2 timers connect 1
 neighbor 192.0.2.2 advertisement-interval 0
 neighbor 2001:db8::2 remote-as 64513
 neighbor 2001:db8::2 timers connect 1
 neighbor 2001:db8::2 advertisement-interval 0
 !
 address-family ipv4 unicast
  neighbor 192.0.2.2 activate
  network 203.0.113.0/24
 exit-address-family
 !
 address-family ipv6 unicast
  neighbor 2001:db8::2 activate
 exit-address-family
exit
!
`
	if got != want {
		t.Errorf("Render mismatch\n--- got:\n%s--- want:\n%s", got, want)
	}

	if _, err := (testenv.BGPConfig{}).Render("r0"); err == nil || !strings.Contains(err.Error(), "AS number") {
		t.Errorf("Render without AS: error %v, want one about the AS number", err)
	}
}

func TestNetnsConnectAndCleanup(t *testing.T) {
	testenv.NeedRoot(t, "creating network namespaces")
	var name string
	t.Run("create", func(t *testing.T) {
		a, b := testenv.NewNetns(t), testenv.NewNetns(t)
		name = a.Name
		v := testenv.Connect(t, a, netip.MustParsePrefix("192.0.2.1/24"), b, netip.MustParsePrefix("192.0.2.2/24"))
		ctx := context.Background()
		for _, end := range []struct {
			ns   *testenv.Netns
			dev  string
			addr string
		}{{a, v.AName, "192.0.2.1/24"}, {b, v.BName, "192.0.2.2/24"}} {
			out, err := end.ns.IP(ctx, "-br", "addr", "show", "dev", end.dev)
			if err != nil {
				t.Fatal(err)
			}
			// -br prints "NAME@PEER STATE ADDR...": a veth is UP once its peer is up too.
			if f := strings.Fields(out); len(f) < 3 || f[1] != "UP" || !strings.Contains(out, end.addr) {
				t.Errorf("%s in %s: %q, want it UP with %s", end.dev, end.ns.Name, out, end.addr)
			}
			lo, err := end.ns.IP(ctx, "-br", "link", "show", "dev", "lo")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(lo, "UNKNOWN") && !strings.Contains(lo, "UP") {
				t.Errorf("lo in %s is down: %q", end.ns.Name, lo)
			}
		}
		// The veth is what joins them: b reaches a's address through it.
		out, err := b.IP(ctx, "route", "get", "192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "dev "+v.BName) {
			t.Errorf("route from %s to 192.0.2.1: %q, want it via %s", b.Name, out, v.BName)
		}
	})
	if name == "" {
		t.Fatal("subtest created no namespace")
	}
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			t.Errorf("network namespace %s still exists after its test ended", name)
		}
	}
}

// TestBGPRouteBetweenNamespaces runs an FRR in each of two namespaces joined by a veth;
// one announces a prefix, and the other must install it in its kernel as a proto bgp
// route via the announcer's veth address.
func TestBGPRouteBetweenNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name         string
		aAddr, bAddr netip.Prefix
		aAS, bAS     uint32
		announced    netip.Prefix
	}{
		{
			name:  "ipv4 iBGP",
			aAddr: netip.MustParsePrefix("192.0.2.1/24"), bAddr: netip.MustParsePrefix("192.0.2.2/24"),
			aAS: 64512, bAS: 64512,
			announced: netip.MustParsePrefix("203.0.113.0/24"),
		},
		{
			name:  "ipv6 eBGP",
			aAddr: netip.MustParsePrefix("2001:db8::1/64"), bAddr: netip.MustParsePrefix("2001:db8::2/64"),
			aAS: 64512, bAS: 64513,
			announced: netip.MustParsePrefix("2001:db8:ffff::/48"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := testenv.NewNetns(t), testenv.NewNetns(t)
			v := testenv.Connect(t, a, tc.aAddr, b, tc.bAddr)
			testenv.StartFRR(t, a, testenv.BGPConfig{
				AS:        tc.aAS,
				RouterID:  netip.MustParseAddr("198.51.100.1"),
				Neighbors: []testenv.BGPNeighbor{{Address: tc.bAddr.Addr(), AS: tc.bAS}},
				Networks:  []netip.Prefix{tc.announced},
			})
			rb := testenv.StartFRR(t, b, testenv.BGPConfig{
				AS:        tc.bAS,
				RouterID:  netip.MustParseAddr("198.51.100.2"),
				Neighbors: []testenv.BGPNeighbor{{Address: tc.aAddr.Addr(), AS: tc.aAS}},
			})

			route, err := rb.WaitForBGPRoute(context.Background(), tc.announced)
			if err != nil {
				t.Fatal(err)
			}
			// Over IPv6, the announcer sends its link-local address as well, and zebra
			// installs that one as the next hop.
			wantGateway := tc.aAddr.Addr().String()
			if tc.aAddr.Addr().Is6() {
				wantGateway = linkLocal(t, a, v.AName)
			}
			if route.Gateway != wantGateway || route.Dev != v.BName {
				t.Errorf("route to %s in %s: via %s dev %s, want via %s dev %s",
					tc.announced, b.Name, route.Gateway, route.Dev, wantGateway, v.BName)
			}
			// The diagnostics helper must reach this instance's bgpd, not another one.
			summary, err := rb.Vtysh(context.Background(), "show bgp summary")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(summary, "local AS number "+strconv.FormatUint(uint64(tc.bAS), 10)) || !strings.Contains(summary, tc.aAddr.Addr().String()) {
				t.Errorf("show bgp summary of %s does not show AS %d with neighbor %s:\n%s", b.Name, tc.bAS, tc.aAddr.Addr(), summary)
			}
		})
	}
}

// linkLocal returns the IPv6 link-local address of dev in ns.
func linkLocal(t *testing.T, ns *testenv.Netns, dev string) string {
	t.Helper()
	out, err := ns.IP(context.Background(), "-6", "-j", "addr", "show", "dev", dev, "scope", "link")
	if err != nil {
		t.Fatal(err)
	}
	var links []struct {
		AddrInfo []struct {
			Local string `json:"local"`
		} `json:"addr_info"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		t.Fatalf("decode addresses of %s in %s: %v in %q", dev, ns.Name, err, out)
	}
	for _, l := range links {
		// ip leaves an empty object for each address its filter dropped.
		for _, a := range l.AddrInfo {
			if a.Local != "" {
				return a.Local
			}
		}
	}
	t.Fatalf("no link-local address on %s in %s: %q", dev, ns.Name, out)
	return ""
}
