package alloc

import "container/heap"

// indexSet records which indices of [0, size) are taken and by which owner, and finds the
// lowest free one without enumerating the range, so it serves a few thousand node ids as
// well as 2^63 IPv6 host subnets. Invariant: every index below next is taken or sits in
// free, a min-heap of released indices that may hold stale entries (taken again since,
// or pushed twice); stale entries are dropped when they reach the top.
type indexSet struct {
	size  uint64
	owner map[uint64]string
	next  uint64
	free  minHeap
}

func newIndexSet(size uint64) *indexSet {
	return &indexSet{size: size, owner: map[uint64]string{}}
}

// ownerOf returns who holds index i.
func (s *indexSet) ownerOf(i uint64) (string, bool) {
	o, ok := s.owner[i]
	return o, ok
}

// take gives index i, which the caller checked is free and below size, to owner.
func (s *indexSet) take(i uint64, owner string) {
	s.owner[i] = owner
}

// release frees index i, which the caller checked is taken.
func (s *indexSet) release(i uint64) {
	delete(s.owner, i)
	if i < s.next {
		heap.Push(&s.free, i)
	}
}

// lowestFree returns the lowest free index, or false when all size indices are taken.
// It does not take the index. Amortised O(log n): the scan past next only ever moves
// forward over taken indices.
func (s *indexSet) lowestFree() (uint64, bool) {
	for s.free.Len() > 0 {
		if _, taken := s.owner[s.free[0]]; !taken {
			return s.free[0], true
		}
		heap.Pop(&s.free)
	}
	for s.next < s.size {
		if _, taken := s.owner[s.next]; !taken {
			return s.next, true
		}
		s.next++
	}
	return 0, false
}

// minHeap is a container/heap of indices, smallest first.
type minHeap []uint64

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
