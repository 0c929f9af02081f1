package ovn

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ovn-kubernetes/libovsdb/cache"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// catchUpWithin bounds how long a reconcile waits for the index to take in the changes
// the cache already holds (the cache hands them over asynchronously) before it rebuilds
// the index from the cache instead.
const catchUpWithin = 2 * time.Second

// rebuildEvery bounds how long the index trusts the cache's events alone: libovsdb drops
// an event when its buffer (65536 events) is full, and a dropped update would otherwise
// hide a change made behind ovnk's back until the next rebuild.
const rebuildEvery = 10 * time.Minute

// ownedIndex is the reconciler's view of the rows ovnk owns in one NB, kept current from
// the client cache's events so that a reconcile neither re-lists every table nor
// re-compares rows nobody touched. It is rebuilt from the cache when it is new, when the
// cache was purged (a reconnect that re-read the database), when a reconcile failed, and
// at least every rebuildEvery; a rebuild forgets what was applied, so the next plan
// compares every row.
type ownedIndex struct {
	c   client.Client
	mu  sync.Mutex
	now func() time.Time

	// caches are the row caches the index was built from: a reconnect that purges the
	// cache replaces them, and the index must then be rebuilt.
	caches map[string]*cache.RowCache
	built  time.Time
	// invalid asks for a rebuild at the next reconcile.
	invalid bool
	// generation counts the rebuilds: a rebuild forgets what was applied.
	generation int
	// seen holds, by table, the UUID of every row the index has taken in, owned or
	// not: the index has caught up with the cache when their counts agree. It also
	// tells an event the index already took in at a rebuild from a new one.
	seen map[string]map[string]bool
	// written are the rows the reconciler's last transactions inserted (true) and
	// deleted (false), by table and UUID: the index waits for their events before the
	// next plan, or it would plan against rows it has not heard of (an insert and a
	// delete in one transaction keep the counts level).
	written map[string]map[string]bool

	byUUID map[string]entry
	// byID holds what the index knows of each identity; dups lists every UUID of an
	// identity held by more than one row (an interrupted write, another writer).
	byID map[string]*held
	dups map[string][]string
	// roots are the owned rows of root tables: the only rows the reconciler deletes.
	roots map[string]entry
	// dirty are the identities changed since the last plan, to be made clean again.
	dirty []*held
	// ownUpdates and ownInserts are the writes of the reconciler's last transaction
	// whose events are still to come: by UUID the rows it updates or mutates, by
	// identity the rows it inserts. Their events are ovnk's own writes, not changes
	// behind its back, and leave the identity clean, so that the next plan passes over
	// rows it just wrote.
	ownUpdates, ownInserts map[string]int
	// fresh lists, by table, the UUIDs of owned rows the index holds as an event handed
	// them over: a copy of the cache's row, made before libovsdb stored its own. Once
	// they are many, share swaps them for the cache's rows, so that a zone applied
	// through events is not held twice.
	fresh map[string][]string
}

// held is one identity: the row holding it, whether the NB changed it since the last
// plan, and the desired row the last successful reconcile applied under it. One map
// lookup gives the reconciler all three.
type held struct {
	id      string
	e       entry // the row of lowest UUID holding it; e.m is nil when none does
	dirty   bool
	applied model.Model
}

func newOwnedIndex(c client.Client) *ownedIndex {
	x := &ownedIndex{c: c, now: time.Now, invalid: true}
	c.Cache().AddEventHandler(&cache.EventHandlerFuncs{
		AddFunc:    func(table string, m model.Model) { x.event(table, nil, m) },
		UpdateFunc: func(table string, old, m model.Model) { x.event(table, old, m) },
		DeleteFunc: func(table string, m model.Model) { x.event(table, m, nil) },
	})
	return x
}

// emptyIndex is the index of an NB where ovnk owns nothing, attached to no client.
func emptyIndex() *ownedIndex {
	x := &ownedIndex{}
	x.reset()
	return x
}

