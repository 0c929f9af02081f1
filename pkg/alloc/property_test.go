package alloc

import (
	"math/big"
	mrand "math/rand"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"
	"testing/quick"
)

// Seeded random operations checked against simple models: every run is deterministic,
// and a failure names its seed.

const seeds = 20

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x0a58)) }

// model is a reference allocator over values 0..size-1: a map and a linear scan.
type model struct {
	size    int
	byOwner map[string]int
	byValue map[int]string
}

func newModel(size int) *model {
	return &model{size: size, byOwner: map[string]int{}, byValue: map[int]string{}}
}

func (m *model) lowestFree() (int, bool) {
	for v := range m.size {
		if _, ok := m.byValue[v]; !ok {
			return v, true
		}
	}
	return 0, false
}

// reserve mirrors Reserve's rules: fine if owner holds v already, refused if owner holds
// another value or another owner holds v.
func (m *model) reserve(owner string, v int) bool {
	if have, ok := m.byOwner[owner]; ok {
		return have == v
	}
	if _, ok := m.byValue[v]; ok {
		return false
	}
	m.byOwner[owner], m.byValue[v] = v, owner
	return true
}

func (m *model) allocate(owner string) (int, bool) {
	if v, ok := m.byOwner[owner]; ok {
		return v, true
	}
	v, ok := m.lowestFree()
	if ok {
		m.byOwner[owner], m.byValue[v] = v, owner
	}
	return v, ok
}

func (m *model) release(owner string) {
	if v, ok := m.byOwner[owner]; ok {
		delete(m.byValue, v)
		delete(m.byOwner, owner)
	}
}

// allocator is what the three allocators have in common once their values are mapped
// to model values 0..size-1.
type allocator struct {
	reserve  func(owner string, v int) error
	allocate func(owner string) (int, error)
	release  func(owner string)
}

// checkAgainstModel runs random reserve/allocate/release calls on a and on a model of
// the same size, and fails at the first difference.
func checkAgainstModel(t *testing.T, size int, newAlloc func() allocator) {
	for seed := range uint64(seeds) {
		r := newRand(seed)
		a, m := newAlloc(), newModel(size)
		owners := make([]string, size+size/2) // more owners than values
		for i := range owners {
			owners[i] = "owner-" + strconv.Itoa(i)
		}
		for step := range 40 * size {
			owner := owners[r.IntN(len(owners))]
			switch op := r.IntN(10); {
			case op < 2:
				v := r.IntN(size)
				err, ok := a.reserve(owner, v), m.reserve(owner, v)
				if (err == nil) != ok {
					t.Fatalf("seed %d step %d: Reserve(%s, %d) = %v, model says ok=%v", seed, step, owner, v, err, ok)
				}
			case op < 7:
				got, err := a.allocate(owner)
				want, ok := m.allocate(owner)
				if (err == nil) != ok || (ok && got != want) {
					t.Fatalf("seed %d step %d: Allocate(%s) = %d, %v; model %d, %v", seed, step, owner, got, err, want, ok)
				}
			default:
				a.release(owner)
				m.release(owner)
			}
			if len(m.byValue) > size {
				t.Fatalf("seed %d: %d values held out of %d", seed, len(m.byValue), size)
			}
		}
	}
}

func TestIDAllocatorMatchesModel(t *testing.T) {
	const first, size = MinNodeID, 37
	checkAgainstModel(t, size, func() allocator {
		a := NewIDAllocator("node", first, first+size-1)
		return allocator{
			reserve:  func(o string, v int) error { return a.Reserve(o, first+v) },
			allocate: func(o string) (int, error) { id, err := a.Allocate(o); return id - first, err },
			release:  a.Release,
		}
	})
}

