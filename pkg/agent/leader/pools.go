package leader

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/alloc"
)

// poolKey names an address pool: a node's subnet of a Layer3 network, or a subnet of a
// Layer2 network.
type poolKey struct {
	network string
	subnet  netip.Prefix
}

// podPools are the pods' address pools and the Layer2 networks' tunnel id pools, and
// what each pod holds in them. A pod is owned as "<namespace>/<name> (uid <uid>)", so a
// pod created again under the same name starts afresh.
type podPools struct {
	addrs     map[poolKey]*alloc.AddressAllocator
	tunnelIDs map[string]*alloc.IDAllocator // by network
	held      map[string]*podHolding        // by owner
}

// podHolding is what one pod holds.
type podHolding struct {
	addrs     map[poolKey]bool
	tunnelIDs map[string]bool // networks
}

// newPodPools returns empty pools.
func newPodPools() *podPools {
	return &podPools{addrs: map[poolKey]*alloc.AddressAllocator{}, tunnelIDs: map[string]*alloc.IDAllocator{}, held: map[string]*podHolding{}}
}

// podOwner names a pod as the owner of its addresses and tunnel ids.
func podOwner(p *corev1.Pod) string {
	return fmt.Sprintf("%s/%s (uid %s)", p.Namespace, p.Name, p.UID)
}

// holding returns what owner holds, recording it as an owner.
func (pp *podPools) holding(owner string) *podHolding {
	h := pp.held[owner]
	if h == nil {
		h = &podHolding{addrs: map[poolKey]bool{}, tunnelIDs: map[string]bool{}}
		pp.held[owner] = h
	}
	return h
}

// pool returns the address pool k, creating it on first use.
func (pp *podPools) pool(k poolKey) (*alloc.AddressAllocator, error) {
	if a := pp.addrs[k]; a != nil {
		return a, nil
	}
	a, err := alloc.NewAddressAllocator(k.subnet, alloc.PodAddressSkip)
	if err != nil {
		return nil, fmt.Errorf("network %q: %w", k.network, err)
	}
	pp.addrs[k] = a
	return a, nil
}

// tunnelPool returns a Layer2 network's tunnel id pool, creating it on first use.
func (pp *podPools) tunnelPool(network string) *alloc.IDAllocator {
	a := pp.tunnelIDs[network]
	if a == nil {
		a = alloc.NewIDAllocator("pod tunnel", minPodTunnelID, maxPodTunnelID)
		pp.tunnelIDs[network] = a
	}
	return a
}

// reserveAddr records a persisted address; it reports whether owner holds it now.
func (pp *podPools) reserveAddr(owner string, k poolKey, addr netip.Addr) bool {
	a, err := pp.pool(k)
	if err != nil {
		return false
	}
	if !reserveOrRelease(func() error { return a.Reserve(owner, addr) }, func() { a.Release(owner) }) {
		return false
	}
	pp.holding(owner).addrs[k] = true
	return true
}

// allocAddr returns owner's address in pool k: the one it holds, else the lowest free.
func (pp *podPools) allocAddr(owner string, k poolKey) (netip.Addr, error) {
	a, err := pp.pool(k)
	if err != nil {
		return netip.Addr{}, err
	}
	addr, err := a.Allocate(owner)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("network %q: %w", k.network, err)
	}
	pp.holding(owner).addrs[k] = true
	return addr, nil
}

// reserveTunnelID records a persisted tunnel id of owner on network.
func (pp *podPools) reserveTunnelID(owner, network string, id int) {
	a := pp.tunnelPool(network)
	if reserveOrRelease(func() error { return a.Reserve(owner, id) }, func() { a.Release(owner) }) {
		pp.holding(owner).tunnelIDs[network] = true
	}
}

// allocTunnelID returns owner's tunnel id on network: the one it holds, else the
// lowest free.
func (pp *podPools) allocTunnelID(owner, network string) (int, error) {
	id, err := pp.tunnelPool(network).Allocate(owner)
	if err != nil {
		return 0, fmt.Errorf("network %q: %w", network, err)
	}
	pp.holding(owner).tunnelIDs[network] = true
	return id, nil
}

// keepOnly releases whatever owner holds outside of h.
func (pp *podPools) keepOnly(owner string, h *podHolding) {
	have := pp.held[owner]
	if have == nil {
		return
	}
	for k := range have.addrs {
		if !h.addrs[k] {
			if a := pp.addrs[k]; a != nil {
				a.Release(owner)
			}
			delete(have.addrs, k)
		}
	}
	for network := range have.tunnelIDs {
		if !h.tunnelIDs[network] {
			if a := pp.tunnelIDs[network]; a != nil {
				a.Release(owner)
			}
			delete(have.tunnelIDs, network)
		}
	}
}

// sweep releases what owners that are gone hold, and drops the pools of networks that
// are gone and address pools that nobody holds anything in.
func (pp *podPools) sweep(owners map[string]bool, networks func(string) bool) {
	for owner := range pp.held {
		if !owners[owner] {
			pp.keepOnly(owner, &podHolding{})
			delete(pp.held, owner)
		}
	}
	for k, a := range pp.addrs {
		if !networks(k.network) || a.Len() == 0 {
			delete(pp.addrs, k)
		}
	}
	for network := range pp.tunnelIDs {
		if !networks(network) {
			delete(pp.tunnelIDs, network)
		}
	}
}