// tableByName finds a managed table; nil for the tables ovnk does not manage.
var tableByName = func() map[string]rows.Table {
	out := map[string]rows.Table{}
	for _, t := range rows.Tables {
		out[t.Name()] = t
	}
	return out
}()

// event applies one change of the cache: old is nil for an insert, m for a delete.
func (x *ownedIndex) event(table string, old, m model.Model) {
	t := tableByName[table]
	if t == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byUUID == nil {
		return // not built yet: the build reads the cache
	}
	seen := x.seen[table]
	switch {
	case old == nil && seen[uuidOf(m)]:
		// Queued before the last rebuild, which read the row already.
	case old != nil && !seen[uuidOf(old)]:
		return // likewise, for a row the rebuild found gone
	case old == nil:
		seen[uuidOf(m)] = true
	case m == nil:
		delete(seen, uuidOf(old))
	}
	own := false
	switch {
	case old == nil && m != nil:
		own = take(x.ownInserts, identityOf(m))
	case old != nil && m != nil:
		own = take(x.ownUpdates, uuidOf(m))
	}
	if old != nil {
		x.remove(uuidOf(old), m)
	} else {
		x.remove(uuidOf(m), m) // an insert the last rebuild read already
	}
	if m != nil && rows.Owned(externalIDsOf(m)) {
		x.add(entry{m, t}, own)
		x.fresh[table] = append(x.fresh[table], uuidOf(m))
		if rc := x.caches[table]; rc != nil && len(x.fresh[table]) > shareAfter(rc.Len()) {
			x.share(table, rc)
		}
	}
}

// shareAfter is how many event-held rows of a table of n rows the index keeps before
// sharing the cache's: a quarter of the table, so that the sharing, a pass over the whole
// table, costs each event a constant (a zone applied from empty passes about four times
// over it), and a node joining, a few rows of each table, never pays for it.
func shareAfter(n int) int { return 1024 + n/4 }

// share makes the index hold the cache's own row in place of each fresh copy. libovsdb
// stores rows it never changes in place (an update stores a new one), so the index may
// hold them as the snapshot RowsShallow returns them. A cached row newer than the index's
// (its event still queued) is taken only under the same identity: its event follows and
// updates the index as usual. Called locked.
func (x *ownedIndex) share(table string, rc *cache.RowCache) {
	cached := rc.RowsShallow()
	for _, uuid := range x.fresh[table] {
		e, ok := x.byUUID[uuid]
		m := cached[uuid]
		if !ok || m == nil || m == e.m || !rows.Owned(externalIDsOf(m)) || identityOf(m) != e.identity() {
			continue
		}
		shared := entry{m, e.t}
		x.byUUID[uuid] = shared
		if _, root := x.roots[uuid]; root {
			x.roots[uuid] = shared
		}
		if h := x.byID[e.identity()]; h != nil && h.e.m == e.m {
			h.e = shared
		}
	}
	x.fresh[table] = nil
}

// take counts one event of an expected write off, reporting whether it was expected.
func take(expected map[string]int, key string) bool {
	if expected[key] == 0 {
		return false
	}
	expected[key]--
	return true
}

// expect records the writes of the transactions a reconcile is about to send: their
// events are the reconciler's own. What the last reconcile expected and never saw is
// forgotten:
// every write ovnk sends changes its row, so its event comes, and an expectation left
// over could hide a later change made behind ovnk's back.
func (x *ownedIndex) expect(txns [][]ovsdb.Operation) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ownUpdates, x.ownInserts = map[string]int{}, map[string]int{}
	for _, txn := range txns {
		x.expectTransaction(txn)
	}
}

