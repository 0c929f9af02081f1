package cluster

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
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

// TestCheckOVNName checks that a network whose name OVN writes as an accepted
// network's is refused, naming both and the shared OVN name.
func TestCheckOVNName(t *testing.T) {
	colA := checkNet(CUDNNetworkName("col-a"), Layer3, Secondary, []string{"10.10.0.0/16"}, "ns1")
	accepted := map[string]*Network{OVNName(colA.Name): colA}
	for _, tc := range []struct {
		name string
		net  *Network
		want *OVNNameConflictError // nil: accepted
	}{
		{name: `"." where the other has "-"`, net: checkNet(CUDNNetworkName("col.a"), Layer3, Secondary, []string{"10.20.0.0/16"}, "ns2"),
			want: &OVNNameConflictError{Network: "cluster_udn_col.a", Other: "cluster_udn_col-a", OVNName: "cluster_udn_col.a"}},
		{name: "a UserDefinedNetwork of namespace col", net: checkNet(UDNNetworkName("col", "a"), Layer3, Secondary, []string{"10.20.0.0/16"}, "col")},
		{name: "another name", net: checkNet(CUDNNetworkName("col-b"), Layer3, Secondary, []string{"10.20.0.0/16"}, "ns2")},
		{name: "the network itself", net: colA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOVNName(tc.net, accepted)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckOVNName: %v, want none", err)
				}
				return
			}
			var got *OVNNameConflictError
			if !errors.As(err, &got) || *got != *tc.want {
				t.Fatalf("CheckOVNName = %#v, want %#v", err, tc.want)
			}
		})
	}
	// UDNs of namespaces a-b and a.b cannot both exist (namespace names have no "."),
	// but a UDN's own name may have one: a/b-c and a/b.c collide.
	if OVNName(UDNNetworkName("a", "b-c")) != OVNName(UDNNetworkName("a", "b.c")) {
		t.Errorf("OVNName(a_b-c) = %q, OVNName(a_b.c) = %q: want one name", OVNName(UDNNetworkName("a", "b-c")), OVNName(UDNNetworkName("a", "b.c")))
	}
}

