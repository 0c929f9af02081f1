package rows

import "github.com/ovn-kubernetes/libovsdb/model"

// lookahead bounds how far Align looks past a mismatch for the row that resumes the
// match: a compile that reuses its rows inserts or removes a few rows at a time, so the
// lists meet again within a few places.
const lookahead = 32

// Align walks two lists in order, pairing equal elements, and calls added for each
// element of next it pairs with none of last, and removed for each element of last it
// pairs with none of next. Paired elements are equal; an element that moved far may be
// reported as both removed and added. It costs one comparison per element when the
// lists agree but for a few insertions, removals and replacements, and builds an index
// of last only when a run of changes is longer than the look-ahead.
func Align[V comparable](next, last []V, added, removed func(V)) {
	i, j := 0, 0
	var pos map[V]int // last's positions, built at the first long run of changes
	for i < len(next) && j < len(last) {
		if next[i] == last[j] {
			i, j = i+1, j+1
			continue
		}
		if k := indexWithin(last[j+1:], next[i]); k >= 0 { // last[j:j+1+k] went away
			for _, v := range last[j : j+1+k] {
				removed(v)
			}
			j += k + 1
			continue
		}
		if k := indexWithin(next[i+1:], last[j]); k >= 0 { // next[i:i+1+k] is new
			for _, v := range next[i : i+1+k] {
				added(v)
			}
			i += k + 1
			continue
		}
		if i+1 == len(next) || j+1 == len(last) || next[i+1] == last[j+1] { // one replaced
			added(next[i])
			removed(last[j])
			i, j = i+1, j+1
			continue
		}
		if pos == nil {
			pos = make(map[V]int, len(last))
			for p, v := range last {
				pos[v] = p
			}
		}
		if p, ok := pos[next[i]]; ok && p > j { // a long run of last went away
			for _, v := range last[j:p] {
				removed(v)
			}
			j = p
			continue
		}
		added(next[i])
		i++
	}
	for _, v := range next[i:] {
		added(v)
	}
	for _, v := range last[j:] {
		removed(v)
	}
}

// indexWithin is the index of v among the first lookahead elements of s, or -1.
func indexWithin[V comparable](s []V, v V) int {
	for k := range min(len(s), lookahead) {
		if s[k] == v {
			return k
		}
	}
	return -1
}

// Changes calls added with each row of s that is not a row (the very pointer) of last,
// and removed with each row of last that s no longer holds, table by table; rows are
// paired in order (Align). A row that moved far in its table may be reported as both.
// It is how the reconciler finds, in a set compiled anew, the few rows that are not
// the ones it applied last time.
func (s *Set) Changes(last *Set, added, removed func(Table, model.Model)) {
	for _, t := range Tables {
		t.changes(s, last, added, removed)
	}
}

func (t tableOf[T, P]) changes(next, last *Set, added, removed func(Table, model.Model)) {
	n, l := *t.field(next), *t.field(last)
	if len(n) == len(l) && (len(n) == 0 || &n[0] == &l[0]) {
		return // one slice: nothing to walk
	}
	Align(n, l, func(r P) { added(t, r) }, func(r P) { removed(t, r) })
}
