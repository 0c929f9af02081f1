package cluster

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// checkNet is a network for the checks: name, topology, role, subnets, namespaces.
func checkNet(name string, t Topology, role Role, subnets []string, namespaces ...string) *Network {
	n := &Network{Name: name, Topology: t, Role: role, Namespaces: namespaces}
	for _, s := range subnets {
		n.Subnets = append(n.Subnets, Subnet{CIDR: netip.MustParsePrefix(s)})
	}
	if role == Primary {
		n.JoinSubnets = ofFamilies(UDNJoinSubnets(), n.Subnets)
	}
	n.TransitSubnets = ofFamilies(DefaultTransitSubnets(), n.Subnets)
	return n
}

func TestCheckReserved(t *testing.T) {
	reserved := []ReservedRange{{Prefix: netip.MustParsePrefix("10.244.0.0/16"), What: "cluster subnet 10.244.0.0/16"}}
	withJoin := func(n *Network, join string) *Network {
		n.JoinSubnets = []netip.Prefix{netip.MustParsePrefix(join)}
		return n
	}
	for _, tc := range []struct {
		name string
		net  *Network
		want *ReservedOverlapError // nil: accepted
	}{
		{name: "clear of everything", net: checkNet("a", Layer3, Primary, []string{"10.10.0.0/16"})},
		{name: "a subnet in a reserved range", net: checkNet("a", Layer3, Primary, []string{"10.244.128.0/17"}),
			want: &ReservedOverlapError{Network: "a", Subnet: netip.MustParsePrefix("10.244.128.0/17"), Range: reserved[0]}},
		{name: "a subnet over its own default join subnet", net: checkNet("a", Layer2, Primary, []string{"100.65.0.0/24"}),
			want: &ReservedOverlapError{Network: "a", Subnet: netip.MustParsePrefix("100.65.0.0/24"), Own: true,
				Range: ReservedRange{Prefix: netip.MustParsePrefix("100.65.0.0/16"), What: "its own join subnet 100.65.0.0/16"}}},
		{name: "a secondary network has no join subnet", net: checkNet("a", Layer2, Secondary, []string{"100.65.0.0/24"})},
		{name: "a Layer3 subnet over its transit subnet", net: checkNet("a", Layer3, Secondary, []string{"100.88.0.0/20"}),
			want: &ReservedOverlapError{Network: "a", Subnet: netip.MustParsePrefix("100.88.0.0/20"), Own: true,
				Range: ReservedRange{Prefix: netip.MustParsePrefix("100.88.0.0/16"), What: "its transit subnet 100.88.0.0/16"}}},
		{name: "a Layer2 network's transit subnets are not checked: they avoid its subnets", net: checkNet("a", Layer2, Secondary, []string{"100.88.0.0/20"})},
		{name: "a join subnet in a reserved range", net: withJoin(checkNet("a", Layer3, Primary, []string{"10.10.0.0/16"}), "10.244.1.0/24"),
			want: &ReservedOverlapError{Network: "a", Subnet: netip.MustParsePrefix("10.244.1.0/24"), Join: true, Range: reserved[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReserved(tc.net, reserved)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckReserved: %v, want none", err)
				}
				return
			}
			var got *ReservedOverlapError
			if !errors.As(err, &got) || *got != *tc.want {
				t.Fatalf("CheckReserved = %#v, want %#v", err, tc.want)
			}
		})
	}
}

