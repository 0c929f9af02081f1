package alloc

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
)

// uint128 is an address as a number, for prefix arithmetic without math/big. IPv4
// addresses use the low 32 bits.
type uint128 struct{ hi, lo uint64 }

func addrNum(a netip.Addr) uint128 {
	if a.Is4() {
		b := a.As4()
		return uint128{lo: uint64(binary.BigEndian.Uint32(b[:]))}
	}
	b := a.As16()
	return uint128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// addr turns u back into an address of the family given by is4.
func (u uint128) addr(is4 bool) netip.Addr {
	if is4 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(u.lo))
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], u.hi)
	binary.BigEndian.PutUint64(b[8:], u.lo)
	return netip.AddrFrom16(b)
}

func (u uint128) add(v uint128) uint128 {
	lo, carry := bits.Add64(u.lo, v.lo, 0)
	hi, _ := bits.Add64(u.hi, v.hi, carry)
	return uint128{hi, lo}
}

func (u uint128) sub(v uint128) uint128 {
	lo, borrow := bits.Sub64(u.lo, v.lo, 0)
	hi, _ := bits.Sub64(u.hi, v.hi, borrow)
	return uint128{hi, lo}
}

func (u uint128) less(v uint128) bool {
	return u.hi < v.hi || (u.hi == v.hi && u.lo < v.lo)
}

// lsh shifts left by n (0 ≤ n < 128); Go shifts of 64 or more give 0.
func (u uint128) lsh(n int) uint128 {
	if n >= 64 {
		return uint128{hi: u.lo << (n - 64)}
	}
	return uint128{hi: u.hi<<n | u.lo>>(64-n), lo: u.lo << n}
}

// rsh shifts right by n (0 ≤ n < 128).
func (u uint128) rsh(n int) uint128 {
	if n >= 64 {
		return uint128{lo: u.hi >> (n - 64)}
	}
	return uint128{hi: u.hi >> n, lo: u.lo>>n | u.hi<<(64-n)}
}

// prefixSize is the number of addresses in p, for p no shorter than /1.
func prefixSize(p netip.Prefix) uint128 {
	return uint128{lo: 1}.lsh(p.Addr().BitLen() - p.Bits())
}
