package topology

import (
	"net"
	"net/netip"
	"testing"
)

// TestPodAddressesIsMacAndIPs: a pod port's address entry, written in one buffer, is
// the one macAndIPs writes of the parsed MAC and the pod's addresses.
func TestPodAddressesIsMacAndIPs(t *testing.T) {
	for _, c := range []struct {
		mac string
		ips []string
	}{
		{"0a:58:0a:f4:01:05", []string{"10.244.1.5/24"}},
		{"0A:58:CB:CB:00:0F", []string{"203.203.0.15/24", "2010:100:200::f/60"}},
		{"0a-58-00-00-00-ff", []string{"fd00:10:244:1::5/64", "10.0.0.5/16"}},
		{"02:42:ac:12:00:02", []string{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "255.255.255.255/32"}},
	} {
		mac, err := net.ParseMAC(c.mac)
		if err != nil {
			t.Fatal(err)
		}
		var prefixes []netip.Prefix
		var addrs []netip.Addr
		for _, s := range c.ips {
			p := netip.MustParsePrefix(s)
			prefixes, addrs = append(prefixes, p), append(addrs, p.Addr())
		}
		if got, want := podAddresses(mac, prefixes), macAndIPs(mac.String(), addrs); got != want {
			t.Errorf("podAddresses(%s, %v) = %q, want %q", c.mac, c.ips, got, want)
		}
	}
}

// TestPrefixTextIsString: prefixText writes a prefix as its String method does.
func TestPrefixTextIsString(t *testing.T) {
	for _, s := range []string{"10.128.1.0/24", "0.0.0.0/0", "255.255.255.255/32", "fd10:0:0:1::/64", "::/0",
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "::ffff:10.0.0.0/104"} {
		p := netip.MustParsePrefix(s)
		if got := prefixText(p); got != p.String() {
			t.Errorf("prefixText(%s) = %q", p, got)
		}
	}
	if got := prefixText(netip.Prefix{}); got != (netip.Prefix{}).String() {
		t.Errorf("prefixText of the zero prefix = %q", got)
	}
}
