package alloc

import (
	"fmt"
	"net/netip"
	"testing"
)

// addrStep is one call on an AddressAllocator and what it should return.
type addrStep struct {
	op      string // reserve, allocate, release
	owner   string
	addr    string // reserve: the address; allocate: the wanted address
	wantErr string
}

func TestAddressAllocator(t *testing.T) {
	for _, tc := range []struct {
		name   string
		subnet string
		steps  []addrStep
	}{{
		name: "IPv4 starts after the management port", subnet: "10.244.1.0/24",
		steps: []addrStep{
			{op: "allocate", owner: "ns/a", addr: "10.244.1.3"},
			{op: "allocate", owner: "ns/b", addr: "10.244.1.4"},
			{op: "allocate", owner: "ns/a", addr: "10.244.1.3"}, // idempotent
		},
	}, {
		name: "released addresses come back lowest first", subnet: "10.244.1.0/24",
		steps: []addrStep{
			{op: "allocate", owner: "a", addr: "10.244.1.3"},
			{op: "allocate", owner: "b", addr: "10.244.1.4"},
			{op: "allocate", owner: "c", addr: "10.244.1.5"},
			{op: "release", owner: "c"},
			{op: "release", owner: "a"},
			{op: "allocate", owner: "d", addr: "10.244.1.3"},
			{op: "allocate", owner: "e", addr: "10.244.1.5"},
			{op: "allocate", owner: "f", addr: "10.244.1.6"},
		},
	}, {
		name: "reserved addresses are skipped", subnet: "10.244.1.0/24",
		steps: []addrStep{
			{op: "reserve", owner: "b", addr: "10.244.1.4"},
			{op: "reserve", owner: "b", addr: "10.244.1.4"}, // no-op
			{op: "allocate", owner: "a", addr: "10.244.1.3"},
			{op: "allocate", owner: "c", addr: "10.244.1.5"},
		},
	}, {
		name: "refused reservations", subnet: "10.244.1.0/24",
		steps: []addrStep{
			{op: "reserve", owner: "a", addr: "10.244.1.3"},
			{op: "reserve", owner: "b", addr: "10.244.1.3", wantErr: `address 10.244.1.3 is taken by "a", cannot reserve it for "b"`},
			{op: "reserve", owner: "a", addr: "10.244.1.9", wantErr: `"a" already holds address 10.244.1.3, cannot also reserve 10.244.1.9`},
			{op: "reserve", owner: "c", addr: "10.244.2.3", wantErr: `address 10.244.2.3 of "c" is outside subnet 10.244.1.0/24`},
			{op: "reserve", owner: "c", addr: "10.244.1.1", wantErr: "one of the first 3 addresses of 10.244.1.0/24"},
			{op: "reserve", owner: "c", addr: "10.244.1.255", wantErr: "IPv4 broadcast address"},
			{op: "reserve", owner: "c", addr: "fd00::3", wantErr: "outside subnet"},
			{op: "reserve", owner: "", addr: "10.244.1.7", wantErr: "owner name is empty"},
			{op: "allocate", owner: "c", addr: "10.244.1.4"}, // the failures changed nothing
		},
	}, {
		name: "exhaustion", subnet: "10.244.1.0/29", // .3 to .6
		steps: []addrStep{
			{op: "allocate", owner: "a", addr: "10.244.1.3"},
			{op: "allocate", owner: "b", addr: "10.244.1.4"},
			{op: "allocate", owner: "c", addr: "10.244.1.5"},
			{op: "allocate", owner: "d", addr: "10.244.1.6"},
			{op: "allocate", owner: "e", wantErr: `no free address in 10.244.1.0/29 for "e": all 4 addresses pods may use are taken`},
			{op: "release", owner: "b"},
			{op: "allocate", owner: "e", addr: "10.244.1.4"},
		},
	}, {
		name: "IPv6 has no broadcast address", subnet: "fd00:10:244:1::/126",
		steps: []addrStep{
			{op: "allocate", owner: "a", addr: "fd00:10:244:1::3"},
			{op: "allocate", owner: "b", wantErr: "all 1 addresses"},
		},
	}, {
		name: "IPv6 /64", subnet: "fd00:10:244:1::/64",
		steps: []addrStep{
			{op: "reserve", owner: "far", addr: "fd00:10:244:1:ffff::1", wantErr: "beyond the first 2^62"},
			{op: "reserve", owner: "near", addr: "fd00:10:244:1::1:0"},
			{op: "allocate", owner: "a", addr: "fd00:10:244:1::3"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAddressAllocator(pfx(tc.subnet), PodAddressSkip)
			if err != nil {
				t.Fatal(err)
			}
			if a.Subnet() != pfx(tc.subnet) {
				t.Fatalf("Subnet() = %s, want %s", a.Subnet(), tc.subnet)
			}
			for i, s := range tc.steps {
				t.Run(fmt.Sprintf("%d-%s-%s", i, s.op, s.owner), func(t *testing.T) {
					switch s.op {
					case "reserve":
						checkErr(t, a.Reserve(s.owner, ip(s.addr)), s.wantErr)
					case "allocate":
						got, err := a.Allocate(s.owner)
						checkErr(t, err, s.wantErr)
						if err == nil && got != ip(s.addr) {
							t.Fatalf("Allocate(%q) = %s, want %s", s.owner, got, s.addr)
						}
					case "release":
						a.Release(s.owner)
					default:
						t.Fatalf("unknown op %q", s.op)
					}
				})
			}
		})
	}
}

func TestNewAddressAllocatorErrors(t *testing.T) {
	for _, tc := range []struct {
		subnet  string
		skip    int
		wantErr string
	}{
		{subnet: "10.244.1.0/30", skip: PodAddressSkip, wantErr: "subnet 10.244.1.0/30 has no address left for pods"},
		{subnet: "10.244.1.1/24", skip: PodAddressSkip, wantErr: "has host bits set; use 10.244.1.0/24"},
		{subnet: "10.244.1.0/24", skip: -1, wantErr: "negative number"},
		{subnet: "", wantErr: "no subnet given"},
	} {
		t.Run(tc.subnet, func(t *testing.T) {
			var p netip.Prefix
			if tc.subnet != "" {
				p = pfx(tc.subnet)
			}
			_, err := NewAddressAllocator(p, tc.skip)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestAddressAllocatorLen(t *testing.T) {
	a, err := NewAddressAllocator(pfx("10.0.0.0/24"), PodAddressSkip)
	if err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{"a", "b"} {
		if _, err := a.Allocate(owner); err != nil {
			t.Fatal(err)
		}
	}
	a.Release("a")
	if got := a.Len(); got != 1 {
		t.Fatalf("Len() = %d, want 1", got)
	}
}
