package alloc

import (
	"fmt"
	"net/netip"
	"sync"
)

// PodAddressSkip is how many addresses at the start of a pod subnet are never given to
// pods: the network address (.0), the gateway (.1) and the management port (.2).
const PodAddressSkip = 3

// maxAddressPool caps how many addresses of one subnet an AddressAllocator hands out
// (2^62), so that an IPv6 /64 fits an index; no subnet has that many pods.
const maxAddressPool = uint64(1) << 62

// AddressAllocator hands out single addresses of one subnet to named owners, lowest free
// first: the pods' addresses in a node's subnet of a Layer3 network, or in the subnet of
// a Layer2 network. The first skip addresses of the subnet are never handed out
// (PodAddressSkip keeps .0, the gateway and the management port), nor is the last
// address of an IPv4 subnet (its broadcast address). The leader rebuilds it after a
// restart by Reserve-ing the persisted addresses before Allocate-ing any new one. It is
// safe for concurrent use.
type AddressAllocator struct {
	mu     sync.Mutex
	subnet netip.Prefix
	skip   uint64
	addrs  *indexSet // index = offset in the subnet - skip
	// byOwner maps an owner to its index.
	byOwner map[string]uint64
}

// NewAddressAllocator returns an allocator of subnet's addresses from offset skip on. It
// fails if subnet is the zero prefix or has host bits set, skip is negative, or no
// address is left to hand out (an IPv4 /30 with skip 3, for example).
func NewAddressAllocator(subnet netip.Prefix, skip int) (*AddressAllocator, error) {
	if !subnet.IsValid() {
		return nil, fmt.Errorf("address pool: no subnet given; give one such as 10.244.1.0/24")
	}
	if subnet != subnet.Masked() {
		return nil, fmt.Errorf("address pool: subnet %s has host bits set; use %s", subnet, subnet.Masked())
	}
	if skip < 0 {
		return nil, fmt.Errorf("address pool %s: negative number of skipped addresses %d", subnet, skip)
	}
	hostBits := subnet.Addr().BitLen() - subnet.Bits()
	size := maxAddressPool
	if hostBits < 62 {
		size = uint64(1) << hostBits
		if subnet.Addr().Is4() {
			size-- // the broadcast address
		}
	}
	if size <= uint64(skip) {
		return nil, fmt.Errorf("subnet %s has no address left for pods once its first %d are kept for the network, gateway and management port; use a larger subnet",
			subnet, skip)
	}
	return &AddressAllocator{
		subnet:  subnet,
		skip:    uint64(skip),
		addrs:   newIndexSet(size - uint64(skip)),
		byOwner: map[string]uint64{},
	}, nil
}

// Subnet returns the subnet the allocator hands out addresses of.
func (a *AddressAllocator) Subnet() netip.Prefix { return a.subnet }

// Reserve records that owner holds addr, typically read back from a pod annotation.
// Reserving the address the owner already holds does nothing. It fails, changing
// nothing, if owner is empty, addr is outside the subnet or one of the addresses never
// handed out, owner already holds another address, or another owner holds addr (the
// error names both owners).
func (a *AddressAllocator) Reserve(owner string, addr netip.Addr) error {
	if owner == "" {
		return fmt.Errorf("reserve address %s: the owner name is empty", addr)
	}
	i, err := a.index(owner, addr)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if have, ok := a.byOwner[owner]; ok {
		if have == i {
			return nil
		}
		return fmt.Errorf("%q already holds address %s, cannot also reserve %s; release it first", owner, a.addr(have), addr)
	}
	if other, ok := a.addrs.ownerOf(i); ok {
		return fmt.Errorf("address %s is taken by %q, cannot reserve it for %q; clear the persisted address of one of them so that it is allocated again",
			addr, other, owner)
	}
	a.addrs.take(i, owner)
	a.byOwner[owner] = i
	return nil
}

// index returns addr's index, or says why it is not one the allocator hands out.
func (a *AddressAllocator) index(owner string, addr netip.Addr) (uint64, error) {
	if !addr.IsValid() || addr.Zone() != "" || !a.subnet.Contains(addr) {
		return 0, fmt.Errorf("address %s of %q is outside subnet %s; clear the persisted address so that a new one is allocated", addr, owner, a.subnet)
	}
	off := addrNum(addr).sub(addrNum(a.subnet.Addr()))
	switch {
	case off.hi == 0 && off.lo < a.skip:
		return 0, fmt.Errorf("address %s of %q is one of the first %d addresses of %s, which are kept for the network, gateway and management port; clear the persisted address so that a new one is allocated",
			addr, owner, a.skip, a.subnet)
	case off.hi != 0 || off.lo-a.skip >= a.addrs.size:
		return 0, fmt.Errorf("address %s of %q is not one the pool of %s hands out (the IPv4 broadcast address, or beyond the first 2^62); clear the persisted address so that a new one is allocated",
			addr, owner, a.subnet)
	}
	return off.lo - a.skip, nil
}

// addr returns the address of index i.
func (a *AddressAllocator) addr(i uint64) netip.Addr {
	return addrNum(a.subnet.Addr()).add(uint128{lo: a.skip + i}).addr(a.subnet.Addr().Is4())
}

// Allocate returns owner's address: the one it already holds, else the lowest free one.
// It fails if owner is empty or every address is taken.
func (a *AddressAllocator) Allocate(owner string) (netip.Addr, error) {
	if owner == "" {
		return netip.Addr{}, fmt.Errorf("allocate an address of %s: the owner name is empty", a.subnet)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if i, ok := a.byOwner[owner]; ok {
		return a.addr(i), nil
	}
	i, ok := a.addrs.lowestFree()
	if !ok {
		return netip.Addr{}, fmt.Errorf("no free address in %s for %q: all %d addresses pods may use are taken; use a larger subnet (or hostSubnet)",
			a.subnet, owner, a.addrs.size)
	}
	a.addrs.take(i, owner)
	a.byOwner[owner] = i
	return a.addr(i), nil
}

// Release frees owner's address, if it holds one; it is handed out again, lowest first.
func (a *AddressAllocator) Release(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i, ok := a.byOwner[owner]; ok {
		a.addrs.release(i)
		delete(a.byOwner, owner)
	}
}

// Len returns how many owners hold an address.
func (a *AddressAllocator) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byOwner)
}