func TestCheckConflicts(t *testing.T) {
	blue := checkNet("blue", Layer3, Primary, []string{"10.10.0.0/16"}, "ns1", "ns2")
	red := checkNet("red", Layer2, Secondary, []string{"10.20.0.0/16"}, "ns2")
	accepted := map[string][]*Network{"ns1": {blue}, "ns2": {blue, red}}
	for _, tc := range []struct {
		name string
		net  *Network
		want error // nil: no conflict
	}{
		{name: "another namespace", net: checkNet("c", Layer3, Primary, []string{"10.10.0.0/16"}, "ns3")},
		{name: "a second primary network", net: checkNet("c", Layer3, Primary, []string{"10.30.0.0/16"}, "ns1"),
			want: &PrimaryConflictError{Network: "c", Other: "blue", Namespace: "ns1"}},
		{name: "a secondary network beside the primary one", net: checkNet("c", Layer2, Secondary, []string{"10.30.0.0/16"}, "ns1")},
		{name: "overlapping subnets", net: checkNet("c", Layer2, Secondary, []string{"10.20.128.0/17"}, "ns2"),
			want: &SubnetConflictError{Network: "c", Subnet: netip.MustParsePrefix("10.20.128.0/17"), Other: "red", OtherSubnet: netip.MustParsePrefix("10.20.0.0/16"), Namespace: "ns2"}},
		{name: "overlapping subnets in different namespaces do not conflict", net: checkNet("c", Layer2, Secondary, []string{"10.20.0.0/16"}, "ns1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckConflicts(tc.net, accepted)
			switch want := tc.want.(type) {
			case nil:
				if err != nil {
					t.Fatalf("CheckConflicts: %v, want none", err)
				}
			case *PrimaryConflictError:
				var got *PrimaryConflictError
				if !errors.As(err, &got) || *got != *want {
					t.Fatalf("CheckConflicts = %#v, want %#v", err, want)
				}
			case *SubnetConflictError:
				var got *SubnetConflictError
				if !errors.As(err, &got) || *got != *want {
					t.Fatalf("CheckConflicts = %#v, want %#v", err, want)
				}
			}
		})
	}
}

// TestAcceptNetworks checks that a refused network blocks nobody, and that the order
// decides who wins.
func TestAcceptNetworks(t *testing.T) {
	reserved := []ReservedRange{{Prefix: netip.MustParsePrefix("10.96.0.0/16"), What: "service subnet 10.96.0.0/16"}}
	old := checkNet("old", Layer3, Primary, []string{"10.10.0.0/16"}, "ns1")
	newer := checkNet("newer", Layer3, Primary, []string{"10.20.0.0/16"}, "ns1")
	overNewer := checkNet("over-newer", Layer2, Secondary, []string{"10.20.0.0/24"}, "ns1")
	inServices := checkNet("in-services", Layer2, Secondary, []string{"10.96.0.0/20"}, "ns2")
	afterRefused := checkNet("after-refused", Layer2, Secondary, []string{"10.96.0.0/24"}, "ns2")
	for _, tc := range []struct {
		name        string
		order       []*Network
		wantRefused map[*Network]bool
	}{
		{name: "the first primary network wins", order: []*Network{old, newer}, wantRefused: map[*Network]bool{newer: true}},
		{name: "so order decides", order: []*Network{newer, old}, wantRefused: map[*Network]bool{old: true}},
		{name: "a refused network blocks nobody: its subnet is free for the next", order: []*Network{old, newer, overNewer},
			wantRefused: map[*Network]bool{newer: true}},
		{name: "each is refused on its own", order: []*Network{inServices, afterRefused}, wantRefused: map[*Network]bool{inServices: true, afterRefused: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused := AcceptNetworks(tc.order, reserved)
			for _, n := range tc.order {
				if _, got := refused[n]; got != tc.wantRefused[n] {
					t.Errorf("network %s refused %t (%v), want %t", n.Name, got, refused[n], tc.wantRefused[n])
				}
			}
		})
	}
}

func TestCompareSeniority(t *testing.T) {
	early, late := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		aHolds, bHolds bool
		aAt, bAt       time.Time
		want           int
	}{
		{"holding an id beats being older", true, false, late, early, -1},
		{"not holding one loses to a younger one that does", false, true, early, late, 1},
		{"then the older one", false, false, early, late, -1},
		{"then the caller's order", true, true, early, early, 0},
	} {
		if got := CompareSeniority(tc.aHolds, tc.aAt, tc.bHolds, tc.bAt); got != tc.want {
			t.Errorf("%s: CompareSeniority = %d, want %d", tc.name, got, tc.want)
		}
	}
}