func (x *ownedIndex) expectTransaction(ops []ovsdb.Operation) {
	updated := map[string]bool{} // a row updated and mutated in one transaction has one event
	for _, op := range ops {
		switch op.Op {
		case ovsdb.OperationInsert:
			if ids, ok := op.Row["external_ids"].(ovsdb.OvsMap); ok {
				if id, ok := ids.GoMap[rows.IDKey].(string); ok {
					x.ownInserts[id]++
				}
			}
		case ovsdb.OperationUpdate, ovsdb.OperationMutate:
			for _, cond := range op.Where {
				if u, ok := cond.Value.(ovsdb.UUID); ok && cond.Column == "_uuid" && !updated[u.GoUUID] {
					updated[u.GoUUID] = true
					x.ownUpdates[u.GoUUID]++
				}
			}
		}
	}
}

// hold returns the record of an identity, made if needed.
func (x *ownedIndex) hold(id string) *held {
	h := x.byID[id]
	if h == nil {
		h = &held{id: id}
		x.byID[id] = h
	}
	return h
}

func (x *ownedIndex) markDirty(h *held) {
	if !h.dirty {
		h.dirty = true
		x.dirty = append(x.dirty, h)
	}
}

// add takes in an owned row; own says the reconciler wrote it, which leaves its
// identity clean.
func (x *ownedIndex) add(e entry, own bool) {
	uuid, id := e.uuid(), e.identity()
	x.byUUID[uuid] = e
	if e.t.Root() {
		x.roots[uuid] = e
	}
	h := x.hold(id)
	if !own {
		x.markDirty(h)
	}
	switch {
	case h.e.m == nil || h.e.uuid() == uuid:
		h.e = e
	default:
		if len(x.dups[id]) == 0 {
			x.dups[id] = []string{h.e.uuid()}
		}
		if !slices.Contains(x.dups[id], uuid) {
			x.dups[id] = append(x.dups[id], uuid)
		}
		if uuid < h.e.uuid() {
			h.e = e
		}
	}
}

// remove takes the row of that UUID out of the index, as the index holds it (an event's
// old row may be older or newer than that after a rebuild). next is the row replacing
// it in an update, nil for a delete: an update that keeps the row ovnk's under the same
// identity keeps the identity's record, and with it what was applied under it.
func (x *ownedIndex) remove(uuid string, next model.Model) {
	prev, ok := x.byUUID[uuid]
	if !ok {
		return
	}
	id := prev.identity()
	if next != nil && rows.Owned(externalIDsOf(next)) && identityOf(next) == id {
		return // add replaces the row in place
	}
	delete(x.byUUID, uuid)
	delete(x.roots, uuid)
	h := x.byID[id]
	if h == nil {
		return
	}
	x.markDirty(h)
	if holders, dup := x.dups[id]; dup {
		holders = slices.DeleteFunc(holders, func(u string) bool { return u == uuid })
		h.e = x.byUUID[slices.Min(holders)]
		if len(holders) == 1 {
			delete(x.dups, id)
		} else {
			x.dups[id] = holders
		}
		return
	}
	// No row holds the identity any more: whatever was applied under it is gone too.
	delete(x.byID, id)
}

// lock takes the index for one plan, once it has caught up with the cache, rebuilding
// it first when it cannot be trusted. The caller must call unlock, and must not hold
// the index while it transacts.
func (x *ownedIndex) lock(ctx context.Context) error {
	deadline := x.now().Add(catchUpWithin)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		x.mu.Lock()
		if x.invalid || x.now().Sub(x.built) > rebuildEvery || x.purged() || x.now().After(deadline) {
			if err := x.rebuild(); err != nil {
				x.mu.Unlock()
				return err
			}
			return nil
		}
		if x.caughtUp() {
			x.written = nil
			return nil
		}
		// The cache holds changes whose events have not reached the index yet: let
		// them in.
		x.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
}

func (x *ownedIndex) unlock() { x.mu.Unlock() }

// caughtUp reports whether the index has taken in the reconciler's own writes and, by
// count, every row the cache holds: a change still queued for the index leaves them
// apart. Called locked.
func (x *ownedIndex) caughtUp() bool {
	for table, uuids := range x.written {
		for uuid, inserted := range uuids {
			if x.seen[table][uuid] != inserted {
				return false
			}
		}
	}
	for name, rc := range x.caches {
		if rc.Len() != len(x.seen[name]) {
			return false
		}
	}
	// The events of the reconciler's own updates: a plan against a row before its own
	// last write would be taken for clean when the event comes.
	for _, n := range x.ownUpdates {
		if n > 0 {
			return false
		}
	}
	return true
}

