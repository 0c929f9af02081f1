package alloc

import (
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// checkErr fails unless err is nil when wantErr is empty, or err's text holds every
// part of wantErr ("|"-separated).
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	if wantErr == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one containing %q", wantErr)
	}
	for _, part := range strings.Split(wantErr, "|") {
		if !strings.Contains(err.Error(), part) {
			t.Fatalf("error %q does not contain %q", err, part)
		}
	}
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }

func TestNthAddr(t *testing.T) {
	for _, tc := range []struct {
		prefix  netip.Prefix
		n       int
		want    string
		wantErr string
	}{
		{prefix: pfx("10.244.1.0/24"), n: 0, want: "10.244.1.0"},
		{prefix: pfx("10.244.1.0/24"), n: 1, want: "10.244.1.1"},
		{prefix: pfx("10.244.1.0/24"), n: 2, want: "10.244.1.2"},
		{prefix: pfx("10.244.1.0/24"), n: 255, want: "10.244.1.255"},
		{prefix: pfx("10.244.1.0/24"), n: 256, wantErr: "offset 256 is outside 10.244.1.0/24"},
		{prefix: pfx("10.244.1.7/24"), n: 1, want: "10.244.1.1"}, // unmasked input
		{prefix: pfx("10.0.0.0/32"), n: 0, want: "10.0.0.0"},
		{prefix: pfx("10.0.0.0/32"), n: 1, wantErr: "offset 1 is outside 10.0.0.0/32"},
		{prefix: pfx("255.255.255.254/31"), n: 1, want: "255.255.255.255"},
		{prefix: pfx("255.255.255.254/31"), n: 2, wantErr: "outside 255.255.255.254/31"},
		{prefix: pfx("10.244.1.0/24"), n: -1, wantErr: "negative offset -1"},
		{prefix: pfx("fd00:10:244:1::/64"), n: 2, want: "fd00:10:244:1::2"},
		{prefix: pfx("fd00::/127"), n: 1, want: "fd00::1"},
		{prefix: pfx("fd00::/127"), n: 2, wantErr: "offset 2 is outside fd00::/127"},
		{prefix: pfx("::/0"), n: 1 << 62, want: "::4000:0:0:0"},
		{prefix: netip.Prefix{}, n: 0, wantErr: "no prefix given"},
		{prefix: netip.Prefix{}, n: 5, wantErr: "no prefix given"},
	} {
		t.Run(tc.prefix.String()+"/"+strconv.Itoa(tc.n), func(t *testing.T) {
			got, err := NthAddr(tc.prefix, tc.n)
			checkErr(t, err, tc.wantErr)
			if err == nil && got.String() != tc.want {
				t.Fatalf("NthAddr(%s, %d) = %s, want %s", tc.prefix, tc.n, got, tc.want)
			}
		})
	}
}

