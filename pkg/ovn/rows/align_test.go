package rows

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAlignAccountsForEveryElement edits lists at random (insertions, removals,
// replacements, moves, runs longer than the look-ahead) and requires Align to account
// for every element once: what it does not report is paired with an equal element,
// what only one list holds is reported, and an element reported added though last holds
// it is reported removed too (it moved).
func TestAlignAccountsForEveryElement(t *testing.T) {
	for seed := range uint64(300) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		last := make([]int, rnd.IntN(200))
		for i := range last {
			last[i] = i
		}
		next := slices.Clone(last)
		fresh := 1000
		for range rnd.IntN(6) {
			at := 0
			if len(next) > 0 {
				at = rnd.IntN(len(next))
			}
			switch n := 1 + rnd.IntN(2*lookahead); rnd.IntN(4) {
			case 0: // a run inserted
				for range n {
					next = slices.Insert(next, at, fresh)
					fresh++
				}
			case 1: // a run removed
				next = slices.Delete(next, at, min(at+n, len(next)))
			case 2: // one replaced
				if len(next) > 0 {
					next[at] = fresh
					fresh++
				}
			case 3: // one moved
				if len(next) > 1 {
					v := next[at]
					next = slices.Delete(next, at, at+1)
					next = slices.Insert(next, rnd.IntN(len(next)), v)
				}
			}
		}
		var added, removed []int
		Align(next, last, func(v int) { added = append(added, v) }, func(v int) { removed = append(removed, v) })
		for _, v := range next {
			if !slices.Contains(last, v) && !slices.Contains(added, v) {
				t.Fatalf("seed %d: %d is new and not reported added (added %v)", seed, v, added)
			}
		}
		for _, v := range last {
			if !slices.Contains(next, v) && !slices.Contains(removed, v) {
				t.Fatalf("seed %d: %d went away and is not reported removed (removed %v)", seed, v, removed)
			}
		}
		for _, v := range added {
			if slices.Contains(last, v) && !slices.Contains(removed, v) {
				t.Fatalf("seed %d: %d reported added, not removed, though last holds it", seed, v)
			}
		}
		// Paired elements are what is left: the counts must agree.
		if len(next)-len(added) != len(last)-len(removed) {
			t.Fatalf("seed %d: %d of next and %d of last paired", seed, len(next)-len(added), len(last)-len(removed))
		}
	}
}

// TestAlignFindsScatteredInsertions: lists that differ by one insertion per block of a
// hundred (a node joining adds a row or two to each network's rows) give exactly the
// inserted rows, and nothing removed.
func TestAlignFindsScatteredInsertions(t *testing.T) {
	var last, next []int
	for i := range 10000 {
		last = append(last, i)
		next = append(next, i)
		if i%100 == 50 {
			next = append(next, -i)
		}
	}
	var added []int
	Align(next, last, func(v int) { added = append(added, v) }, func(v int) { t.Fatalf("%d reported removed", v) })
	if len(added) != 100 || slices.ContainsFunc(added, func(v int) bool { return v >= 0 }) {
		t.Fatalf("added %v, want the 100 inserted", added)
	}
}
