package alloc

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
)

// BlockSpace is an address space cut into blocks of one prefix length, e.g. the /24s
// of 192.168.0.0/16.
type BlockSpace struct {
	CIDR netip.Prefix
	// Bits is the prefix length of each block.
	Bits int
}

// BlockAllocator hands out blocks of one or two address spaces (at most one per IP
// family) to named owners, lowest free first. An owner gets the block of the same index
// in every space, e.g. the third /24 of 192.168.0.0/16 together with the third /120 of
// fd00::/112, so the spaces must leave their blocks the same number of host bits; the
// allocator has as many blocks as its smallest space. It is what a
// ClusterNetworkConnect's connectSubnets give its networks. It never enumerates the
// blocks, so an IPv6 space with 2^60 of them costs only what is taken. The leader
// rebuilds it after a restart by Reserve-ing the persisted blocks before Allocate-ing
// any new one. It is safe for concurrent use.
type BlockAllocator struct {
	mu      sync.Mutex
	spaces  []BlockSpace
	blocks  *indexSet
	byOwner map[string]uint64
}

// NewBlockAllocator returns an allocator of the blocks of spaces. It fails unless there
// are one or two spaces of distinct IP families, each a masked CIDR whose block length
// is longer than its own and at most the family's length, leaving every block the same
// number of host bits.
func NewBlockAllocator(spaces ...BlockSpace) (*BlockAllocator, error) {
	if len(spaces) == 0 || len(spaces) > 2 {
		return nil, fmt.Errorf("%d address spaces given for blocks; give one, or one per IP family", len(spaces))
	}
	var size uint64
	for i, s := range spaces {
		if !s.CIDR.IsValid() || s.CIDR != s.CIDR.Masked() {
			return nil, fmt.Errorf("block space %s is not a network address in CIDR notation such as 192.168.0.0/16", s.CIDR)
		}
		if s.Bits <= s.CIDR.Bits() || s.Bits > s.CIDR.Addr().BitLen() {
			return nil, fmt.Errorf("blocks of /%d do not fit %s; use a block length from /%d to /%d",
				s.Bits, s.CIDR, s.CIDR.Bits()+1, s.CIDR.Addr().BitLen())
		}
		n := uint64(1) << min(s.Bits-s.CIDR.Bits(), maxSubnetBits)
		if i == 0 {
			size = n
			continue
		}
		first := spaces[0]
		if first.CIDR.Addr().Is4() == s.CIDR.Addr().Is4() {
			return nil, fmt.Errorf("block spaces %s and %s are of one IP family; give at most one per family", first.CIDR, s.CIDR)
		}
		if hostBits(first) != hostBits(s) {
			return nil, fmt.Errorf("blocks of /%d in %s have %d host bits but blocks of /%d in %s have %d; give both families blocks of as many addresses",
				first.Bits, first.CIDR, hostBits(first), s.Bits, s.CIDR, hostBits(s))
		}
		size = min(size, n)
	}
	return &BlockAllocator{spaces: spaces, blocks: newIndexSet(size), byOwner: map[string]uint64{}}, nil
}

// hostBits is how many host bits each block of s has.
func hostBits(s BlockSpace) int { return s.CIDR.Addr().BitLen() - s.Bits }

// Size is how many blocks the allocator has (per space).
func (a *BlockAllocator) Size() uint64 { return a.blocks.size }

