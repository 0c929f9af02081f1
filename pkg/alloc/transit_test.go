package alloc

import (
	"fmt"
	"net/netip"
	"testing"
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = pfx(s)
	}
	return out
}

var defaultTransit = prefixes("100.88.0.0/16", "fd97::/64")

func TestTransitSubnets(t *testing.T) {
	for _, tc := range []struct {
		name        string
		defaults    []netip.Prefix
		avoid       []netip.Prefix
		want        string
		wantChanged bool
		wantErr     string
	}{{
		name: "no conflict", defaults: defaultTransit,
		avoid: prefixes("203.203.0.0/16", "2010:100:200::/60", "100.65.0.0/16", "fd99::/64"),
		want:  "[100.88.0.0/16 fd97::/64]",
	}, {
		name: "no subnets at all", defaults: defaultTransit,
		want: "[100.88.0.0/16 fd97::/64]",
	}, {
		name: "no defaults", want: "[]",
	}, {
		name: "the network uses the transit subnet", defaults: defaultTransit,
		avoid: prefixes("100.88.0.0/16"),
		want:  "[100.89.0.0/16 fd97::/64]", wantChanged: true,
	}, {
		name: "a subnet inside the transit subnet", defaults: defaultTransit,
		avoid: prefixes("100.88.5.0/24", "100.89.255.255/32"),
		want:  "[100.90.0.0/16 fd97::/64]", wantChanged: true,
	}, {
		name: "a subnet covering several candidates", defaults: defaultTransit,
		avoid: prefixes("100.88.0.0/13"),
		want:  "[100.96.0.0/16 fd97::/64]", wantChanged: true,
	}, {
		name: "wraps within 100.64.0.0/10", defaults: defaultTransit,
		avoid: prefixes("100.88.0.0/13", "100.96.0.0/11", "100.64.0.0/16", "100.65.0.0/16"),
		want:  "[100.66.0.0/16 fd97::/64]", wantChanged: true,
	}, {
		name: "the order of avoid does not matter", defaults: defaultTransit,
		avoid: prefixes("100.65.0.0/16", "100.64.0.0/16", "100.96.0.0/11", "100.88.0.0/13"),
		want:  "[100.66.0.0/16 fd97::/64]", wantChanged: true,
	}, {
		name: "IPv6", defaults: defaultTransit,
		avoid: prefixes("fd97::/64", "fd97:0:0:1::/64"),
		want:  "[100.88.0.0/16 fd97:0:0:2::/64]", wantChanged: true,
	}, {
		name: "IPv6 jumps past a large subnet", defaults: defaultTransit,
		avoid: prefixes("fd97::/49"),
		want:  "[100.88.0.0/16 fd97:0:0:8000::/64]", wantChanged: true,
	}, {
		name: "IPv6 wraps within the /48", defaults: prefixes("fd97:0:0:ffff::/64"),
		avoid: prefixes("fd97:0:0:ffff::/64"),
		want:  "[fd97::/64]", wantChanged: true,
	}, {
		name: "dual-stack, both move", defaults: defaultTransit,
		avoid: prefixes("100.88.0.0/16", "fd97::/63", "100.65.0.0/16", "fd99::/64"),
		want:  "[100.89.0.0/16 fd97:0:0:2::/64]", wantChanged: true,
	}, {
		name: "a custom IPv4 default outside 100.64.0.0/10 stays in its /8", defaults: prefixes("10.255.0.0/16"),
		avoid: prefixes("10.255.0.0/16", "10.0.0.0/16"),
		want:  "[10.1.0.0/16]", wantChanged: true,
	}, {
		name: "an IPv6 /48 default moves within its /16", defaults: prefixes("fd97::/48"),
		avoid: prefixes("fd97::/48"),
		want:  "[fd97:0:1::/48]", wantChanged: true,
	}, {
		name: "IPv6 /128 in a /48 of 2^80 candidates", defaults: prefixes("fd97::/128"),
		avoid: prefixes("fd97::/49", "fd97:0:0:8000::/50"),
		want:  "[fd97:0:0:c000::/128]", wantChanged: true,
	}, {
		name: "nothing fits in 100.64.0.0/10", defaults: defaultTransit,
		avoid:   prefixes("100.64.0.0/10"),
		wantErr: "transit subnet 100.88.0.0/16 overlaps [100.64.0.0/10], and so does every other /16 of 100.64.0.0/10; change the network's subnets or join subnets to leave one free",
	}, {
		name: "nothing fits, avoided prefix larger than the space", defaults: defaultTransit,
		avoid:   prefixes("100.0.0.0/8"),
		wantErr: "overlaps [100.0.0.0/8]",
	}, {
		name: "nothing fits, every /16 taken one by one", defaults: defaultTransit,
		avoid:   allSlash16s(),
		wantErr: "overlaps [100.88.0.0/16], and so does every other /16 of 100.64.0.0/10",
	}, {
		name: "nothing fits in the IPv6 /48", defaults: defaultTransit,
		avoid:   prefixes("fd97:0:0:8000::/49", "fd97::/49"),
		wantErr: "transit subnet fd97::/64 overlaps [fd97::/49]|every other /64 of fd97::/48",
	}, {
		name: "nothing fits, a /128 in a /48", defaults: prefixes("fd97::/128"),
		avoid:   prefixes("fd97:0:0:8000::/49", "fd97::/49"),
		wantErr: "every other /128 of fd97::/48",
	}, {
		name: "a default as large as its search space cannot move", defaults: prefixes("100.0.0.0/8"),
		avoid:   prefixes("100.1.0.0/16"),
		wantErr: "transit subnet 100.0.0.0/8 overlaps [100.1.0.0/16] and, being as large as its search space, cannot move",
	}, {
		name: "an IPv6 /16 default cannot move", defaults: prefixes("fd97::/16"),
		avoid:   prefixes("fd97::/64"),
		wantErr: "cannot move",
	}, {
		// After wrapping, a jump past an avoided prefix reaches the end of the space again.
		name: "nothing fits, the second pass ends in a jump", defaults: prefixes("100.100.0.0/16"),
		avoid:   prefixes("100.100.0.0/16", "100.96.0.0/11", "100.64.0.0/11"),
		wantErr: "every other /16 of 100.64.0.0/10",
	}, {
		name: "unmasked default", defaults: prefixes("100.88.0.1/16"),
		wantErr: "default transit subnet 100.88.0.1/16 has host bits set; use 100.88.0.0/16",
	}, {
		name: "zero default", defaults: []netip.Prefix{{}},
		wantErr: "default transit subnet is not set",
	}, {
		name: "zero prefix to avoid", defaults: defaultTransit, avoid: []netip.Prefix{{}},
		wantErr: "a subnet to avoid is not set",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := TransitSubnets(tc.defaults, tc.avoid)
			checkErr(t, err, tc.wantErr)
			if err != nil {
				return
			}
			if fmt.Sprint(got) != tc.want || changed != tc.wantChanged {
				t.Fatalf("TransitSubnets = %v, %v; want %s, %v", got, changed, tc.want, tc.wantChanged)
			}
			for i, p := range got {
				if a, ok := firstOverlap(p, tc.avoid); ok {
					t.Fatalf("chosen %s overlaps %s", p, a)
				}
				if p.Bits() != tc.defaults[i].Bits() {
					t.Fatalf("chosen %s is not a /%d", p, tc.defaults[i].Bits())
				}
			}
		})
	}
}

// allSlash16s returns the 64 /16s of 100.64.0.0/10 in a scrambled order.
func allSlash16s() []netip.Prefix {
	var out []netip.Prefix
	for i := range 64 {
		j := (i*37 + 11) % 64
		out = append(out, netip.PrefixFrom(netip.AddrFrom4([4]byte{100, byte(64 + j), 0, 0}), 16))
	}
	return out
}
