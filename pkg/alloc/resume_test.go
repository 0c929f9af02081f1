package alloc

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A new leader rebuilds each allocator from the persisted annotations: Reserve every
// persisted value (in whatever order the informer lists them), then Allocate for the
// owners without one (in sorted order). These tests check that the result does not
// depend on the listing order, that persisted values survive, and that newcomers get
// exactly the lowest free values.

// history runs random allocations and releases on a fresh allocator and returns what
// the owners hold at the end: the "persisted" state.
func history[V any](seed uint64, allocate func(string) (V, error), release func(string)) map[string]V {
	r := newRand(seed)
	held := map[string]V{}
	for range 600 {
		owner := "old-" + strconv.Itoa(r.IntN(300))
		if r.IntN(3) == 0 {
			release(owner)
			delete(held, owner)
			continue
		}
		v, err := allocate(owner)
		if err != nil {
			panic(err)
		}
		held[owner] = v
	}
	return held
}

// resume rebuilds from persisted, reserving in a shuffled order, then allocates for the
// newcomers in sorted order, and returns everyone's values.
func resume[V any](t *testing.T, seed uint64, persisted map[string]V, newcomers []string,
	reserve func(string, V) error, allocate func(string) (V, error)) map[string]V {
	t.Helper()
	owners := slices.Sorted(maps.Keys(persisted))
	newRand(seed).Shuffle(len(owners), func(i, j int) { owners[i], owners[j] = owners[j], owners[i] })
	for _, o := range owners {
		if err := reserve(o, persisted[o]); err != nil {
			t.Fatalf("reserve %s: %v", o, err)
		}
	}
	got := maps.Clone(persisted)
	for _, o := range newcomers {
		v, err := allocate(o)
		if err != nil {
			t.Fatalf("allocate %s: %v", o, err)
		}
		got[o] = v
	}
	return got
}

var newcomers = []string{"new-a", "new-b", "new-c", "new-d", "new-e", "new-f", "new-g"}

func TestResumeIDs(t *testing.T) {
	for seed := range uint64(seeds) {
		old := NewIDAllocator("node", MinNodeID, MaxNodeID)
		persisted := history(seed, old.Allocate, old.Release)
		var first map[string]int
		for order := range uint64(6) {
			a := NewIDAllocator("node", MinNodeID, MaxNodeID)
			got := resume(t, order, persisted, newcomers, a.Reserve, a.Allocate)
			checkResumed(t, seed, order, got, first, persisted)
			first = got
			// The newcomers got the lowest ids nobody held, in order.
			want := lowestFree(MinNodeID, len(newcomers), slices.Collect(maps.Values(persisted)))
			for i, o := range newcomers {
				if got[o] != want[i] {
					t.Fatalf("seed %d: %s got %d, want %d", seed, o, got[o], want[i])
				}
			}
		}
	}
}

func TestResumeSubnets(t *testing.T) {
	for _, c := range []struct {
		cidr     string
		hostBits int
	}{{"10.244.0.0/16", 24}, {"fd00:10:244::/48", 64}} {
		for seed := range uint64(seeds) {
			newAlloc := func() *SubnetAllocator {
				a, err := NewSubnetAllocator(pfx(c.cidr), c.hostBits)
				checkErr(t, err, "")
				return a
			}
			old := newAlloc()
			persisted := history(seed, old.Allocate, old.Release)
			var first map[string]netip.Prefix
			for order := range uint64(6) {
				a := newAlloc()
				got := resume(t, order, persisted, newcomers, a.Reserve, a.Allocate)
				checkResumed(t, seed, order, got, first, persisted)
				first = got
				// Allocating the newcomers in another order hands out the same subnets.
				b := newAlloc()
				shuffled := slices.Clone(newcomers)
				newRand(order).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				other := resume(t, order, persisted, shuffled, b.Reserve, b.Allocate)
				if !sameValues(got, other) {
					t.Fatalf("seed %d: newcomers in another order got other subnets", seed)
				}
			}
		}
	}
}

func TestResumeTunnelKeys(t *testing.T) {
	// Owners hold one or two keys; the annotations carry a legacy key first, as a
	// primary Layer2 network's k8s.ovn.org/tunnel-keys does.
	for seed := range uint64(seeds) {
		old := NewTunnelKeyAllocator()
		n := func(owner string) int { return 1 + len(owner)%2 }
		persisted := history(seed, func(o string) ([]int, error) {
			keys, err := old.Allocate(o, n(o))
			return append([]int{BaseTransitSwitchTunnelKey + len(o)}, keys...), err
		}, old.Release)
		var first map[string][]int
		for order := range uint64(6) {
			a := NewTunnelKeyAllocator()
			got := resume(t, order, persisted, newcomers, a.Reserve, func(o string) ([]int, error) {
				keys, err := a.Allocate(o, n(o))
				return append([]int{BaseTransitSwitchTunnelKey + len(o)}, keys...), err
			})
			checkResumed(t, seed, order, got, first, persisted)
			first = got
			// Every persisted owner gets its keys back from Allocate.
			for o, keys := range persisted {
				again, err := a.Allocate(o, n(o))
				if err != nil || !slices.Equal(again, keys[1:]) {
					t.Fatalf("seed %d: %s got %v, %v after resume; persisted %v", seed, o, again, err, keys)
				}
			}
		}
	}
}

// checkResumed fails if got differs from the previous order's result or lost a
// persisted value, or if two owners share a value.
func checkResumed[V any](t *testing.T, seed, order uint64, got, previous, persisted map[string]V) {
	t.Helper()
	for o, v := range persisted {
		if fmt.Sprint(got[o]) != fmt.Sprint(v) {
			t.Fatalf("seed %d order %d: %s holds %v, persisted %v", seed, order, o, got[o], v)
		}
	}
	if previous != nil && fmt.Sprint(got) != fmt.Sprint(previous) {
		t.Fatalf("seed %d: order %d gives\n%v\nbut the first order gave\n%v", seed, order, got, previous)
	}
	if !distinct(got) {
		t.Fatalf("seed %d order %d: two owners share a value: %v", seed, order, got)
	}
}