// TestCheckSubnets checks each rule of CheckSubnets and CheckSpecialRanges, on the
// reserved ranges of an IPv4-only or a dual-stack cluster: every refused case names the
// subnet and why.
func TestCheckSubnets(t *testing.T) {
	v4Only := []ReservedRange{{Prefix: netip.MustParsePrefix("10.244.0.0/16"), What: "cluster subnet 10.244.0.0/16"}}
	dual := append(slices.Clone(v4Only), ReservedRange{Prefix: netip.MustParsePrefix("fd00:10:244::/48"), What: "cluster subnet fd00:10:244::/48"})
	withHost := func(n *Network, host int) *Network {
		for i := range n.Subnets {
			n.Subnets[i].HostSubnet = host
		}
		return n
	}
	for _, tc := range []struct {
		name     string
		net      *Network
		reserved []ReservedRange
		want     string // a part of the error; "" accepted
	}{
		{name: "a private IPv4 range", net: withHost(checkNet("a", Layer3, Primary, []string{"10.10.0.0/16"}), 24), reserved: v4Only},
		{name: "IPv6 on an IPv4-only cluster", net: checkNet("a", Layer2, Secondary, []string{"10.10.0.0/16", "fd00:10::/64"}), reserved: v4Only,
			want: `network "a" subnet fd00:10::/64 is IPv6, and the cluster is IPv4 only: give only IPv4 subnets, or make the cluster dual-stack first`},
		{name: "IPv6 on a dual-stack cluster", net: checkNet("a", Layer2, Secondary, []string{"10.10.0.0/16", "fd00:10::/64"}), reserved: dual},
		{name: "every address", net: checkNet("a", Layer2, Secondary, []string{"0.0.0.0/0"}), reserved: v4Only,
			want: "subnet 0.0.0.0/0 is every IPv4 address: choose a private range"},
		{name: "every IPv6 address", net: checkNet("a", Layer2, Secondary, []string{"::/0"}), reserved: dual,
			want: "subnet ::/0 is every IPv6 address"},
		{name: "this network", net: checkNet("a", Layer2, Secondary, []string{"0.1.0.0/16"}), reserved: v4Only,
			want: `subnet 0.1.0.0/16 overlaps the "this network" range 0.0.0.0/8, which pods cannot use`},
		{name: "loopback", net: checkNet("a", Layer2, Secondary, []string{"127.0.0.0/16"}), reserved: v4Only,
			want: "subnet 127.0.0.0/16 overlaps the loopback range 127.0.0.0/8, which pods cannot use: choose a private range"},
		{name: "link-local beyond the masquerade subnet", net: checkNet("a", Layer2, Secondary, []string{"169.254.128.0/24"}), reserved: v4Only,
			want: "overlaps the link-local range 169.254.0.0/16"},
		{name: "multicast", net: checkNet("a", Layer2, Secondary, []string{"239.1.0.0/16"}), reserved: v4Only,
			want: "subnet 239.1.0.0/16 overlaps the multicast range 224.0.0.0/4"},
		{name: "a range over multicast", net: checkNet("a", Layer2, Secondary, []string{"192.0.0.0/2"}), reserved: v4Only,
			want: "overlaps the multicast range 224.0.0.0/4"},
		{name: "reserved and broadcast", net: checkNet("a", Layer2, Secondary, []string{"255.255.255.0/24"}), reserved: v4Only,
			want: "overlaps the reserved range 240.0.0.0/4"},
		{name: "IPv6 loopback", net: checkNet("a", Layer2, Secondary, []string{"::/120"}), reserved: dual,
			want: "overlaps the unspecified and loopback addresses ::/127"},
		{name: "IPv6 link-local", net: checkNet("a", Layer2, Secondary, []string{"fe80::/64"}), reserved: dual,
			want: "overlaps the link-local range fe80::/10"},
		{name: "IPv6 multicast", net: checkNet("a", Layer2, Secondary, []string{"ff05::/64"}), reserved: dual,
			want: "overlaps the multicast range ff00::/8"},
		{name: "a Layer2 /29 holds pods", net: checkNet("a", Layer2, Secondary, []string{"10.10.0.0/29"}), reserved: v4Only},
		{name: "a Layer2 /30 does not", net: checkNet("a", Layer2, Secondary, []string{"10.10.0.0/30"}), reserved: v4Only,
			want: "subnet 10.10.0.0/30 leaves no address for pods once the network address, gateway and management port (and for IPv4 the broadcast address) are kept: use a larger subnet: at most /29 for IPv4, /126 for IPv6"},
		{name: "a Layer2 /31", net: checkNet("a", Layer2, Secondary, []string{"10.10.0.0/31"}), reserved: v4Only, want: "leaves no address for pods"},
		{name: "a Layer2 IPv6 /126 holds pods", net: checkNet("a", Layer2, Secondary, []string{"fd00:10::/126"}), reserved: dual},
		{name: "a Layer2 IPv6 /127 does not", net: checkNet("a", Layer2, Secondary, []string{"fd00:10::/127"}), reserved: dual, want: "leaves no address for pods"},
		{name: "a Layer3 block of /29 holds pods", net: withHost(checkNet("a", Layer3, Secondary, []string{"10.10.0.0/16"}), 29), reserved: v4Only},
		{name: "a Layer3 block of /30 does not", net: withHost(checkNet("a", Layer3, Secondary, []string{"10.10.0.0/16"}), 30), reserved: v4Only,
			want: "subnet 10.10.0.0/16 gives each node a /30, which leaves no address for pods"},
		{name: "no reserved ranges: no family is checked", net: checkNet("a", Layer2, Secondary, []string{"fd00:10::/64"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSubnets(tc.net, tc.reserved)
			if err == nil {
				err = CheckSpecialRanges(tc.net)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckSubnets: %v, want none", err)
				}
				return
			}
			var got *UnusableSubnetError
			if !errors.As(err, &got) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckSubnets = %v, want an *UnusableSubnetError containing %q", err, tc.want)
			}
		})
	}
}