// wrote records rows the reconciler inserted or deleted, for the next caughtUp.
func (x *ownedIndex) wrote(ops []ovsdb.Operation, results []ovsdb.OperationResult, deleted []entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.written == nil {
		x.written = map[string]map[string]bool{}
	}
	note := func(table, uuid string, inserted bool) {
		if x.written[table] == nil {
			x.written[table] = map[string]bool{}
		}
		x.written[table][uuid] = inserted
	}
	for i, op := range ops {
		if op.Op == ovsdb.OperationInsert && i < len(results) {
			note(op.Table, results[i].UUID.GoUUID, true)
		}
	}
	for _, e := range deleted {
		note(e.t.Name(), e.uuid(), false)
	}
}

// applied records the desired rows a successful reconcile compared, by identity: the
// next plan passes over them while they stay the same and the NB leaves them alone. It
// returns the index's generation.
func (x *ownedIndex) applied(rows []entry, partial map[string]bool) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range rows {
		if partial[e.uuid()] {
			x.hold(e.uuid()).applied = nil // compared in full next time
			continue
		}
		x.hold(e.uuid()).applied = e.m
	}
	return x.generation
}

// purged reports whether a table's cache is not the one the index was built from.
func (x *ownedIndex) purged() bool {
	for name, rc := range x.caches {
		if x.c.Cache().Table(name) != rc {
			return true
		}
	}
	return false
}

// reset empties the index.
func (x *ownedIndex) reset() {
	x.byUUID, x.byID, x.dups = map[string]entry{}, map[string]*held{}, map[string][]string{}
	x.roots, x.dirty, x.written = map[string]entry{}, nil, nil
	x.caches, x.seen = map[string]*cache.RowCache{}, map[string]map[string]bool{}
	x.fresh = map[string][]string{}
	for _, t := range rows.Tables {
		x.seen[t.Name()] = map[string]bool{}
	}
}

func (x *ownedIndex) rebuild() error {
	x.reset()
	for _, t := range rows.Tables {
		rc := x.c.Cache().Table(t.Name())
		if rc == nil {
			x.invalid = true
			return fmt.Errorf("the NB client does not cache table %s", t.Name())
		}
		x.caches[t.Name()] = rc
		for uuid, m := range rc.RowsShallow() {
			x.seen[t.Name()][uuid] = true
			if rows.Owned(externalIDsOf(m)) {
				x.add(entry{m, t}, false)
			}
		}
	}
	x.ownUpdates, x.ownInserts = nil, nil
	x.clean()
	x.built, x.invalid = x.now(), false
	x.generation++
	return nil
}

// clean forgets which identities changed: the plan about to run looks at them.
// Called locked.
func (x *ownedIndex) clean() {
	for _, h := range x.dirty {
		h.dirty = false
	}
	x.dirty = nil
}

// invalidate makes the next lock rebuild the index: a reconcile failed, so what it
// planned may or may not be in the NB, and events may have been lost.
func (x *ownedIndex) invalidate() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.invalid = true
}

// current returns the row holding an identity (the lowest UUID when several do).
// Called locked.
func (x *ownedIndex) current(id string) (entry, bool) {
	h := x.byID[id]
	if h == nil || h.e.m == nil || id == "" {
		return entry{}, false
	}
	return h.e, true
}

// duplicate reports whether e is an owned row whose identity a row of lower UUID holds
// too, or that has no identity. Called locked.
func (x *ownedIndex) duplicate(e entry) bool {
	id := e.identity()
	h := x.byID[id]
	return id == "" || h == nil || h.e.m == nil || h.e.uuid() != e.uuid()
}