func TestTransitPeers(t *testing.T) {
	for _, tc := range []struct {
		transit         netip.Prefix
		nodeID          int
		router, gateway string
		wantErr         string
	}{
		// OKEP-5094: node id 4 → trtor 100.88.0.8/31, rtotr 100.88.0.9/31.
		{transit: pfx("100.88.0.0/16"), nodeID: 4, router: "100.88.0.8/31", gateway: "100.88.0.9/31"},
		{transit: pfx("fd97::/64"), nodeID: 4, router: "fd97::8/127", gateway: "fd97::9/127"},
		// The OKEP's other nodes.
		{transit: pfx("100.88.0.0/16"), nodeID: 2, router: "100.88.0.4/31", gateway: "100.88.0.5/31"},
		{transit: pfx("100.88.0.0/16"), nodeID: 3, router: "100.88.0.6/31", gateway: "100.88.0.7/31"},
		{transit: pfx("fd97::/64"), nodeID: 3, router: "fd97::6/127", gateway: "fd97::7/127"},
		{transit: pfx("100.88.0.0/16"), nodeID: 0, router: "100.88.0.0/31", gateway: "100.88.0.1/31"},
		{transit: pfx("fd97::/64"), nodeID: 0, router: "fd97::/127", gateway: "fd97::1/127"},
		// The last node id that fits a /16, and the first that does not.
		{transit: pfx("100.88.0.0/16"), nodeID: 32767, router: "100.88.255.254/31", gateway: "100.88.255.255/31"},
		{transit: pfx("100.88.0.0/16"), nodeID: 32768, wantErr: "node id 32768|outside 100.88.0.0/16|use a larger transit subnet"},
		{transit: pfx("fd97::/112"), nodeID: 32767, router: "fd97::fffe/127", gateway: "fd97::ffff/127"},
		{transit: pfx("fd97::/112"), nodeID: 32768, wantErr: "node id 32768|outside fd97::/112"},
		// A /31 or /127 transit subnet holds node id 0 only; a /32 not even that.
		{transit: pfx("100.88.0.0/31"), nodeID: 0, router: "100.88.0.0/31", gateway: "100.88.0.1/31"},
		{transit: pfx("100.88.0.0/31"), nodeID: 1, wantErr: "node id 1"},
		{transit: pfx("fd97::/127"), nodeID: 0, router: "fd97::/127", gateway: "fd97::1/127"},
		{transit: pfx("100.88.0.0/32"), nodeID: 0, wantErr: "offset 1 is outside 100.88.0.0/32"},
		{transit: pfx("100.88.0.0/16"), nodeID: -1, wantErr: "node id -1 is negative"},
		{transit: pfx("100.88.0.0/16"), nodeID: math.MaxInt, wantErr: "outside 100.88.0.0/16"},
		{transit: netip.Prefix{}, nodeID: 1, wantErr: "no prefix given"},
	} {
		t.Run(tc.transit.String()+"/"+strconv.Itoa(tc.nodeID), func(t *testing.T) {
			router, gateway, err := TransitPeers(tc.transit, tc.nodeID)
			checkErr(t, err, tc.wantErr)
			if err == nil && (router.String() != tc.router || gateway.String() != tc.gateway) {
				t.Fatalf("TransitPeers(%s, %d) = %s, %s; want %s, %s", tc.transit, tc.nodeID, router, gateway, tc.router, tc.gateway)
			}
		})
	}
}