// TestAcceptNetworksOVNNames checks that of two networks with one OVN name the senior
// is accepted, and that a refused one leaves its OVN name free.
func TestAcceptNetworksOVNNames(t *testing.T) {
	dash := checkNet(CUDNNetworkName("col-a"), Layer3, Secondary, []string{"10.10.0.0/16"}, "ns1")
	dot := checkNet(CUDNNetworkName("col.a"), Layer2, Secondary, []string{"10.20.0.0/16"}, "ns2")
	badDash := checkNet(CUDNNetworkName("col-a"), Layer2, Secondary, []string{"224.0.0.0/16"}, "ns1")
	for _, tc := range []struct {
		name        string
		order       []*Network
		wantRefused map[*Network]string
	}{
		{name: "the older keeps the name", order: []*Network{dash, dot}, wantRefused: map[*Network]string{dot: "OVN name"}},
		{name: "whichever it is", order: []*Network{dot, dash}, wantRefused: map[*Network]string{dash: "OVN name"}},
		{name: "a refused network holds no name", order: []*Network{badDash, dot}, wantRefused: map[*Network]string{badDash: "multicast"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused := AcceptNetworks(tc.order, nil)
			for _, n := range tc.order {
				err, got := refused[n]
				want, wantRefused := tc.wantRefused[n]
				if got != wantRefused || (got && !strings.Contains(err.Error(), want)) {
					t.Errorf("network %s refused %t (%v), want %t (%q)", n.Name, got, err, wantRefused, want)
				}
			}
		})
	}
}

// TestBuildOVNNameCollision checks that a zone's model never holds two networks with
// one OVN name, even when both hold ids (created before the leader checked OVN names):
// the older stays, the newer is left out with an *OVNNameConflictError, whatever the
// order of the inputs.
func TestBuildOVNNameCollision(t *testing.T) {
	l2 := func(cidr ovnkv1.CIDR) ovnkv1.NetworkSpec {
		return ovnkv1.NetworkSpec{Topology: ovnkv1.NetworkTopologyLayer2, Layer2: layer2(ovnkv1.NetworkRoleSecondary, cidr)}
	}
	at := func(c *ovnkv1.ClusterUserDefinedNetwork, minute int) *ovnkv1.ClusterUserDefinedNetwork {
		c.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC))
		return c
	}
	dot := at(testCUDN("col.a", nil, l2("10.10.0.0/24"), networkAnnotations(3, "[16711683]")), 1)
	dash := at(testCUDN("col-a", nil, l2("10.20.0.0/24"), networkAnnotations(4, "[16711684]")), 2)
	for _, cudns := range [][]*ovnkv1.ClusterUserDefinedNetwork{{dot, dash}, {dash, dot}} {
		st, errs := Build(Inputs{
			DefaultNetwork: DefaultNetworkConfig{Subnets: []Subnet{{CIDR: pfx("10.244.0.0/16"), HostSubnet: 24}}},
			CUDNs:          cudns,
		})
		var names []string
		for _, n := range st.Networks {
			names = append(names, n.Name)
		}
		if want := []string{"cluster_udn_col.a", DefaultNetworkName}; !slices.Equal(names, want) {
			t.Errorf("networks %v, want %v", names, want)
		}
		var conflict *OVNNameConflictError
		if len(errs) != 1 || !errors.As(errs[0], &conflict) || conflict.Network != "cluster_udn_col-a" || conflict.Other != "cluster_udn_col.a" {
			t.Errorf("errors %v, want one OVN name conflict of cluster_udn_col-a with cluster_udn_col.a", errs)
		}
	}
}