func TestTunnelKeyAllocatorMatchesModel(t *testing.T) {
	// The model covers the first keys of the pool; the rest are taken up front by one
	// owner, so that exhaustion happens within a few dozen calls.
	const size = 29
	checkAgainstModel(t, size, func() allocator {
		a := NewTunnelKeyAllocator()
		rest := make([]int, 0, TunnelKeyPoolSize-size)
		for k := FirstAllocatedTunnelKey + size; k <= MaxTunnelKey; k++ {
			rest = append(rest, k)
		}
		if err := a.Reserve("\x00rest", rest); err != nil {
			t.Fatal(err)
		}
		return allocator{
			reserve: func(o string, v int) error { return a.Reserve(o, []int{FirstAllocatedTunnelKey + v}) },
			allocate: func(o string) (int, error) {
				keys, err := a.Allocate(o, 1)
				if err != nil {
					return 0, err
				}
				return keys[0] - FirstAllocatedTunnelKey, nil
			},
			release: a.Release,
		}
	})
}

func TestSubnetAllocatorMatchesModel(t *testing.T) {
	// Two CIDRs of different host subnet sizes, cut into subnets with math/big,
	// independent of the allocator's own arithmetic.
	type cidr struct {
		p        netip.Prefix
		hostBits int
	}
	for _, cidrs := range [][]cidr{
		{{pfx("10.244.0.0/20"), 24}, {pfx("10.250.0.0/24"), 26}},
		{{pfx("fd00:10:244::/60"), 64}, {pfx("fd00:10:250::/126"), 128}},
	} {
		var all []netip.Prefix
		for _, c := range cidrs {
			for i := range 1 << (c.hostBits - c.p.Bits()) {
				all = append(all, bigSubnet(c.p, c.hostBits, i))
			}
		}
		index := map[netip.Prefix]int{}
		for i, p := range all {
			index[p] = i
		}
		checkAgainstModel(t, len(all), func() allocator {
			a, err := NewSubnetAllocator(cidrs[0].p, cidrs[0].hostBits)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cidrs[1:] {
				if err := a.AddCIDR(c.p, c.hostBits); err != nil {
					t.Fatal(err)
				}
			}
			return allocator{
				reserve: func(o string, v int) error { return a.Reserve(o, all[v]) },
				allocate: func(o string) (int, error) {
					p, err := a.Allocate(o)
					if err != nil {
						return 0, err
					}
					i, ok := index[p]
					if !ok {
						t.Fatalf("Allocate returned %s, not a host subnet of %v", p, cidrs)
					}
					return i, nil
				},
				release: a.Release,
			}
		})
	}
}

// bigSubnet returns the i-th /hostBits subnet of cidr.
func bigSubnet(cidr netip.Prefix, hostBits, i int) netip.Prefix {
	n := new(big.Int).SetBytes(cidr.Addr().AsSlice())
	n.Add(n, new(big.Int).Lsh(big.NewInt(int64(i)), uint(cidr.Addr().BitLen()-hostBits)))
	a, _ := netip.AddrFromSlice(n.FillBytes(make([]byte, cidr.Addr().BitLen()/8)))
	return netip.PrefixFrom(a, hostBits)
}

// TestSubnetsNeverOverlap allocates and releases at random in a large CIDR and checks
// that the subnets held never overlap and stay aligned inside the CIDR.
func TestSubnetsNeverOverlap(t *testing.T) {
	for _, c := range []struct {
		cidr     string
		hostBits int
	}{{"10.0.0.0/8", 24}, {"fd00:10:244::/48", 64}, {"10.128.0.0/14", 23}} {
		for seed := range uint64(seeds) {
			r := newRand(seed)
			cidr := pfx(c.cidr)
			a, err := NewSubnetAllocator(cidr, c.hostBits)
			checkErr(t, err, "")
			held := map[string]netip.Prefix{}
			for range 2000 {
				owner := "node-" + strconv.Itoa(r.IntN(500))
				if r.IntN(4) == 0 {
					a.Release(owner)
					delete(held, owner)
					continue
				}
				p, err := a.Allocate(owner)
				checkErr(t, err, "")
				if p.Bits() != c.hostBits || p != p.Masked() || !cidr.Contains(p.Addr()) {
					t.Fatalf("seed %d: %s is not an aligned /%d of %s", seed, p, c.hostBits, cidr)
				}
				held[owner] = p
			}
			seen := map[netip.Prefix]string{}
			for o, p := range held {
				if other, ok := seen[p]; ok {
					t.Fatalf("seed %d: %s held by %s and %s", seed, p, o, other)
				}
				seen[p] = o
			}
			// Equal-size aligned prefixes overlap only when equal, which the map checked.
			// Lowest first packs them: never more than 500 owners, so no index ≥ 500.
			shift := cidr.Addr().BitLen() - c.hostBits
			for _, p := range held {
				if i := addrNum(p.Addr()).sub(addrNum(cidr.Addr())).rsh(shift); i.hi != 0 || i.lo >= 500 {
					t.Fatalf("seed %d: %s is subnet #%d of %s with at most 500 owners", seed, p, i.lo, cidr)
				}
			}
		}
	}
}

