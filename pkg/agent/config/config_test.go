package config

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
)

func TestClusterConfigAndDefaultNetwork(t *testing.T) {
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	v4 := cluster.Subnet{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}
	v6 := cluster.Subnet{CIDR: netip.MustParsePrefix("fd00:10:244::/48"), HostSubnet: 64}
	tests := []struct {
		name        string
		subnets     []cluster.Subnet
		wantCluster cluster.Config
		wantNetwork cluster.DefaultNetworkConfig
	}{{
		name:    "IPv4",
		subnets: []cluster.Subnet{v4},
		wantCluster: cluster.Config{
			MasqueradeSubnets:  prefixes("169.254.0.0/17"),
			DefaultJoinSubnets: prefixes("100.64.0.0/16"),
			ServiceSubnets:     prefixes("10.96.0.0/16"),
			HostServiceIPs:     addrs("10.96.0.1", "10.96.0.10"),
		},
		wantNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{v4}, MTU: 1500,
			TransitSubnets: prefixes("100.88.0.0/16")},
	}, {
		name:    "dual-stack",
		subnets: []cluster.Subnet{v4, v6},
		wantCluster: cluster.Config{
			MasqueradeSubnets:  prefixes("169.254.0.0/17", "fd69::/112"),
			DefaultJoinSubnets: prefixes("100.64.0.0/16", "fd98::/64"),
			ServiceSubnets:     prefixes("10.96.0.0/16", "fd00:10:96::/112"),
			HostServiceIPs:     addrs("10.96.0.1", "10.96.0.10", "fd00:10:96::1"),
		},
		wantNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{v4, v6}, MTU: 1500,
			TransitSubnets: prefixes("100.88.0.0/16", "fd97::/64")},
	}, {
		name:    "IPv6",
		subnets: []cluster.Subnet{v6},
		wantCluster: cluster.Config{
			MasqueradeSubnets:  prefixes("fd69::/112"),
			DefaultJoinSubnets: prefixes("fd98::/64"),
			ServiceSubnets:     prefixes("fd00:10:96::/112"),
			HostServiceIPs:     addrs("fd00:10:96::1"),
		},
		wantNetwork: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{v6}, MTU: 1500,
			TransitSubnets: prefixes("fd97::/64")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaults()
			c.MTU = 1500
			c.ClusterSubnets = tt.subnets
			c.ServiceSubnets = prefixes("10.96.0.0/16", "fd00:10:96::/112")
			c.HostServiceIPs = addrs("10.96.0.1", "10.96.0.10", "fd00:10:96::1")
			if err := c.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if got := c.ClusterConfig(); !reflect.DeepEqual(got, tt.wantCluster) {
				t.Errorf("ClusterConfig =\n%+v\nwant\n%+v", got, tt.wantCluster)
			}
			got := c.DefaultNetwork()
			if !reflect.DeepEqual(got, tt.wantNetwork) {
				t.Errorf("DefaultNetwork =\n%+v\nwant\n%+v", got, tt.wantNetwork)
			}
			// The results share no memory with the Config.
			got.Subnets[0].HostSubnet = 99
			if c.ClusterSubnets[0].HostSubnet == 99 {
				t.Error("DefaultNetwork shares its subnets with the Config")
			}
		})
	}
}
