package alloc

import (
	"net/netip"
	"slices"
	"strconv"
	"testing"
)

func TestNewSubnetAllocatorValidates(t *testing.T) {
	for _, tc := range []struct {
		cidr     netip.Prefix
		hostBits int
		wantErr  string
	}{
		{cidr: pfx("10.244.0.0/16"), hostBits: 24},
		{cidr: pfx("fd00:10:244::/48"), hostBits: 64},
		{cidr: pfx("10.244.0.0/24"), hostBits: 24}, // exactly one subnet
		{cidr: pfx("10.0.0.0/8"), hostBits: 32},
		{cidr: pfx("::/1"), hostBits: 64}, // 2^63 subnets, the most we track
		{cidr: netip.Prefix{}, hostBits: 24, wantErr: "cluster CIDR is not set; give one such as 10.244.0.0/16"},
		{cidr: pfx("10.244.1.0/16"), hostBits: 24, wantErr: "cluster CIDR 10.244.1.0/16 has host bits set; use 10.244.0.0/16"},
		{cidr: pfx("10.244.0.0/16"), hostBits: 8, wantErr: "host subnet length /8 does not fit cluster CIDR 10.244.0.0/16; use a hostSubnet from /16 to /32"},
		{cidr: pfx("10.244.0.0/16"), hostBits: 33, wantErr: "/33 does not fit|from /16 to /32"},
		{cidr: pfx("fd00:10:244::/48"), hostBits: 129, wantErr: "/129 does not fit|from /48 to /128"},
		{cidr: pfx("fd00:10:244::/48"), hostBits: 47, wantErr: "/47 does not fit"},
		{cidr: pfx("::/0"), hostBits: 64, wantErr: "cluster CIDR ::/0 holds 2^64 /64 subnets, more than 2^63; use a hostSubnet of /63 or shorter, or a longer cluster CIDR"},
	} {
		t.Run(tc.cidr.String()+"/"+strconv.Itoa(tc.hostBits), func(t *testing.T) {
			a, err := NewSubnetAllocator(tc.cidr, tc.hostBits)
			checkErr(t, err, tc.wantErr)
			if err == nil && a == nil {
				t.Fatal("nil allocator without an error")
			}
		})
	}
}

func TestSubnetAllocatorAddCIDR(t *testing.T) {
	a, err := NewSubnetAllocator(pfx("10.244.0.0/23"), 24)
	checkErr(t, err, "")
	checkErr(t, a.AddCIDR(pfx("fd00::/48"), 64), "cluster CIDR fd00::/48 is of another IP family than 10.244.0.0/23; use one subnet allocator per family")
	checkErr(t, a.AddCIDR(pfx("10.244.1.0/24"), 26), "cluster CIDR 10.244.1.0/24 overlaps 10.244.0.0/23")
	checkErr(t, a.AddCIDR(pfx("10.0.0.0/8"), 24), "overlaps 10.244.0.0/23")
	checkErr(t, a.AddCIDR(pfx("10.245.0.0/24"), 23), "/23 does not fit")
	// A second CIDR with host subnets of another size, used once the first is full.
	checkErr(t, a.AddCIDR(pfx("10.245.0.0/24"), 25), "")
	var got []string
	for i := range 5 {
		p, err := a.Allocate("node" + strconv.Itoa(i))
		if err != nil {
			got = append(got, err.Error())
			break
		}
		got = append(got, p.String())
	}
	want := []string{"10.244.0.0/24", "10.244.1.0/24", "10.245.0.0/25", "10.245.0.128/25",
		`no free subnet for "node4": cluster CIDR 10.244.0.0/23 holds 2 /24 subnets; cluster CIDR 10.245.0.0/24 holds 2 /25 subnets, all in use; use a larger cluster CIDR or a longer hostSubnet`}
	if !slices.Equal(got, want) {
		t.Fatalf("allocations:\n got %q\nwant %q", got, want)
	}
	// A released subnet of the first CIDR comes back before the second CIDR's.
	a.Release("node1")
	a.Release("node2")
	if p, err := a.Allocate("x"); err != nil || p.String() != "10.244.1.0/24" {
		t.Fatalf("Allocate(x) = %s, %v; want 10.244.1.0/24", p, err)
	}
}

// subnetStep is one call on a SubnetAllocator and what it should return.
type subnetStep struct {
	op      string // reserve, allocate, release
	owner   string
	subnet  string // reserve: the subnet; allocate: the wanted subnet
	wantErr string
}