// TestUint128MatchesBig checks the address arithmetic against math/big.
func TestUint128MatchesBig(t *testing.T) {
	toBig := func(u uint128) *big.Int {
		b := new(big.Int).SetUint64(u.hi)
		return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(u.lo))
	}
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
	check := func(ahi, alo, bhi, blo uint64, n uint8) bool {
		a, b, s := uint128{ahi, alo}, uint128{bhi, blo}, int(n%128)
		x, y := toBig(a), toBig(b)
		sum := new(big.Int).Add(x, y)
		diff := new(big.Int).Sub(x, y)
		return toBig(a.add(b)).Cmp(sum.And(sum, mask)) == 0 &&
			toBig(a.sub(b)).Cmp(diff.And(diff, mask)) == 0 &&
			toBig(a.lsh(s)).Cmp(new(big.Int).And(new(big.Int).Lsh(x, uint(s)), mask)) == 0 &&
			toBig(a.rsh(s)).Cmp(new(big.Int).Rsh(x, uint(s))) == 0 &&
			a.less(b) == (x.Cmp(y) < 0)
	}
	cfg := &quick.Config{MaxCount: 5000, Rand: mrand.New(mrand.NewSource(1))}
	if err := quick.Check(check, cfg); err != nil {
		t.Fatal(err)
	}
	// Round trip through addresses of both families.
	for _, s := range []string{"0.0.0.0", "255.255.255.255", "10.244.3.0", "::", "fd97::8", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"} {
		a := ip(s)
		if got := addrNum(a).addr(a.Is4()); got != a {
			t.Fatalf("round trip of %s gives %s", a, got)
		}
	}
}

// bigOffsetAddr is offsetAddr computed with math/big, as it once was: the reference
// the uint128 version must match, result and error alike.
func bigOffsetAddr(p netip.Prefix, n uint64) (netip.Addr, bool) {
	p = p.Masked()
	base := new(big.Int).SetBytes(p.Addr().AsSlice())
	addr := new(big.Int).Add(base, new(big.Int).SetUint64(n))
	bits := p.Addr().BitLen()
	size := new(big.Int).Lsh(big.NewInt(1), uint(bits-p.Bits()))
	if new(big.Int).Sub(addr, base).Cmp(size) >= 0 {
		return netip.Addr{}, false
	}
	a, _ := netip.AddrFromSlice(addr.FillBytes(make([]byte, bits/8)))
	return a, true
}

// TestOffsetAddrMatchesBig checks offsetAddr against math/big over random prefixes of
// every length of both families, with offsets near each prefix's size.
func TestOffsetAddrMatchesBig(t *testing.T) {
	r := newRand(7)
	for i := 0; i < 20000; i++ {
		var p netip.Prefix
		if r.IntN(2) == 0 {
			p = netip.PrefixFrom(addrNum(netip.IPv4Unspecified()).add(uint128{lo: r.Uint64() >> 32}).addr(true), r.IntN(33))
		} else {
			p = netip.PrefixFrom(uint128{r.Uint64(), r.Uint64()}.addr(false), r.IntN(129))
		}
		n := r.Uint64()
		if hostBits := p.Addr().BitLen() - p.Bits(); hostBits < 64 && r.IntN(4) > 0 {
			n = uint64(1)<<hostBits - 2 + uint64(r.IntN(4)) // around the last address
		}
		got, err := offsetAddr(p, n)
		want, ok := bigOffsetAddr(p, n)
		if ok != (err == nil) || got != want {
			t.Fatalf("offsetAddr(%s, %d) = %s, %v; math/big gives %s, %v", p, n, got, err, want, ok)
		}
	}
}