// distinct reports whether no value (or, for slices, no element) appears twice.
func distinct[V any](m map[string]V) bool {
	seen := map[string]bool{}
	for _, v := range m {
		var parts []string
		if keys, ok := any(v).([]int); ok {
			for _, k := range keys[1:] { // the legacy key is per network, checked elsewhere
				parts = append(parts, strconv.Itoa(k))
			}
		} else {
			parts = []string{fmt.Sprint(v)}
		}
		for _, p := range parts {
			if seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return true
}

func sameValues[V comparable](a, b map[string]V) bool {
	count := map[V]int{}
	for _, v := range a {
		count[v]++
	}
	for _, v := range b {
		count[v]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// lowestFree returns the n lowest ids from first that are not in taken.
func lowestFree(first, n int, taken []int) []int {
	var out []int
	for id := first; len(out) < n; id++ {
		if !slices.Contains(taken, id) {
			out = append(out, id)
		}
	}
	return out
}

// TestTunnelKeysUniqueAcrossNetworksAndConnects creates and deletes networks of every
// topology and connects at random, and checks that no key is ever held twice.
func TestTunnelKeysUniqueAcrossNetworksAndConnects(t *testing.T) {
	topologies := []string{"Layer3", "Layer2", "Localnet"}
	for seed := range uint64(seeds) {
		r := newRand(seed)
		ids := NewIDAllocator("network", MinNetworkID, MaxNetworkID)
		keys := NewTunnelKeyAllocator()
		held := map[string][]int{}
		for range 1500 {
			name := "net-" + strconv.Itoa(r.IntN(400))
			if r.IntN(3) == 0 {
				name = "cnc/" + strconv.Itoa(r.IntN(100))
			}
			if r.IntN(4) == 0 {
				keys.Release(name)
				ids.Release(name)
				delete(held, name)
				continue
			}
			var got []int
			var err error
			if strings.HasPrefix(name, "cnc/") {
				got, err = keys.Allocate(name, 1)
			} else {
				id, idErr := ids.Allocate(name)
				checkErr(t, idErr, "")
				topology := topologies[len(name)%3] // fixed per network: specs are immutable
				got, err = NetworkTunnelKeys(keys, name, id, topology, len(name)%2 == 0)
			}
			checkErr(t, err, "")
			held[name] = got
		}
		seen := map[int]string{}
		for name, ks := range held {
			for _, k := range ks {
				if other, ok := seen[k]; ok {
					t.Fatalf("seed %d: key %d held by %s and %s", seed, k, name, other)
				}
				if k < BaseTransitSwitchTunnelKey || k > MaxTunnelKey {
					t.Fatalf("seed %d: key %d of %s is outside the transit key ranges", seed, k, name)
				}
				if strings.HasPrefix(name, "cnc/") && isLegacyKey(k) {
					t.Fatalf("seed %d: connect %s got the legacy key %d", seed, name, k)
				}
				seen[k] = name
			}
		}
	}
}

// TestDerivationsAgreeAcrossZones computes every derivation sequentially, then again from
// several goroutines, each in another order, as zones would: all must agree.
func TestDerivationsAgreeAcrossZones(t *testing.T) {
	var calls []func() string
	show := func(v ...any) string { return fmt.Sprint(v...) }
	for id := range 400 {
		calls = append(calls,
			func() string { r, g, err := TransitPeers(pfx("100.88.0.0/16"), id); return show(r, g, err) },
			func() string { r, g, err := TransitPeers(pfx("fd97::/64"), id); return show(r, g, err) },
			func() string { p, err := TransitSwitchIP(pfx("100.88.0.0/16"), id); return show(p, err) },
			func() string { p, err := GatewayRouterJoinIP(pfx("100.65.0.0/16"), id); return show(p, err) },
			func() string { p, err := GatewayRouterJoinIP(pfx("fd99::/64"), id); return show(p, err) },
			func() string {
				p, _ := GatewayRouterJoinIP(pfx("fd99::/64"), id)
				mac := MACFromIP(p.Addr())
				lla, err := LinkLocalFromMAC(mac)
				return show(mac, lla, err)
			},
			func() string { g, m, err := MasqueradeIPs(pfx("169.254.0.0/17"), id); return show(g, m, err) },
			func() string { k, err := TransitSwitchTunnelKey(id); return show(k, err) },
			func() string { k, err := NetworkTunnelKeys(nil, "n", id, "Layer3", true); return show(k, err) },
			func() string {
				avoid := []netip.Prefix{bigSubnet(pfx("100.64.0.0/10"), 16, id%64), bigSubnet(pfx("fd97::/48"), 64, id)}
				p, changed, err := TransitSubnets(defaultTransit, append(avoid, pfx("100.88.0.0/16")))
				return show(p, changed, err)
			},
		)
	}
	want := make([]string, len(calls))
	for i, c := range calls {
		want[i] = c()
	}
	const zones = 6
	got := make([][]string, zones)
	var wg sync.WaitGroup
	for z := range zones {
		got[z] = make([]string, len(calls))
		order := newRand(uint64(z)).Perm(len(calls))
		wg.Go(func() {
			for _, i := range order {
				got[z][i] = calls[i]()
			}
		})
	}
	wg.Wait()
	for z := range zones {
		if !slices.Equal(got[z], want) {
			t.Fatalf("zone %d derived other values", z)
		}
	}
}