func TestSubnetAllocator(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cidr     string
		hostBits int
		steps    []subnetStep
	}{{
		name: "IPv4 lowest first", cidr: "10.244.0.0/16", hostBits: 24,
		steps: []subnetStep{
			{op: "allocate", owner: "node-a", subnet: "10.244.0.0/24"},
			{op: "allocate", owner: "node-b", subnet: "10.244.1.0/24"},
			{op: "allocate", owner: "node-a", subnet: "10.244.0.0/24"},
		},
	}, {
		name: "IPv6 lowest first", cidr: "fd00:10:244::/48", hostBits: 64,
		steps: []subnetStep{
			{op: "allocate", owner: "node-a", subnet: "fd00:10:244::/64"},
			{op: "allocate", owner: "node-b", subnet: "fd00:10:244:1::/64"},
			{op: "reserve", owner: "node-c", subnet: "fd00:10:244:ffff::/64"},
			{op: "reserve", owner: "node-d", subnet: "fd00:10:244:2::/64"},
			{op: "allocate", owner: "node-e", subnet: "fd00:10:244:3::/64"},
		},
	}, {
		name: "a /24 with /24 host subnets holds exactly one", cidr: "10.244.0.0/24", hostBits: 24,
		steps: []subnetStep{
			{op: "allocate", owner: "node-a", subnet: "10.244.0.0/24"},
			{op: "allocate", owner: "node-b", wantErr: `no free subnet for "node-b": cluster CIDR 10.244.0.0/24 holds 1 /24 subnet, all in use; use a larger cluster CIDR or a longer hostSubnet`},
			{op: "release", owner: "node-a"},
			{op: "allocate", owner: "node-b", subnet: "10.244.0.0/24"},
		},
	}, {
		name: "exhaustion of a /22 with /24s", cidr: "10.244.0.0/22", hostBits: 24,
		steps: []subnetStep{
			{op: "reserve", owner: "a", subnet: "10.244.2.0/24"},
			{op: "allocate", owner: "b", subnet: "10.244.0.0/24"},
			{op: "allocate", owner: "c", subnet: "10.244.1.0/24"},
			{op: "allocate", owner: "d", subnet: "10.244.3.0/24"},
			{op: "allocate", owner: "e", wantErr: "cluster CIDR 10.244.0.0/22 holds 4 /24 subnets, all in use"},
		},
	}, {
		name: "/32 and /128 host subnets", cidr: "10.0.0.0/31", hostBits: 32,
		steps: []subnetStep{
			{op: "allocate", owner: "a", subnet: "10.0.0.0/32"},
			{op: "allocate", owner: "b", subnet: "10.0.0.1/32"},
			{op: "allocate", owner: "c", wantErr: "holds 2 /32 subnets"},
		},
	}, {
		name: "reservations must be host subnets of the CIDR", cidr: "10.244.0.0/16", hostBits: 24,
		steps: []subnetStep{
			{op: "reserve", owner: "a", subnet: "10.244.1.5/24", wantErr: `subnet 10.244.1.5/24 of "a" is not aligned to /24; use 10.244.1.0/24`},
			{op: "reserve", owner: "a", subnet: "10.244.1.128/25", wantErr: `subnet 10.244.1.128/25 of "a" is a /25, but cluster CIDR 10.244.0.0/16 hands out /24 subnets`},
			{op: "reserve", owner: "a", subnet: "10.244.0.0/15", wantErr: "is a /15"},
			{op: "reserve", owner: "a", subnet: "10.245.0.0/24", wantErr: `subnet 10.245.0.0/24 of "a" is outside the cluster CIDRs 10.244.0.0/16; clear the persisted subnet`},
			{op: "reserve", owner: "a", subnet: "fd00::/64", wantErr: "outside the cluster CIDRs"},
			{op: "reserve", owner: "a", subnet: "", wantErr: `reserve a subnet for "a": no subnet given`},
			{op: "reserve", owner: "", subnet: "10.244.1.0/24", wantErr: "owner name is empty"},
			{op: "allocate", owner: "a", subnet: "10.244.0.0/24"}, // the failures changed nothing
		},
	}, {
		name: "reserve is idempotent and names both owners on conflict", cidr: "10.244.0.0/16", hostBits: 24,
		steps: []subnetStep{
			{op: "reserve", owner: "node-a", subnet: "10.244.7.0/24"},
			{op: "reserve", owner: "node-a", subnet: "10.244.7.0/24"},
			{op: "reserve", owner: "node-a", subnet: "10.244.8.0/24", wantErr: `"node-a" already holds subnet 10.244.7.0/24, cannot also reserve 10.244.8.0/24; release it first`},
			{op: "reserve", owner: "node-b", subnet: "10.244.7.0/24", wantErr: `subnet 10.244.7.0/24 is taken by "node-a", cannot reserve it for "node-b"`},
			{op: "allocate", owner: "node-a", subnet: "10.244.7.0/24"},
			{op: "allocate", owner: "", wantErr: "owner name is empty"},
		},
	}, {
		name: "release hands the lowest subnet out again", cidr: "10.244.0.0/16", hostBits: 24,
		steps: []subnetStep{
			{op: "allocate", owner: "a", subnet: "10.244.0.0/24"},
			{op: "allocate", owner: "b", subnet: "10.244.1.0/24"},
			{op: "allocate", owner: "c", subnet: "10.244.2.0/24"},
			{op: "release", owner: "c"},
			{op: "release", owner: "a"},
			{op: "release", owner: "nobody"},
			{op: "allocate", owner: "d", subnet: "10.244.0.0/24"},
			{op: "allocate", owner: "e", subnet: "10.244.2.0/24"},
			{op: "allocate", owner: "f", subnet: "10.244.3.0/24"},
		},
	}, {
		// 2^32 candidates: only what is taken costs anything.
		name: "IPv6 /32 with /64s", cidr: "fd00::/32", hostBits: 64,
		steps: []subnetStep{
			{op: "reserve", owner: "last", subnet: "fd00:0:ffff:ffff::/64"},
			{op: "allocate", owner: "first", subnet: "fd00::/64"},
		},
	}, {
		name: "2^63 subnets", cidr: "::/1", hostBits: 64,
		steps: []subnetStep{
			{op: "reserve", owner: "last", subnet: "7fff:ffff:ffff:ffff::/64"},
			{op: "reserve", owner: "last-but-one", subnet: "7fff:ffff:ffff:fffe::/64"},
			{op: "allocate", owner: "first", subnet: "::/64"},
		},
	}, {
		name: "IPv4 top of the address space", cidr: "255.255.255.0/24", hostBits: 26,
		steps: []subnetStep{
			{op: "reserve", owner: "last", subnet: "255.255.255.192/26"},
			{op: "allocate", owner: "a", subnet: "255.255.255.0/26"},
			{op: "allocate", owner: "b", subnet: "255.255.255.64/26"},
			{op: "allocate", owner: "c", subnet: "255.255.255.128/26"},
			{op: "allocate", owner: "d", wantErr: "holds 4 /26 subnets"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewSubnetAllocator(pfx(tc.cidr), tc.hostBits)
			checkErr(t, err, "")
			for i, s := range tc.steps {
				switch s.op {
				case "reserve":
					var p netip.Prefix
					if s.subnet != "" {
						p = pfx(s.subnet)
					}
					checkErr(t, a.Reserve(s.owner, p), s.wantErr)
				case "allocate":
					got, err := a.Allocate(s.owner)
					checkErr(t, err, s.wantErr)
					if err == nil && got.String() != s.subnet {
						t.Fatalf("step %d: Allocate(%q) = %s, want %s", i, s.owner, got, s.subnet)
					}
				case "release":
					a.Release(s.owner)
				default:
					t.Fatalf("step %d: unknown op %q", i, s.op)
				}
			}
		})
	}
}

// TestSubnetAllocatorSlash8 fills a /8 with /24s: exactly 65,536 subnets, in order.
func TestSubnetAllocatorSlash8(t *testing.T) {
	a, err := NewSubnetAllocator(pfx("10.0.0.0/8"), 24)
	checkErr(t, err, "")
	for i := range 1 << 16 {
		p, err := a.Allocate("n" + strconv.Itoa(i))
		if err != nil {
			t.Fatalf("Allocate #%d: %v", i, err)
		}
		want := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
		if p != want {
			t.Fatalf("Allocate #%d = %s, want %s", i, p, want)
		}
	}
	_, err = a.Allocate("one-too-many")
	checkErr(t, err, "cluster CIDR 10.0.0.0/8 holds 65536 /24 subnets, all in use")
}
