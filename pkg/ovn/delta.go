package ovn

import (
	"errors"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// A reconcile handed a set compiled anew, most of whose rows are the very rows it
// applied last time (the compiler reuses what did not change), plans in delta: it
// looks only at the rows that are not those, and at the identities the NB changed
// since. A row the last reconcile applied, that the NB left alone, is known to the NB
// exactly as applied, so its reference columns are changed by the difference between
// the references applied and the ones wanted, and only its new children are visited;
// a child that changed in place is planned on its own, as an update.

// errNeedsFullPlan stops a delta plan that meets what only a full plan handles: a
// changed row the NB lacks whose parent is not planned. The reconcile plans again in
// full; nothing was sent.
var errNeedsFullPlan = errors.New("the delta plan cannot place a row: plan in full")

// update makes x, the index of last, the index of next, a set whose rows are mostly
// last's, and returns the identities of next's rows that are not last's rows. It
// returns false, with x unusable, when next holds an identity twice under two rows (x
// would not know which is wanted): index next whole instead.
func (x *indexedSet) update(next, last *rows.Set) (changed map[string]bool, ok bool) {
	var added []entry
	var removed []entry
	next.Changes(last, func(t rows.Table, m model.Model) {
		added = append(added, entry{m, t})
	}, func(t rows.Table, m model.Model) {
		removed = append(removed, entry{m, t})
	})
	for _, e := range removed {
		if x.multi[e.uuid()] {
			return nil, false // another row of next may hold it still
		}
		if cur, ok := x.byID[e.uuid()]; ok && cur.m == e.m {
			delete(x.byID, e.uuid())
		}
	}
	changed = make(map[string]bool, len(added))
	for _, e := range added {
		id := e.uuid()
		if _, ok := x.byID[id]; ok {
			return nil, false // next holds it twice
		}
		x.byID[id] = e
		changed[id] = true
	}
	x.roots = x.roots[:0]
	for _, t := range rows.Tables {
		if !t.Root() {
			continue
		}
		for _, m := range t.Models(next) {
			x.roots = append(x.roots, entry{m, t})
		}
	}
	return changed, true
}

// refDelta compares the keys a reference column held when it was applied (old) with
// the keys wanted now (next): added are in next and not in old, removed in old and not
// in next. A key both lists hold twice, or in another place, counts once.
func refDelta(next, old []string) (added, removed []string) {
	var gone []string
	rows.Align(next, old, func(k string) { added = append(added, k) }, func(k string) { gone = append(gone, k) })
	if len(added) == 0 && len(gone) == 0 {
		return nil, nil
	}
	// Align may report a key that moved as both added and removed.
	if len(gone) == 0 {
		return added, nil
	}
	goneSet := make(map[string]bool, len(gone))
	for _, k := range gone {
		goneSet[k] = true
	}
	added = slices.DeleteFunc(added, func(k string) bool { return goneSet[k] })
	inNext := make(map[string]bool, len(next))
	for _, k := range next {
		inNext[k] = true
	}
	for _, k := range gone {
		if !inNext[k] {
			inNext[k] = true // counts once
			removed = append(removed, k)
		}
	}
	return added, removed
}
