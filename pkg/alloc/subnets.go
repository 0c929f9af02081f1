package alloc

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
)

// maxSubnetBits caps how many host subnets one cluster CIDR may hold (2^63), so that a
// subnet's index fits a uint64.
const maxSubnetBits = 63

// SubnetAllocator hands out node host subnets (for example the /24s of 10.244.0.0/16,
// or the /64s of fd00:10:244::/48) from one or more cluster CIDRs of one IP family, one
// subnet per owner, lowest free first, trying the CIDRs in the order they were added.
// It never enumerates the candidates, so a /8 with /24s or an IPv6 /32 with /64s costs
// only what is taken. The leader rebuilds it after a restart by Reserve-ing the
// persisted subnets before Allocate-ing any new one. It is safe for concurrent use; a
// dual-stack cluster uses one allocator per family.
type SubnetAllocator struct {
	mu      sync.Mutex
	ranges  []*subnetRange
	byOwner map[string]subnetRef
}

// subnetRange is one cluster CIDR cut into host subnets; index i is the i-th subnet.
type subnetRange struct {
	cidr     netip.Prefix
	hostBits int
	subnets  *indexSet
}

// subnetRef locates an owner's subnet: a range and an index in it.
type subnetRef struct {
	rng int
	idx uint64
}

// NewSubnetAllocator returns an allocator of the /hostBits subnets of cidr. It fails if
// cidr is the zero prefix or has host bits set, if hostBits is shorter than cidr's
// prefix or longer than the family allows (32 or 128), or if cidr would hold more than
// 2^63 subnets. hostBits equal to cidr's length makes a single subnet, cidr itself.
func NewSubnetAllocator(cidr netip.Prefix, hostBits int) (*SubnetAllocator, error) {
	a := &SubnetAllocator{byOwner: map[string]subnetRef{}}
	if err := a.AddCIDR(cidr, hostBits); err != nil {
		return nil, err
	}
	return a, nil
}