func TestTransitSwitchIPAndGatewayRouterJoinIP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f       func(netip.Prefix, int) (netip.Prefix, error)
		subnet  netip.Prefix
		nodeID  int
		want    string
		wantErr string
	}{
		{name: "ts", f: TransitSwitchIP, subnet: pfx("100.88.0.0/16"), nodeID: 2, want: "100.88.0.2/16"},
		{name: "ts", f: TransitSwitchIP, subnet: pfx("fd97::/64"), nodeID: 2, want: "fd97::2/64"},
		{name: "ts", f: TransitSwitchIP, subnet: pfx("100.88.0.0/16"), nodeID: 0, want: "100.88.0.0/16"},
		{name: "ts", f: TransitSwitchIP, subnet: pfx("100.88.0.0/16"), nodeID: 65535, want: "100.88.255.255/16"},
		{name: "ts", f: TransitSwitchIP, subnet: pfx("100.88.0.0/16"), nodeID: 65536, wantErr: "transit switch IP of node id 65536|outside 100.88.0.0/16|use a larger subnet"},
		{name: "ts", f: TransitSwitchIP, subnet: pfx("100.88.0.0/16"), nodeID: -1, wantErr: "transit switch IP: node id -1 is negative"},
		// OKEP-5094: the GR of node id 4 joins at 100.65.0.4/16 and fd99::4/64.
		{name: "join", f: GatewayRouterJoinIP, subnet: pfx("100.65.0.0/16"), nodeID: 4, want: "100.65.0.4/16"},
		{name: "join", f: GatewayRouterJoinIP, subnet: pfx("fd99::/64"), nodeID: 4, want: "fd99::4/64"},
		{name: "join", f: GatewayRouterJoinIP, subnet: pfx("100.64.0.0/16"), nodeID: MinNodeID, want: "100.64.0.2/16"},
		{name: "join", f: GatewayRouterJoinIP, subnet: pfx("100.65.0.0/30"), nodeID: 3, want: "100.65.0.3/30"},
		{name: "join", f: GatewayRouterJoinIP, subnet: pfx("100.65.0.0/30"), nodeID: 4, wantErr: "gateway router join IP of node id 4|outside 100.65.0.0/30"},
		{name: "join", f: GatewayRouterJoinIP, subnet: pfx("fd99::/127"), nodeID: 2, wantErr: "outside fd99::/127"},
		{name: "join", f: GatewayRouterJoinIP, subnet: pfx("fd99::/64"), nodeID: -7, wantErr: "node id -7 is negative"},
		{name: "join", f: GatewayRouterJoinIP, subnet: netip.Prefix{}, nodeID: 2, wantErr: "no prefix given"},
	} {
		t.Run(tc.name+"/"+tc.subnet.String()+"/"+strconv.Itoa(tc.nodeID), func(t *testing.T) {
			got, err := tc.f(tc.subnet, tc.nodeID)
			checkErr(t, err, tc.wantErr)
			if err == nil && got.String() != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMACAndLinkLocal(t *testing.T) {
	for _, tc := range []struct {
		ip, mac, lla string
	}{
		// DESIGN.md and OKEP-5094: the Layer2 default gateway.
		{ip: "203.203.0.1", mac: "0a:58:cb:cb:00:01", lla: "fe80::858:cbff:fecb:1"},
		// OKEP-5094: the GR's rtotr port, from its join IP.
		{ip: "100.65.0.4", mac: "0a:58:64:41:00:04", lla: "fe80::858:64ff:fe41:4"},
		// OKEP-5094: the trtor port's MAC, from its transit IP.
		{ip: "100.88.0.13", mac: "0a:58:64:58:00:0d", lla: "fe80::858:64ff:fe58:d"},
		{ip: "0.0.0.0", mac: "0a:58:00:00:00:00", lla: "fe80::858:ff:fe00:0"},
		{ip: "255.255.255.255", mac: "0a:58:ff:ff:ff:ff", lla: "fe80::858:ffff:feff:ffff"},
		// An IPv4-mapped IPv6 address counts as IPv4, as net.IP.To4 does upstream.
		{ip: "::ffff:203.203.0.1", mac: "0a:58:cb:cb:00:01", lla: "fe80::858:cbff:fecb:1"},
		// IPv6: the first four bytes of sha256 of the text form, as upstream.
		{ip: "fd99::4", mac: "0a:58:29:37:8e:56"},
		{ip: "2010:100:200::1", mac: "0a:58:d7:eb:90:5e"},
		{ip: "fd97::8", mac: "0a:58:31:e2:6c:9b"},
		// The text form is the canonical one, however the address was written.
		{ip: "fd99:0000::0004", mac: "0a:58:29:37:8e:56"},
		{ip: "fd99::4%eth0", mac: "0a:58:29:37:8e:56"},
	} {
		t.Run(tc.ip, func(t *testing.T) {
			mac := MACFromIP(ip(tc.ip))
			if mac.String() != tc.mac {
				t.Fatalf("MACFromIP(%s) = %s, want %s", tc.ip, mac, tc.mac)
			}
			if tc.lla == "" {
				return
			}
			lla, err := LinkLocalFromMAC(mac)
			checkErr(t, err, "")
			if lla.String() != tc.lla {
				t.Fatalf("LinkLocalFromMAC(%s) = %s, want %s", mac, lla, tc.lla)
			}
			if !lla.IsLinkLocalUnicast() {
				t.Fatalf("%s is not link-local", lla)
			}
		})
	}
	if mac := MACFromIP(netip.Addr{}); mac != nil {
		t.Fatalf("MACFromIP(zero) = %s, want nil", mac)
	}
}

func TestLinkLocalFromMAC(t *testing.T) {
	for _, tc := range []struct {
		mac     net.HardwareAddr
		want    string
		wantErr string
	}{
		{mac: net.HardwareAddr{0x0a, 0x58, 0xcb, 0xcb, 0x00, 0x01}, want: "fe80::858:cbff:fecb:1"},
		// The universal/local bit flips both ways.
		{mac: net.HardwareAddr{0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, want: "fe80::200:ff:fe00:0"},
		{mac: net.HardwareAddr{0x02, 0x00, 0x5e, 0x10, 0x20, 0x30}, want: "fe80::5eff:fe10:2030"},
		{mac: net.HardwareAddr{0x0a, 0x58, 0xcb, 0xcb, 0x00, 0x01, 0x02, 0x03}, wantErr: "is not 48 bits|6-byte MAC"},
		{mac: nil, wantErr: "is not 48 bits"},
	} {
		t.Run(tc.mac.String(), func(t *testing.T) {
			got, err := LinkLocalFromMAC(tc.mac)
			checkErr(t, err, tc.wantErr)
			if err == nil && got.String() != tc.want {
				t.Fatalf("LinkLocalFromMAC(%s) = %s, want %s", tc.mac, got, tc.want)
			}
		})
	}
}

func TestMasqueradeIPs(t *testing.T) {
	for _, tc := range []struct {
		subnet    netip.Prefix
		networkID int
		gr, mgmt  string
		wantErr   string
	}{
		{subnet: pfx("169.254.0.0/17"), networkID: 1, gr: "169.254.0.11", mgmt: "169.254.0.12"},
		{subnet: pfx("169.254.0.0/17"), networkID: 2, gr: "169.254.0.13", mgmt: "169.254.0.14"},
		{subnet: pfx("169.254.0.0/17"), networkID: MaxNetworkID, gr: "169.254.32.7", mgmt: "169.254.32.8"},
		// The last id whose two addresses fit a /17, and the first that does not.
		{subnet: pfx("169.254.0.0/17"), networkID: 16378, gr: "169.254.127.253", mgmt: "169.254.127.254"},
		{subnet: pfx("169.254.0.0/17"), networkID: 16379, wantErr: "network id 16379|outside 169.254.0.0/17|use a larger masquerade subnet"},
		{subnet: pfx("fd69::/112"), networkID: 1, gr: "fd69::b", mgmt: "fd69::c"},
		{subnet: pfx("fd69::/112"), networkID: 4095, gr: "fd69::2007", mgmt: "fd69::2008"},
		// The pre-UDN default of older clusters holds no user-defined network.
		{subnet: pfx("169.254.169.0/29"), networkID: 1, wantErr: "network id 1|outside 169.254.169.0/29|use a larger masquerade subnet"},
		{subnet: pfx("169.254.0.0/17"), networkID: 0, wantErr: "need a user-defined network id (1 or more), got 0"},
		{subnet: pfx("169.254.0.0/17"), networkID: -3, wantErr: "got -3"},
		// 10+2·id would wrap around to an address inside the subnet.
		{subnet: pfx("169.254.0.0/17"), networkID: math.MaxInt, wantErr: "too large"},
		{subnet: pfx("::/0"), networkID: math.MaxInt, wantErr: "too large"},
		{subnet: pfx("169.254.0.0/17"), networkID: math.MaxInt - 10, wantErr: "outside 169.254.0.0/17"},
		{subnet: netip.Prefix{}, networkID: 1, wantErr: "no prefix given"},
	} {
		t.Run(tc.subnet.String()+"/"+strconv.Itoa(tc.networkID), func(t *testing.T) {
			gr, mgmt, err := MasqueradeIPs(tc.subnet, tc.networkID)
			checkErr(t, err, tc.wantErr)
			if err == nil && (gr.String() != tc.gr || mgmt.String() != tc.mgmt) {
				t.Fatalf("MasqueradeIPs(%s, %d) = %s, %s; want %s, %s", tc.subnet, tc.networkID, gr, mgmt, tc.gr, tc.mgmt)
			}
		})
	}
}

func TestUpgradeJoinIP(t *testing.T) {
	none := func(netip.Addr) bool { return false }
	for in, want := range map[string]string{
		"100.65.0.0/16": "100.65.255.254/16",
		"100.65.7.9/24": "100.65.7.254/24",
		"fd99::/64":     "fd99::ffff:ffff:ffff:fffe/64",
		"10.0.0.0/30":   "10.0.0.2/30",
		"fd00::/126":    "fd00::2/126",
		"100.64.0.0/10": "100.127.255.254/10",
	} {
		got, err := UpgradeJoinIP(netip.MustParsePrefix(in), none)
		if err != nil || got.String() != want {
			t.Errorf("UpgradeJoinIP(%s) = %v, %v; want %s", in, got, err, want)
		}
	}
	// A node's join IP is skipped, downwards.
	taken := func(a netip.Addr) bool {
		return a == netip.MustParseAddr("10.0.0.6") || a == netip.MustParseAddr("10.0.0.5")
	}
	if got, err := UpgradeJoinIP(netip.MustParsePrefix("10.0.0.0/29"), taken); err != nil || got.String() != "10.0.0.4/29" {
		t.Errorf("with .6 and .5 taken: %v, %v; want 10.0.0.4/29", got, err)
	}
	all := func(netip.Addr) bool { return true }
	if _, err := UpgradeJoinIP(netip.MustParsePrefix("10.0.0.0/29"), all); err == nil || !strings.Contains(err.Error(), "10.0.0.0/29 has no address left") {
		t.Errorf("all taken: %v", err)
	}
	for _, in := range []string{"10.0.0.0/31", "10.0.0.1/32", "fd00::/127"} {
		if _, err := UpgradeJoinIP(netip.MustParsePrefix(in), none); err == nil || !strings.Contains(err.Error(), "too small") {
			t.Errorf("UpgradeJoinIP(%s): error %v, want one naming the subnet too small", in, err)
		}
	}
}
