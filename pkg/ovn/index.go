package ovn

import (
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
// re-compares rows nobody touched. It also records which identities changed since the
// reconciler last looked (dirty). It is rebuilt from the cache, every identity dirty,
// when it is new, when the cache was purged (a reconnect that re-read the database), when
// a reconcile failed, and at least every rebuildEvery.
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
	// byID maps an identity to the lowest UUID that holds it; dups lists every UUID of an
	// identity held by more than one row (an interrupted write, another writer).
	byID map[string]string
	dups map[string][]string
	// roots are the owned rows of root tables: the only rows the reconciler deletes.
	roots map[string]entry
	// dirty are identities whose rows were added, changed or removed since the last take;
	// allDirty stands for every identity (after a rebuild).
	dirty    map[string]bool
	allDirty bool
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
	if old != nil && rows.Owned(externalIDsOf(old)) {
		x.remove(entry{old, t})
	}
	if m != nil && rows.Owned(externalIDsOf(m)) {
		x.add(entry{m, t})
	}
}

func (x *ownedIndex) add(e entry) {
	uuid, id := e.uuid(), e.identity()
	if prev, ok := x.byUUID[uuid]; ok {
		x.remove(prev)
	}
	x.byUUID[uuid] = e
	if e.t.Root() {
		x.roots[uuid] = e
	}
	x.dirty[id] = true
	first, held := x.byID[id]
	switch {
	case !held:
		x.byID[id] = uuid
	case first != uuid:
		if len(x.dups[id]) == 0 {
			x.dups[id] = []string{first}
		}
		x.dups[id] = append(x.dups[id], uuid)
		x.byID[id] = min(first, uuid)
	}
}

func (x *ownedIndex) remove(e entry) {
	uuid, id := e.uuid(), e.identity()
	if _, ok := x.byUUID[uuid]; !ok {
		return
	}
	delete(x.byUUID, uuid)
	delete(x.roots, uuid)
	x.dirty[id] = true
	if holders, dup := x.dups[id]; dup {
		holders = slices.DeleteFunc(holders, func(u string) bool { return u == uuid })
		x.byID[id] = slices.Min(holders)
		if len(holders) == 1 {
			delete(x.dups, id)
		} else {
			x.dups[id] = holders
		}
		return
	}
	if x.byID[id] == uuid {
		delete(x.byID, id)
	}
}

// lock takes the index for one plan, once it has caught up with the cache, rebuilding
// it first when it cannot be trusted. The caller must call unlock, and must not hold
// the index while it transacts.
func (x *ownedIndex) lock() error {
	deadline := x.now().Add(catchUpWithin)
	for {
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
	x.byUUID, x.byID, x.dups = map[string]entry{}, map[string]string{}, map[string][]string{}
	x.roots, x.dirty = map[string]entry{}, map[string]bool{}
	x.caches, x.seen = map[string]*cache.RowCache{}, map[string]map[string]bool{}
	for _, t := range rows.Tables {
		x.seen[t.Name()] = map[string]bool{}
	}
}

func (x *ownedIndex) rebuild() error {
	x.reset()
	for _, t := range rows.Tables {
		rc := x.c.Cache().Table(t.Name())
		if rc == nil {
			return fmt.Errorf("the NB client does not cache table %s", t.Name())
		}
		x.caches[t.Name()] = rc
		for uuid, m := range rc.RowsShallow() {
			x.seen[t.Name()][uuid] = true
			if rows.Owned(externalIDsOf(m)) {
				x.add(entry{m, t})
			}
		}
	}
	x.dirty, x.allDirty = map[string]bool{}, true
	x.built, x.invalid = x.now(), false
	return nil
}

// takeDirty returns the identities that changed since the last take, and whether every
// identity must be taken as changed; the next take starts afresh. Called locked.
func (x *ownedIndex) takeDirty() (dirty map[string]bool, all bool) {
	dirty, all = x.dirty, x.allDirty
	x.dirty, x.allDirty = map[string]bool{}, false
	return dirty, all
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
	uuid, ok := x.byID[id]
	if !ok || id == "" {
		return entry{}, false
	}
	return x.byUUID[uuid], true
}

// duplicate reports whether e is an owned row whose identity a row of lower UUID holds
// too, or that has no identity. Called locked.
func (x *ownedIndex) duplicate(e entry) bool {
	id := e.identity()
	return id == "" || x.byID[id] != e.uuid()
}
