package alloc

import (
	"fmt"
	"sync"
)

// Id ranges of OVN-Kubernetes, for NewIDAllocator.
const (
	// MinNodeID is the first id given to a node: 0 is never used, and 1 names the
	// cluster router's .1 in the join and transit subnets.
	MinNodeID = 2
	// MaxNodeID is OVN-Kubernetes' last node id (its maxNodeIDs, Kubernetes' largest
	// supported cluster); well below 32767, the last id whose transit peer pair fits the
	// default 100.88.0.0/16.
	MaxNodeID = 5000
	// MinNetworkID is the first id given to a user-defined network; 0 is the default
	// network's.
	MinNetworkID = 1
	// MaxNetworkID is the last network id: ids 0..4095 each have a transit switch tunnel
	// key in the legacy range (see TransitSwitchTunnelKey).
	MaxNetworkID = LegacyKeyRange - 1
)

// IDAllocator hands out small integer ids (node ids, network ids) from [min, max] to
// named owners, lowest free first. The leader rebuilds it after a restart by Reserve-ing
// the persisted ids before Allocate-ing any new one. It is safe for concurrent use.
type IDAllocator struct {
	mu          sync.Mutex
	what        string
	first, last int
	ids         *indexSet // index = id - first
	byOwner     map[string]int
}

// NewIDAllocator returns an allocator of the ids first..last (inclusive); what names the
// kind of id in errors ("node", "network"). It panics if the range is empty or negative,
// which is a programming error: callers pass constants such as MinNodeID and MaxNodeID.
func NewIDAllocator(what string, first, last int) *IDAllocator {
	if first < 0 || last < first {
		panic(fmt.Sprintf("alloc: %s id range %d–%d is empty or negative", what, first, last))
	}
	return &IDAllocator{
		what:    what,
		first:   first,
		last:    last,
		ids:     newIndexSet(uint64(last-first) + 1),
		byOwner: map[string]int{},
	}
}

// Reserve records that owner holds id, typically one read back from an annotation.
// Reserving the id the owner already holds does nothing. It fails, changing nothing, if
// owner is empty, id is outside the range, owner already holds another id, or another
// owner holds id (the error names both owners).
func (a *IDAllocator) Reserve(owner string, id int) error {
	if owner == "" {
		return fmt.Errorf("reserve %s id %d: the owner name is empty", a.what, id)
	}
	if id < a.first || id > a.last {
		return fmt.Errorf("%s id %d of %q is outside %d–%d; clear the persisted id so that a new one is allocated",
			a.what, id, owner, a.first, a.last)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if have, ok := a.byOwner[owner]; ok {
		if have == id {
			return nil
		}
		return fmt.Errorf("%q already holds %s id %d, cannot also reserve %d; release it first", owner, a.what, have, id)
	}
	i := uint64(id - a.first)
	if other, ok := a.ids.ownerOf(i); ok {
		return fmt.Errorf("%s id %d is taken by %q, cannot reserve it for %q; clear the persisted id of one of them so that it is allocated again",
			a.what, id, other, owner)
	}
	a.ids.take(i, owner)
	a.byOwner[owner] = id
	return nil
}

// Allocate returns owner's id: the one it already holds, else the lowest free id. It
// fails if owner is empty or every id of the range is taken.
func (a *IDAllocator) Allocate(owner string) (int, error) {
	if owner == "" {
		return 0, fmt.Errorf("allocate a %s id: the owner name is empty", a.what)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := a.byOwner[owner]; ok {
		return id, nil
	}
	i, ok := a.ids.lowestFree()
	if !ok {
		return 0, fmt.Errorf("no free %s id for %q: all %d ids of %d–%d are in use; release the ids of deleted owners",
			a.what, owner, a.ids.size, a.first, a.last)
	}
	a.ids.take(i, owner)
	id := a.first + int(i)
	a.byOwner[owner] = id
	return id, nil
}

// Release frees owner's id, if it holds one; the id is handed out again, lowest first.
func (a *IDAllocator) Release(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := a.byOwner[owner]; ok {
		a.ids.release(uint64(id - a.first))
		delete(a.byOwner, owner)
	}
}

// Get returns owner's id and whether it holds one.
func (a *IDAllocator) Get(owner string) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.byOwner[owner]
	return id, ok
}
