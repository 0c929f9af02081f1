package alloc

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Tunnel keys of the datapaths that exist in every zone (transit switches, transit
// routers, connect routers). OVN keeps the top 2^16−1 keys of its 24-bit space
// (16711681 and up) out of northd's numbering for them; OVN-Kubernetes derives 4096 of
// them from network ids and allocates the rest centrally (OKEP-5094, option 3).
const (
	// BaseTransitSwitchTunnelKey is the default network's transit switch key; network
	// id N's transit switch (or Layer2 switch) has key base+N.
	BaseTransitSwitchTunnelKey = 16711683
	// LegacyKeyRange is how many keys follow the base for network ids 0..4095.
	LegacyKeyRange = 4096
	// MaxTunnelKey is the largest datapath tunnel key OVN accepts.
	MaxTunnelKey = 1<<24 - 1
	// FirstAllocatedTunnelKey is the first key TunnelKeyAllocator hands out (16715779).
	FirstAllocatedTunnelKey = BaseTransitSwitchTunnelKey + LegacyKeyRange
	// TunnelKeyPoolSize is how many keys TunnelKeyAllocator can hand out (61437).
	TunnelKeyPoolSize = MaxTunnelKey - FirstAllocatedTunnelKey + 1
)

// TransitSwitchTunnelKey returns the derived tunnel key of network id networkID's
// transit switch (Layer3, Localnet, secondary Layer2) or Layer2 switch (primary Layer2):
// BaseTransitSwitchTunnelKey + id; id 0, the default network, gets the base itself. It
// fails for an id outside 0..4095.
func TransitSwitchTunnelKey(networkID int) (int, error) {
	if networkID < 0 || networkID >= LegacyKeyRange {
		return 0, fmt.Errorf("network id %d is outside 0–%d, the ids with a transit switch tunnel key; use a network id in that range",
			networkID, LegacyKeyRange-1)
	}
	return BaseTransitSwitchTunnelKey + networkID, nil
}

// isLegacyKey reports whether key is derived from a network id rather than allocated.
func isLegacyKey(key int) bool {
	return key >= BaseTransitSwitchTunnelKey && key < FirstAllocatedTunnelKey
}

// TunnelKeyAllocator hands out the tunnel keys FirstAllocatedTunnelKey..MaxTunnelKey to
// named owners (a Layer2 network's transit router, a ClusterNetworkConnect's connect
// router as "cnc/<name>"), lowest free first. The leader rebuilds it after a restart by
// Reserve-ing the persisted k8s.ovn.org/tunnel-keys lists before Allocate-ing any new
// key. It is safe for concurrent use.
type TunnelKeyAllocator struct {
	mu      sync.Mutex
	keys    *indexSet // index = key - FirstAllocatedTunnelKey
	byOwner map[string][]int
}

// NewTunnelKeyAllocator returns an allocator with every key of the pool free.
func NewTunnelKeyAllocator() *TunnelKeyAllocator {
	return &TunnelKeyAllocator{keys: newIndexSet(TunnelKeyPoolSize), byOwner: map[string][]int{}}
}

// Reserve records that owner holds keys, as persisted in its annotation. Keys of the
// legacy range (derived from network ids) are accepted without being recorded, as
// upstream does. Reserving what the owner already holds does nothing. It fails,
// changing nothing, if owner is empty, a key is outside both ranges or repeated, owner
// already holds other keys, or another owner holds one of them (the error names both
// owners).
func (a *TunnelKeyAllocator) Reserve(owner string, keys []int) error {
	if owner == "" {
		return fmt.Errorf("reserve tunnel keys %v: the owner name is empty", keys)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var pool []int
	seen := make(map[int]bool, len(keys))
	for _, k := range keys {
		if isLegacyKey(k) {
			continue
		}
		if k < FirstAllocatedTunnelKey || k > MaxTunnelKey {
			return fmt.Errorf("tunnel key %d of %q is outside %d–%d (derived) and %d–%d (allocated); clear the persisted keys so that new ones are allocated",
				k, owner, BaseTransitSwitchTunnelKey, FirstAllocatedTunnelKey-1, FirstAllocatedTunnelKey, MaxTunnelKey)
		}
		if seen[k] {
			return fmt.Errorf("tunnel key %d appears twice in the keys %v of %q; clear the persisted keys so that new ones are allocated", k, keys, owner)
		}
		if other, ok := a.keys.ownerOf(uint64(k - FirstAllocatedTunnelKey)); ok && other != owner {
			return fmt.Errorf("tunnel key %d is taken by %q, cannot reserve it for %q; clear the persisted keys of one of them so that they are allocated again",
				k, other, owner)
		}
		seen[k] = true
		pool = append(pool, k)
	}
	if have, ok := a.byOwner[owner]; ok {
		if slices.Equal(have, pool) {
			return nil
		}
		return fmt.Errorf("%q already holds tunnel keys %v, cannot also reserve %v; release it first", owner, have, pool)
	}
	if len(pool) == 0 {
		return nil
	}
	for _, k := range pool {
		a.keys.take(uint64(k-FirstAllocatedTunnelKey), owner)
	}
	a.byOwner[owner] = pool
	return nil
}

// Allocate returns n keys for owner: those it already holds, in the order it got them,
// followed by the lowest free keys for the rest. It fails, changing nothing, if owner is
// empty, n is below 1, owner already holds more than n keys, or the pool runs out.
func (a *TunnelKeyAllocator) Allocate(owner string, n int) ([]int, error) {
	if owner == "" {
		return nil, fmt.Errorf("allocate %d tunnel keys: the owner name is empty", n)
	}
	if n < 1 {
		return nil, fmt.Errorf("%q asks for %d tunnel keys; ask for 1 or more", owner, n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	have := a.byOwner[owner]
	if len(have) > n {
		return nil, fmt.Errorf("%q already holds %d tunnel keys %v, more than the %d asked for; release it first", owner, len(have), have, n)
	}
	got := slices.Clone(have)
	for len(got) < n {
		i, ok := a.keys.lowestFree()
		if !ok {
			for _, k := range got[len(have):] {
				a.keys.release(uint64(k - FirstAllocatedTunnelKey))
			}
			return nil, fmt.Errorf("no free tunnel key for %q: the pool %d–%d of %d keys is used up by %s; delete unused Layer2 networks or network connects",
				owner, FirstAllocatedTunnelKey, MaxTunnelKey, TunnelKeyPoolSize, plural(len(a.byOwner), "owner"))
		}
		a.keys.take(i, owner)
		got = append(got, FirstAllocatedTunnelKey+int(i))
	}
	a.byOwner[owner] = got
	return slices.Clone(got), nil
}

// Release frees every key owner holds; they are handed out again, lowest first.
func (a *TunnelKeyAllocator) Release(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range a.byOwner[owner] {
		a.keys.release(uint64(k - FirstAllocatedTunnelKey))
	}
	delete(a.byOwner, owner)
}

// NetworkTunnelKeys returns a network's k8s.ovn.org/tunnel-keys list. topology is
// Layer3, Layer2 or Localnet, in any case (the CRD and NAD spellings). Layer3, Localnet
// and secondary Layer2 networks get [transit switch key], derived from networkID;
// a primary Layer2 network gets [Layer2 switch key, transit router key], the second
// allocated from a for owner (a may be nil for the other topologies). It fails for a
// network id outside 0..4095, an unknown topology, or when allocation fails.
func NetworkTunnelKeys(a *TunnelKeyAllocator, owner string, networkID int, topology string, primary bool) ([]int, error) {
	legacy, err := TransitSwitchTunnelKey(networkID)
	if err != nil {
		return nil, fmt.Errorf("tunnel keys of network %q: %w", owner, err)
	}
	switch strings.ToLower(topology) {
	case "layer3", "localnet":
		return []int{legacy}, nil
	case "layer2":
		if !primary {
			return []int{legacy}, nil
		}
		if a == nil {
			return nil, fmt.Errorf("tunnel keys of primary Layer2 network %q: no tunnel key allocator given for its transit router key", owner)
		}
		router, err := a.Allocate(owner, 1)
		if err != nil {
			return nil, fmt.Errorf("transit router tunnel key of network %q: %w", owner, err)
		}
		return []int{legacy, router[0]}, nil
	default:
		return nil, fmt.Errorf("network %q has topology %q; want Layer3, Layer2 or Localnet", owner, topology)
	}
}
