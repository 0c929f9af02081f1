package cluster

import (
	"net/netip"
	"reflect"
	"testing"
)

func connectSubnets(cidrs ...string) []ConnectSubnet {
	var out []ConnectSubnet
	for _, c := range cidrs {
		out = append(out, ConnectSubnet{CIDR: netip.MustParsePrefix(c), NetworkPrefix: 24})
	}
	return out
}

// checkError compares a check's error with the one wanted, nil meaning none.
func checkError(t *testing.T, check string, got, want error) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("%s: %v, want none", check, got)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %#v, want %#v", check, got, want)
	}
}

func TestCheckConnectReserved(t *testing.T) {
	reserved := []ReservedRange{
		{Prefix: netip.MustParsePrefix("10.244.0.0/16"), What: `cluster subnet 10.244.0.0/16 of network "default"`},
		{Prefix: netip.MustParsePrefix("fd69::/112"), What: "masquerade subnet fd69::/112"},
	}
	for _, tc := range []struct {
		name    string
		subnets []ConnectSubnet
		want    error
	}{
		{name: "clear of every range", subnets: connectSubnets("192.168.0.0/16", "fd00:10::/64")},
		{name: "inside a range", subnets: connectSubnets("10.244.8.0/24"),
			want: &ConnectReservedError{Subnet: netip.MustParsePrefix("10.244.8.0/24"), Range: reserved[0]}},
		{name: "around a range, in the second family", subnets: connectSubnets("192.168.0.0/16", "fd69::/64"),
			want: &ConnectReservedError{Subnet: netip.MustParsePrefix("fd69::/64"), Range: reserved[1]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, "CheckConnectReserved", CheckConnectReserved(tc.subnets, reserved), tc.want)
		})
	}
}

func TestCheckConnectNetwork(t *testing.T) {
	blue := checkNet("blue", Layer3, Primary, []string{"10.10.0.0/16"})
	for _, tc := range []struct {
		name    string
		subnets []ConnectSubnet
		want    error
	}{
		{name: "clear of the network", subnets: connectSubnets("192.168.0.0/16")},
		{name: "over its subnet", subnets: connectSubnets("10.10.4.0/24"),
			want: &ConnectNetworkOverlapError{Network: "blue", Subnet: netip.MustParsePrefix("10.10.4.0/24"),
				Range: ReservedRange{Prefix: netip.MustParsePrefix("10.10.0.0/16"), What: "subnet 10.10.0.0/16"}}},
		{name: "over its join subnet", subnets: connectSubnets("100.65.0.0/24"),
			want: &ConnectNetworkOverlapError{Network: "blue", Subnet: netip.MustParsePrefix("100.65.0.0/24"),
				Range: ReservedRange{Prefix: netip.MustParsePrefix("100.65.0.0/16"), What: "join subnet 100.65.0.0/16"}}},
		{name: "over its transit subnet", subnets: connectSubnets("100.88.0.0/24"),
			want: &ConnectNetworkOverlapError{Network: "blue", Subnet: netip.MustParsePrefix("100.88.0.0/24"),
				Range: ReservedRange{Prefix: netip.MustParsePrefix("100.88.0.0/16"), What: "transit subnet 100.88.0.0/16"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, "CheckConnectNetwork", CheckConnectNetwork(tc.subnets, blue), tc.want)
		})
	}
}

func TestCheckConnectedOverlap(t *testing.T) {
	blue := checkNet("blue", Layer3, Primary, []string{"10.10.0.0/16"})
	red := checkNet("red", Layer2, Primary, []string{"10.20.0.0/16"})
	for _, tc := range []struct {
		name      string
		net       *Network
		connected []*Network
		want      error
	}{
		{name: "the first network", net: blue},
		{name: "distinct subnets", net: checkNet("green", Layer3, Primary, []string{"10.30.0.0/16"}), connected: []*Network{blue, red}},
		{name: "inside a connected network's subnet", net: checkNet("green", Layer2, Primary, []string{"10.20.5.0/24"}), connected: []*Network{blue, red},
			want: &ConnectedOverlapError{Network: "green", Subnet: netip.MustParsePrefix("10.20.5.0/24"), Other: "red", OtherSubnet: netip.MustParsePrefix("10.20.0.0/16")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, "CheckConnectedOverlap", CheckConnectedOverlap(tc.net, tc.connected), tc.want)
		})
	}
}

func TestCheckConnectConflict(t *testing.T) {
	older := &Connect{Name: "older", Networks: []string{"blue", "red"}, Subnets: connectSubnets("192.168.0.0/16")}
	for _, tc := range []struct {
		name string
		c    *Connect
		want error
	}{
		{name: "no network in common", c: &Connect{Networks: []string{"green"}, Subnets: connectSubnets("192.168.0.0/16")}},
		{name: "distinct subnets", c: &Connect{Networks: []string{"red"}, Subnets: connectSubnets("192.169.0.0/16")}},
		{name: "overlapping subnets and networks in common", c: &Connect{Networks: []string{"blue", "green", "red"}, Subnets: connectSubnets("192.168.128.0/17")},
			want: &ConnectConflictError{Subnet: netip.MustParsePrefix("192.168.128.0/17"), OtherSubnet: netip.MustParsePrefix("192.168.0.0/16"), Other: "older", Shared: []string{"blue", "red"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkError(t, "CheckConnectConflict", CheckConnectConflict(tc.c, older, false), tc.want)
		})
	}
}

// TestConnectConflictPrecedence: the message says why the older connect goes first.
func TestConnectConflictPrecedence(t *testing.T) {
	e := &ConnectConflictError{Subnet: netip.MustParsePrefix("192.168.0.0/24"), OtherSubnet: netip.MustParsePrefix("192.168.0.0/16"), Other: "a", Shared: []string{"blue"}}
	for _, tc := range []struct {
		sameSecond bool
		want       string
	}{
		{false, `connect subnet 192.168.0.0/24 overlaps connect subnet 192.168.0.0/16 of ClusterNetworkConnect "a", which was created first and also connects network "blue", so nothing is connected; ` +
			RecreateConnectFix + `, not overlapping "a"'s, or select networks "a" does not`},
		{true, `connect subnet 192.168.0.0/24 overlaps connect subnet 192.168.0.0/16 of ClusterNetworkConnect "a", which was created in the same second and comes first by name and also connects network "blue", so nothing is connected; ` +
			RecreateConnectFix + `, not overlapping "a"'s, or select networks "a" does not`},
	} {
		e.SameSecond = tc.sameSecond
		if got := e.Error(); got != tc.want {
			t.Errorf("SameSecond %v: %s\nwant %s", tc.sameSecond, got, tc.want)
		}
	}
}
