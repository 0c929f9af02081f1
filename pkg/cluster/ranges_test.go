package cluster

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestConfiguredRanges checks the ranges of a configuration as the leader has them: the
// default network's join and transit subnets default to those of its cluster subnets'
// families, configured ones are kept, and Reserved names each in the leader's words,
// in the order the checks take them.
func TestConfiguredRanges(t *testing.T) {
	v4 := DefaultNetworkConfig{Subnets: []Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}}
	dual := DefaultNetworkConfig{Subnets: []Subnet{
		{CIDR: netip.MustParsePrefix("10.128.0.0/14"), HostSubnet: 23},
		{CIDR: netip.MustParsePrefix("fd00:10:244::/48"), HostSubnet: 64},
	}, TransitSubnets: mustPrefixes("100.90.0.0/16", "fd90::/64")}
	services := Config{
		MasqueradeSubnets: mustPrefixes("169.254.0.0/17"),
		ServiceSubnets:    mustPrefixes("10.96.0.0/16"),
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		def  DefaultNetworkConfig
		want []string
	}{
		{"IPv4 with the default join and transit subnets", services, v4, []string{
			`cluster subnet 10.244.0.0/16 of network "default"`,
			`join subnet 100.64.0.0/16 of network "default"`,
			"transit subnet 100.88.0.0/16",
			"masquerade subnet 169.254.0.0/17",
			"service subnet 10.96.0.0/16",
		}},
		{"dual-stack with join and transit subnets of its own", Config{DefaultJoinSubnets: mustPrefixes("100.70.0.0/16", "fd70::/64")}, dual, []string{
			`cluster subnet 10.128.0.0/14 of network "default"`,
			`cluster subnet fd00:10:244::/48 of network "default"`,
			`join subnet 100.70.0.0/16 of network "default"`,
			`join subnet fd70::/64 of network "default"`,
			"transit subnet 100.90.0.0/16",
			"transit subnet fd90::/64",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ConfiguredRanges(tc.cfg, tc.def)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, rr := range r.Reserved() {
				if !strings.Contains(rr.What, rr.Prefix.String()) {
					t.Errorf("range %s is named %q, which does not name it", rr.Prefix, rr.What)
				}
				got = append(got, rr.What)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Reserved() names\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	if _, err := ConfiguredRanges(services, DefaultNetworkConfig{}); err == nil {
		t.Error("ConfiguredRanges of a default network without cluster subnets: no error")
	}
}

// TestConfiguredRangesCopies checks that the ranges share no slice with the
// configuration, so that a caller changing one changes nothing of the other.
func TestConfiguredRangesCopies(t *testing.T) {
	cfg := Config{MasqueradeSubnets: mustPrefixes("169.254.0.0/17"), ServiceSubnets: mustPrefixes("10.96.0.0/16"), DefaultJoinSubnets: mustPrefixes("100.64.0.0/16")}
	def := DefaultNetworkConfig{Subnets: []Subnet{{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}}, TransitSubnets: mustPrefixes("100.88.0.0/16")}
	r, err := ConfiguredRanges(cfg, def)
	if err != nil {
		t.Fatal(err)
	}
	other := netip.MustParsePrefix("10.0.0.0/8")
	r.MasqueradeSubnets[0], r.ServiceSubnets[0], r.JoinSubnets[0], r.TransitSubnets[0] = other, other, other, other
	for name, p := range map[string]netip.Prefix{
		"masquerade": cfg.MasqueradeSubnets[0], "service": cfg.ServiceSubnets[0],
		"join": cfg.DefaultJoinSubnets[0], "transit": def.TransitSubnets[0],
	} {
		if p == other {
			t.Errorf("changing the ranges changed the configuration's %s subnet", name)
		}
	}
}

// TestReservedNodeSubnets checks that a subnet a node publishes, standing in for the
// cluster subnets, is named as the node's, not as a cluster subnet.
func TestReservedNodeSubnets(t *testing.T) {
	r := ClusterRanges{NodeSubnets: []NodeSubnet{{Node: "n1", Prefix: netip.MustParsePrefix("10.244.1.0/24")}}}
	got := r.Reserved()
	want := `subnet 10.244.1.0/24 of network "default" on node n1`
	if len(got) != 1 || got[0].What != want || got[0].Prefix != netip.MustParsePrefix("10.244.1.0/24") {
		t.Errorf("Reserved() = %v, want one range named %q", got, want)
	}
}
