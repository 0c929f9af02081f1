package alloc

import (
	"net/netip"
	"strconv"
	"testing"
)

const benchOwners = 10000

func benchNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	return names
}

// BenchmarkSubnetAllocate measures one Allocate (and the Release that undoes it) on an
// allocator already holding 10,000 node subnets.
func BenchmarkSubnetAllocate(b *testing.B) {
	for _, c := range []struct {
		name     string
		cidr     netip.Prefix
		hostBits int
	}{
		{"v4-slash8-24", pfx("10.0.0.0/8"), 24},
		{"v6-slash48-64", pfx("fd00:10:244::/48"), 64},
	} {
		b.Run(c.name, func(b *testing.B) {
			a, err := NewSubnetAllocator(c.cidr, c.hostBits)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range benchNames("node-", benchOwners) {
				if _, err := a.Allocate(n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Allocate("new-node"); err != nil {
					b.Fatal(err)
				}
				a.Release("new-node")
			}
		})
	}
}

// BenchmarkSubnetResume measures a new leader's rebuild: Reserve 10,000 persisted node
// subnets, then Allocate one for a new node.
func BenchmarkSubnetResume(b *testing.B) {
	names := benchNames("node-", benchOwners)
	subnets := make([]netip.Prefix, benchOwners)
	for i := range subnets {
		subnets[i] = bigSubnet(pfx("10.0.0.0/8"), 24, i)
	}
	b.ReportAllocs()
	for b.Loop() {
		a, _ := NewSubnetAllocator(pfx("10.0.0.0/8"), 24)
		for i, n := range names {
			if err := a.Reserve(n, subnets[i]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := a.Allocate("new-node"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTunnelKeyAllocate measures one Allocate of a transit router key (and the
// Release that undoes it) with 10,000 owners holding keys.
func BenchmarkTunnelKeyAllocate(b *testing.B) {
	a := NewTunnelKeyAllocator()
	for _, n := range benchNames("cluster_udn_", benchOwners) {
		if _, err := a.Allocate(n, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Allocate("cnc/new", 1); err != nil {
			b.Fatal(err)
		}
		a.Release("cnc/new")
	}
}

// BenchmarkTunnelKeyResume measures a new leader's rebuild: Reserve the keys of 10,000
// owners, then Allocate one for a new owner.
func BenchmarkTunnelKeyResume(b *testing.B) {
	names := benchNames("cluster_udn_", benchOwners)
	b.ReportAllocs()
	for b.Loop() {
		a := NewTunnelKeyAllocator()
		for i, n := range names {
			if err := a.Reserve(n, []int{BaseTransitSwitchTunnelKey + i%LegacyKeyRange, FirstAllocatedTunnelKey + i}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := a.Allocate("cnc/new", 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIDAllocate measures one node id Allocate (and Release) with 4,998 nodes
// holding every id of the range but one.
func BenchmarkIDAllocate(b *testing.B) {
	a := NewIDAllocator("node", MinNodeID, MaxNodeID)
	for _, n := range benchNames("node-", MaxNodeID-MinNodeID) {
		if _, err := a.Allocate(n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Allocate("new-node"); err != nil {
			b.Fatal(err)
		}
		a.Release("new-node")
	}
}
