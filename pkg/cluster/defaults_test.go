package cluster

import (
	"net/netip"
	"slices"
	"testing"
)

// TestDefaults pins OVN-Kubernetes' defaults, checks that each list holds at most one
// prefix per family, IPv4 first, and that a caller changing what it got changes the
// default for nobody else.
func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		get  func() []netip.Prefix
		want []string
	}{
		{"DefaultJoinSubnets", DefaultJoinSubnets, []string{"100.64.0.0/16", "fd98::/64"}},
		{"UDNJoinSubnets", UDNJoinSubnets, []string{"100.65.0.0/16", "fd99::/64"}},
		{"DefaultTransitSubnets", DefaultTransitSubnets, []string{"100.88.0.0/16", "fd97::/64"}},
		{"DefaultMasqueradeSubnets", DefaultMasqueradeSubnets, []string{"169.254.0.0/17", "fd69::/112"}},
		{"DefaultServiceSubnets", DefaultServiceSubnets, []string{"10.96.0.0/16"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.get()
			if !slices.Equal(prefixStrings(got), tc.want) {
				t.Fatalf("%s() = %v, want %v", tc.name, got, tc.want)
			}
			if err := onePerFamily(tc.name, got); err != nil {
				t.Error(err)
			}
			if !got[0].Addr().Is4() {
				t.Errorf("%s() starts with %s, want the IPv4 prefix first", tc.name, got[0])
			}
			got[0] = netip.MustParsePrefix("10.0.0.0/8")
			if again := tc.get(); again[0].String() != tc.want[0] {
				t.Errorf("changing what %s() returned changed the default to %v", tc.name, again)
			}
		})
	}
}

// TestDefaultConnectSubnets checks that the default connect subnets' blocks hold as
// many addresses in both families, as the API requires of one connect's subnets.
func TestDefaultConnectSubnets(t *testing.T) {
	subnets := DefaultConnectSubnets()
	if len(subnets) != 2 || !subnets[0].CIDR.Addr().Is4() || subnets[1].CIDR.Addr().Is4() {
		t.Fatalf("DefaultConnectSubnets() = %v, want an IPv4 then an IPv6 subnet", subnets)
	}
	for _, s := range subnets {
		if s.CIDR != s.CIDR.Masked() || s.NetworkPrefix <= s.CIDR.Bits() || s.NetworkPrefix >= s.CIDR.Addr().BitLen() {
			t.Errorf("%s with blocks of /%d: want a masked subnet with blocks longer than it and shorter than an address", s.CIDR, s.NetworkPrefix)
		}
	}
	if v4, v6 := subnets[0], subnets[1]; 32-v4.NetworkPrefix != 128-v6.NetworkPrefix || 32-v4.CIDR.Bits() != 128-v6.CIDR.Bits() {
		t.Errorf("IPv4 %s /%d and IPv6 %s /%d hold different numbers of blocks or addresses", v4.CIDR, v4.NetworkPrefix, v6.CIDR, v6.NetworkPrefix)
	}
}