// AddCIDR adds another cluster CIDR, tried after those already added. Besides the
// checks of NewSubnetAllocator, it fails if cidr is of another IP family than the
// allocator's or overlaps one of its CIDRs.
func (a *SubnetAllocator) AddCIDR(cidr netip.Prefix, hostBits int) error {
	if !cidr.IsValid() {
		return fmt.Errorf("cluster CIDR is not set; give one such as 10.244.0.0/16")
	}
	if cidr != cidr.Masked() {
		return fmt.Errorf("cluster CIDR %s has host bits set; use %s", cidr, cidr.Masked())
	}
	maxBits := cidr.Addr().BitLen()
	if hostBits < cidr.Bits() || hostBits > maxBits {
		return fmt.Errorf("host subnet length /%d does not fit cluster CIDR %s; use a hostSubnet from /%d to /%d",
			hostBits, cidr, cidr.Bits(), maxBits)
	}
	if hostBits-cidr.Bits() > maxSubnetBits {
		return fmt.Errorf("cluster CIDR %s holds 2^%d /%d subnets, more than 2^%d; use a hostSubnet of /%d or shorter, or a longer cluster CIDR",
			cidr, hostBits-cidr.Bits(), hostBits, maxSubnetBits, cidr.Bits()+maxSubnetBits)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.ranges {
		if r.cidr.Addr().Is4() != cidr.Addr().Is4() {
			return fmt.Errorf("cluster CIDR %s is of another IP family than %s; use one subnet allocator per family", cidr, r.cidr)
		}
		if r.cidr.Overlaps(cidr) {
			return fmt.Errorf("cluster CIDR %s overlaps %s; give cluster CIDRs that do not overlap", cidr, r.cidr)
		}
	}
	a.ranges = append(a.ranges, &subnetRange{
		cidr:     cidr,
		hostBits: hostBits,
		subnets:  newIndexSet(uint64(1) << (hostBits - cidr.Bits())),
	})
	return nil
}

// Reserve records that owner holds p, typically read back from a node annotation.
// Reserving the subnet the owner already holds does nothing. It fails, changing nothing,
// if owner is empty, p is not one of the allocator's host subnets (outside every CIDR,
// of another length, or not aligned to its length), owner already holds another subnet,
// or another owner holds p (the error names both owners).
func (a *SubnetAllocator) Reserve(owner string, p netip.Prefix) error {
	if owner == "" {
		return fmt.Errorf("reserve subnet %s: the owner name is empty", p)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ref, err := a.locate(owner, p)
	if err != nil {
		return err
	}
	if have, ok := a.byOwner[owner]; ok {
		if have == ref {
			return nil
		}
		return fmt.Errorf("%q already holds subnet %s, cannot also reserve %s; release it first", owner, a.subnet(have), p)
	}
	r := a.ranges[ref.rng]
	if other, ok := r.subnets.ownerOf(ref.idx); ok {
		return fmt.Errorf("subnet %s is taken by %q, cannot reserve it for %q; clear the persisted subnet of one of them so that it is allocated again",
			p, other, owner)
	}
	r.subnets.take(ref.idx, owner)
	a.byOwner[owner] = ref
	return nil
}

// locate finds which host subnet p is, or says why it is none.
func (a *SubnetAllocator) locate(owner string, p netip.Prefix) (subnetRef, error) {
	if !p.IsValid() {
		return subnetRef{}, fmt.Errorf("reserve a subnet for %q: no subnet given", owner)
	}
	for i, r := range a.ranges {
		if !r.cidr.Contains(p.Addr()) {
			continue
		}
		if p.Bits() != r.hostBits {
			return subnetRef{}, fmt.Errorf("subnet %s of %q is a /%d, but cluster CIDR %s hands out /%d subnets; clear the persisted subnet so that a new one is allocated",
				p, owner, p.Bits(), r.cidr, r.hostBits)
		}
		if p != p.Masked() {
			return subnetRef{}, fmt.Errorf("subnet %s of %q is not aligned to /%d; use %s", p, owner, r.hostBits, p.Masked())
		}
		shift := p.Addr().BitLen() - r.hostBits
		idx := addrNum(p.Addr()).sub(addrNum(r.cidr.Addr())).rsh(shift).lo
		return subnetRef{rng: i, idx: idx}, nil
	}
	return subnetRef{}, fmt.Errorf("subnet %s of %q is outside the cluster CIDRs %s; clear the persisted subnet so that a new one is allocated",
		p, owner, a.cidrs())
}

// Allocate returns owner's subnet: the one it already holds, else the lowest free one of
// the first CIDR with room. It fails if owner is empty or every subnet is taken; the
// error says how many subnets each CIDR holds.
func (a *SubnetAllocator) Allocate(owner string) (netip.Prefix, error) {
	if owner == "" {
		return netip.Prefix{}, fmt.Errorf("allocate a subnet: the owner name is empty")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ref, ok := a.byOwner[owner]; ok {
		return a.subnet(ref), nil
	}
	for i, r := range a.ranges {
		idx, ok := r.subnets.lowestFree()
		if !ok {
			continue
		}
		r.subnets.take(idx, owner)
		ref := subnetRef{rng: i, idx: idx}
		a.byOwner[owner] = ref
		return a.subnet(ref), nil
	}
	return netip.Prefix{}, fmt.Errorf("no free subnet for %q: %s, all in use; use a larger cluster CIDR or a longer hostSubnet",
		owner, a.capacity())
}

// Release frees owner's subnet, if it holds one; it is handed out again, lowest first.
func (a *SubnetAllocator) Release(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ref, ok := a.byOwner[owner]; ok {
		a.ranges[ref.rng].subnets.release(ref.idx)
		delete(a.byOwner, owner)
	}
}

// subnet returns the prefix ref names.
func (a *SubnetAllocator) subnet(ref subnetRef) netip.Prefix {
	r := a.ranges[ref.rng]
	shift := r.cidr.Addr().BitLen() - r.hostBits
	n := addrNum(r.cidr.Addr()).add(uint128{lo: ref.idx}.lsh(shift))
	return netip.PrefixFrom(n.addr(r.cidr.Addr().Is4()), r.hostBits)
}

// cidrs lists the cluster CIDRs for errors.
func (a *SubnetAllocator) cidrs() string {
	s := make([]string, len(a.ranges))
	for i, r := range a.ranges {
		s[i] = r.cidr.String()
	}
	return strings.Join(s, ", ")
}

// capacity says how many subnets each cluster CIDR holds, for errors.
func (a *SubnetAllocator) capacity() string {
	s := make([]string, len(a.ranges))
	for i, r := range a.ranges {
		s[i] = fmt.Sprintf("cluster CIDR %s holds %s", r.cidr, plural(r.subnets.size, fmt.Sprintf("/%d subnet", r.hostBits)))
	}
	return strings.Join(s, "; ")
}

// plural returns "1 thing" or "n things".
func plural[N int | uint64](n N, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
