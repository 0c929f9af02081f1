package match

import "math/bits"

// u128 is an unsigned 128-bit integer, wide enough for every field the language knows
// (the widest, ip6.src and ip6.dst, have 128 bits). Every constant and every field value
// is one, so a comparison is the same few instructions whatever the field, and it is a
// comparable value type, so evaluating never allocates.
type u128 struct{ hi, lo uint64 }

func (a u128) and(b u128) u128 { return u128{a.hi & b.hi, a.lo & b.lo} }

func (a u128) isZero() bool { return a.hi == 0 && a.lo == 0 }

// cmp compares a and b as unsigned integers: -1, 0 or +1.
func (a u128) cmp(b u128) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

// bitLen is the number of bits needed to hold a: 0 for 0, 128 when the top bit is set.
func (a u128) bitLen() int {
	if a.hi != 0 {
		return 64 + bits.Len64(a.hi)
	}
	return bits.Len64(a.lo)
}

// shl4 shifts a left by one hex digit and adds d, reporting false if a bit falls off.
func (a u128) shl4(d uint64) (u128, bool) {
	if a.hi>>60 != 0 {
		return a, false
	}
	return u128{a.hi<<4 | a.lo>>60, a.lo<<4 | d}, true
}

// ones returns a value whose low n bits are set (0 <= n <= 128).
func ones(n int) u128 {
	switch {
	case n <= 0:
		return u128{}
	case n < 64:
		return u128{0, 1<<uint(n) - 1}
	case n == 64:
		return u128{0, ^uint64(0)}
	case n < 128:
		return u128{1<<uint(n-64) - 1, ^uint64(0)}
	}
	return u128{^uint64(0), ^uint64(0)}
}

// prefixMask returns the mask of a plen-bit prefix of a width-bit address: its top plen
// bits set, counting down from bit width-1.
func prefixMask(plen, width int) u128 {
	all, low := ones(width), ones(width-plen)
	return u128{all.hi &^ low.hi, all.lo &^ low.lo}
}

// shl shifts a left by n bits (0 <= n < 128); bits shifted past bit 127 are lost.
func (a u128) shl(n int) u128 {
	switch {
	case n == 0:
		return a
	case n >= 64:
		return u128{a.lo << uint(n-64), 0}
	}
	return u128{a.hi<<uint(n) | a.lo>>uint(64-n), a.lo << uint(n)}
}
