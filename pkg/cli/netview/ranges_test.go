package netview

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// TestDefaultRanges checks the fallback's ranges: ovnk's defaults of the families of
// the nodes' subnets only (both when no node publishes any), with the nodes' subnets
// named as theirs in place of the cluster subnets.
func TestDefaultRanges(t *testing.T) {
	v4 := cluster.NodeSubnet{Node: "n1", Prefix: netip.MustParsePrefix("10.244.1.0/24")}
	v6 := cluster.NodeSubnet{Node: "n2", Prefix: netip.MustParsePrefix("fd00:10:244:1::/64")}
	for _, tc := range []struct {
		name     string
		nodes    []cluster.NodeSubnet
		families string
		want     []string
	}{
		{"IPv4 nodes", []cluster.NodeSubnet{v4}, "IPv4", []string{
			`join subnet 100.64.0.0/16 of network "default"`, "transit subnet 100.88.0.0/16",
			"masquerade subnet 169.254.0.0/17", "service subnet 10.96.0.0/16",
			`subnet 10.244.1.0/24 of network "default" on node n1`,
		}},
		{"IPv6 nodes", []cluster.NodeSubnet{v6}, "IPv6", []string{
			`join subnet fd98::/64 of network "default"`, "transit subnet fd97::/64",
			"masquerade subnet fd69::/112",
			`subnet fd00:10:244:1::/64 of network "default" on node n2`,
		}},
		{"no node subnets", nil, "IPv4 and IPv6", []string{
			`join subnet 100.64.0.0/16 of network "default"`, `join subnet fd98::/64 of network "default"`,
			"transit subnet 100.88.0.0/16", "transit subnet fd97::/64",
			"masquerade subnet 169.254.0.0/17", "masquerade subnet fd69::/112",
			"service subnet 10.96.0.0/16",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, families, err := defaultRanges(tc.nodes, "ovnk-system")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, rr := range r.Reserved() {
				got = append(got, rr.What)
			}
			if families != tc.families || !slices.Equal(got, tc.want) {
				t.Errorf("defaultRanges: families %q, ranges\n%q\nwant %q,\n%q", families, got, tc.families, tc.want)
			}
		})
	}
}
