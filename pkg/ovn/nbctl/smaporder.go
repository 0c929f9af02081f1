package nbctl

import (
	"encoding/binary"
	"math/bits"
)

// ovn-nbctl prints a policy's options in the order Open vSwitch's string map (smap)
// iterates them, and breaks ties between NAT rules with equal sort keys by that order
// too. An smap is a hash map whose order follows from the keys' hashes, the order they
// were added in and how the table grew; smapOrder replays all three as lib/hash.c and
// lib/hmap.c of Open vSwitch do.

// smapOrder returns the positions of keys in the order an smap filled with them, one
// after another, iterates its entries. Keys may repeat; each is its own entry.
func smapOrder(keys []string) []int {
	type entry struct {
		pos  int
		hash uint32
	}
	buckets := make([][]entry, 1)
	mask := uint32(0)
	for i, k := range keys {
		e := entry{pos: i, hash: hashString(k)}
		// hmap_insert puts a node at the head of its bucket's list...
		b := e.hash & mask
		buckets[b] = append([]entry{e}, buckets[b]...)
		// ...and grows the table once it holds more than two nodes a bucket.
		n := i + 1
		if uint32(n/2) <= mask {
			continue
		}
		newMask := hmapMask(n)
		if newMask <= mask {
			continue
		}
		// Growing moves nodes bucket by bucket, each to the head of its new list.
		grown := make([][]entry, newMask+1)
		for _, bucket := range buckets {
			for _, e := range bucket {
				nb := e.hash & newMask
				grown[nb] = append([]entry{e}, grown[nb]...)
			}
		}
		buckets, mask = grown, newMask
	}
	order := make([]int, 0, len(keys))
	for _, bucket := range buckets {
		for _, e := range bucket {
			order = append(order, e.pos)
		}
	}
	return order
}

// hmapMask is lib/hmap.c's calc_mask: the bucket mask for a table of n nodes, at least
// four buckets once there is more than one.
func hmapMask(n int) uint32 {
	mask := uint32(n / 2)
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	mask |= (mask & 1) << 1
	return mask
}

// hashString is lib/hash.h's hash_string(s, 0): murmur3-style mixing of s taken as
// little-endian 32-bit words, as on the x86-64 and arm64 builds ovn-nbctl ships in.
func hashString(s string) uint32 {
	hash := uint32(0)
	p := []byte(s)
	for len(p) >= 4 {
		hash = mhashAdd(hash, binary.LittleEndian.Uint32(p))
		p = p[4:]
	}
	if len(p) > 0 {
		var tail [4]byte
		copy(tail[:], p)
		hash = mhashAdd(hash, binary.LittleEndian.Uint32(tail[:]))
	}
	return mhashFinish(hash ^ uint32(len(s)))
}

func mhashAdd(hash, data uint32) uint32 {
	data *= 0xcc9e2d51
	data = bits.RotateLeft32(data, 15)
	data *= 0x1b873593
	hash ^= data
	hash = bits.RotateLeft32(hash, 13)
	return hash*5 + 0xe6546b64
}

func mhashFinish(hash uint32) uint32 {
	hash ^= hash >> 16
	hash *= 0x85ebca6b
	hash ^= hash >> 13
	hash *= 0xc2b2ae35
	hash ^= hash >> 16
	return hash
}