// Reserve records that owner holds blocks, typically read back from an annotation: at
// most one per space, all of the same index; a space it leaves out gets the block of
// that index too. Reserving what the owner already holds does nothing. It fails,
// changing nothing, if owner is empty, blocks is empty, a block is not one of a space's
// (outside every space, of another length, or not aligned), two blocks have different
// indices, owner holds another index, or another owner holds this one (the error names
// both owners).
func (a *BlockAllocator) Reserve(owner string, blocks []netip.Prefix) error {
	if owner == "" {
		return fmt.Errorf("reserve blocks %v: the owner name is empty", blocks)
	}
	if len(blocks) == 0 {
		return fmt.Errorf("reserve blocks for %q: no block given", owner)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	idx, err := a.index(owner, blocks)
	if err != nil {
		return err
	}
	if have, ok := a.byOwner[owner]; ok {
		if have == idx {
			return nil
		}
		return fmt.Errorf("%q already holds blocks %s, cannot also reserve %s; release it first", owner, prefixList(a.blocksAt(have)), prefixList(blocks))
	}
	if other, ok := a.blocks.ownerOf(idx); ok {
		return fmt.Errorf("blocks %s are taken by %q, cannot reserve them for %q; clear the persisted blocks of one of them so that they are allocated again",
			prefixList(a.blocksAt(idx)), other, owner)
	}
	a.blocks.take(idx, owner)
	a.byOwner[owner] = idx
	return nil
}

// index finds the common index of blocks, or says why there is none.
func (a *BlockAllocator) index(owner string, blocks []netip.Prefix) (uint64, error) {
	var idx uint64
	for i, b := range blocks {
		s, ok := a.spaceOf(b)
		switch {
		case !ok:
			return 0, fmt.Errorf("block %s of %q is outside %s; clear the persisted blocks so that new ones are allocated", b, owner, a.spaceList())
		case b.Bits() != s.Bits:
			return 0, fmt.Errorf("block %s of %q is a /%d, but %s hands out /%d blocks; clear the persisted blocks so that new ones are allocated",
				b, owner, b.Bits(), s.CIDR, s.Bits)
		case b != b.Masked():
			return 0, fmt.Errorf("block %s of %q is not aligned to /%d; use %s", b, owner, s.Bits, b.Masked())
		}
		n := addrNum(b.Addr()).sub(addrNum(s.CIDR.Addr())).rsh(hostBits(s))
		j := n.lo
		if n.hi != 0 || j >= a.blocks.size {
			return 0, fmt.Errorf("block %s of %q is beyond the first %s of %s, which are all that are handed out; clear the persisted blocks so that new ones are allocated",
				b, owner, plural(a.blocks.size, "block"), s.CIDR)
		}
		if i > 0 && j != idx {
			return 0, fmt.Errorf("blocks %s of %q are not of the same index in their spaces %s; clear the persisted blocks so that new ones are allocated",
				prefixList(blocks), owner, a.spaceList())
		}
		idx = j
	}
	return idx, nil
}

// spaceOf returns the space holding b's address.
func (a *BlockAllocator) spaceOf(b netip.Prefix) (BlockSpace, bool) {
	for _, s := range a.spaces {
		if b.IsValid() && s.CIDR.Contains(b.Addr()) {
			return s, true
		}
	}
	return BlockSpace{}, false
}

// Allocate returns owner's blocks, one per space in the order the spaces were given:
// those of the index it holds, else of the lowest free index. It fails if owner is empty
// or every block is taken.
func (a *BlockAllocator) Allocate(owner string) ([]netip.Prefix, error) {
	if owner == "" {
		return nil, fmt.Errorf("allocate blocks: the owner name is empty")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if idx, ok := a.byOwner[owner]; ok {
		return a.blocksAt(idx), nil
	}
	idx, ok := a.blocks.lowestFree()
	if !ok {
		return nil, fmt.Errorf("no free block for %q: %s, all in use; use larger spaces or longer blocks",
			owner, plural(a.blocks.size, "block"))
	}
	a.blocks.take(idx, owner)
	a.byOwner[owner] = idx
	return a.blocksAt(idx), nil
}

// Release frees owner's blocks, if it holds any; they are handed out again, lowest first.
func (a *BlockAllocator) Release(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if idx, ok := a.byOwner[owner]; ok {
		a.blocks.release(idx)
		delete(a.byOwner, owner)
	}
}

// Get returns owner's blocks, one per space, and whether it holds any.
func (a *BlockAllocator) Get(owner string) ([]netip.Prefix, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	idx, ok := a.byOwner[owner]
	if !ok {
		return nil, false
	}
	return a.blocksAt(idx), true
}

// Owners returns the owners holding blocks, in no particular order.
func (a *BlockAllocator) Owners() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.byOwner))
	for o := range a.byOwner {
		out = append(out, o)
	}
	return out
}

// blocksAt returns the blocks of index idx, one per space.
func (a *BlockAllocator) blocksAt(idx uint64) []netip.Prefix {
	out := make([]netip.Prefix, len(a.spaces))
	for i, s := range a.spaces {
		n := addrNum(s.CIDR.Addr()).add(uint128{lo: idx}.lsh(hostBits(s)))
		out[i] = netip.PrefixFrom(n.addr(s.CIDR.Addr().Is4()), s.Bits)
	}
	return out
}

// spaceList names the spaces for errors.
func (a *BlockAllocator) spaceList() string {
	s := make([]string, len(a.spaces))
	for i, sp := range a.spaces {
		s[i] = fmt.Sprintf("the /%d blocks of %s", sp.Bits, sp.CIDR)
	}
	return strings.Join(s, " and ")
}

// prefixList formats prefixes for errors: "a and b".
func prefixList(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " and ")
}
