package ovn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// DefaultMaxOperations bounds one transaction. A larger diff is split into several
// transactions, each a whole number of switches or routers with their rows, so each is
// consistent on its own and a reconcile interrupted between two converges on the next.
const DefaultMaxOperations = 20000

// Reconciler makes the rows ovnk owns in one NB equal a desired set.
//
// It keeps an index of the rows ovnk owns, current from the client cache's events, and
// remembers the rows it applied: a reconcile compares only rows new to the desired set
// and rows the NB changed since, and one handed the very set it last applied, with
// nothing changed in the NB, compares nothing at all.
type Reconciler struct {
	Client client.Client
	// MaxOperations per transaction; DefaultMaxOperations when zero.
	MaxOperations int

	start sync.Once
	index *ownedIndex
	mu    sync.Mutex // one reconcile at a time
	// last holds the rows of the set the last successful reconcile applied, in slices
	// of its own, and lastSet the same indexed; lastIndex is the index's generation then.
	last      rows.Set
	lastSet   *indexedSet
	lastIndex int
}

// indexedSet is a desired set's rows by identity, and its roots in set order.
type indexedSet struct {
	byID  map[string]entry
	roots []entry
	// multi are the identities the set lists more than once.
	multi map[string]bool
}

func indexSet(s *rows.Set) *indexedSet {
	x := &indexedSet{byID: make(map[string]entry, s.Len())}
	// Roots in set order: switches before port groups, whose ports they own.
	for _, t := range rows.Tables {
		for _, m := range t.Models(s) {
			e := entry{m, t}
			if _, twice := x.byID[e.uuid()]; twice {
				if x.multi == nil {
					x.multi = map[string]bool{}
				}
				x.multi[e.uuid()] = true
			}
			x.byID[e.uuid()] = e
			if t.Root() {
				x.roots = append(x.roots, e)
			}
		}
	}
	return x
}

// Stats counts what one reconcile did.
type Stats struct {
	Inserts, Updates, Mutations, Deletes int
	// Operations is every write operation sent; 0 when the NB already matched.
	Operations   int
	Transactions int
	// Owned is how many rows ovnk owned before the reconcile.
	Owned int
	// Compared is how many desired rows were compared with the NB: 0 when neither the
	// set nor the NB changed since the last reconcile.
	Compared int
	// Delta says the plan looked only at the rows not applied last time and at those
	// the NB changed, not at every row of the set.
	Delta bool
	// Planning is the time the reconcile took to find the difference, from the call to
	// the first transaction: what it costs beside the NB's own work.
	Planning time.Duration
}

// Reconcile writes the difference between desired and the rows ovnk owns: it inserts
// missing rows, updates changed columns, and removes owned rows no longer desired.
// Rows ovnk does not own are never modified or deleted, and references other
// controllers added to ovnk's rows are kept. keep, when not nil, protects owned rows
// that are not desired but must stay (a network that could not be compiled this time).
//
// desired is keyed by identity (rows.IDKey), as the topology compiler produces it. The
// reconciler remembers its rows, to pass over those it applied before: a row must not
// change after the call (put a changed copy in the set instead), and keep must answer
// the same for the same set. Nothing is written when the NB already matches.
func (r *Reconciler) Reconcile(ctx context.Context, desired *rows.Set, keep func(externalIDs map[string]string) bool) (Stats, error) {
	max := r.MaxOperations
	if max <= 0 {
		max = DefaultMaxOperations
	}
	return r.reconcile(ctx, desired, keep, max)
}

// ReconcileWhole is Reconcile with the whole difference in one transaction, whatever
// MaxOperations says: interrupted, it leaves the NB as it was or as desired, never a mix.
func (r *Reconciler) ReconcileWhole(ctx context.Context, desired *rows.Set, keep func(externalIDs map[string]string) bool) (Stats, error) {
	return r.reconcile(ctx, desired, keep, math.MaxInt)
}

func (r *Reconciler) reconcile(ctx context.Context, desired *rows.Set, keep func(externalIDs map[string]string) bool, max int) (Stats, error) {
	r.start.Do(func() { r.index = newOwnedIndex(r.Client) })
	r.mu.Lock()
	defer r.mu.Unlock()
	start := time.Now()
	last, want := r.lastSet, r.lastSet
	r.lastSet = nil // until this reconcile succeeds
	same := want != nil && desired.SameRows(&r.last)
	var changed map[string]bool // in a delta plan, the identities whose rows are new
	if want != nil && !same {
		var ok bool
		if changed, ok = want.update(desired, &r.last); !ok {
			want = nil
		}
	}
	if want == nil {
		want, changed = indexSet(desired), nil
	}
	if err := r.index.lock(ctx); err != nil {
		return Stats{}, err
	}
	// What was applied is remembered only while the index is the one it was applied to.
	remembered := last != nil && r.lastIndex == r.index.generation
	p := newPlan(r.Client, r.index, want, keep)
	var units [][]ovsdb.Operation
	var err error
	switch {
	case remembered && same && len(r.index.dirty) == 0:
		// The very set applied last, and nothing changed in the NB since: no row needs a look.
		units, err = p.build(modeQuiet)
	case remembered && (same || changed != nil && len(changed) <= len(want.byID)/deltaAtMost):
		if changed == nil {
			changed = map[string]bool{}
		}
		p.changed, p.stats.Delta = changed, true
		units, err = p.build(modeDelta)
		if errors.Is(err, errNeedsFullPlan) {
			p = newPlan(r.Client, r.index, want, keep)
			units, err = p.build(modeFull)
		}
	default:
		units, err = p.build(modeFull)
	}
	r.index.unlock()
	if err != nil {
		r.index.invalidate()
		return p.stats, err
	}
	txns := pack(units, max)
	p.stats.Planning = time.Since(start)
	r.index.expect(txns)
	for i, txn := range txns {
		results, err := Transact(ctx, r.Client, txn)
		if err != nil {
			r.index.invalidate()
			return p.stats, fmt.Errorf("apply %d of %d operations: %w", len(txn), p.stats.Operations, err)
		}
		r.index.wrote(txn, results, nil)
		p.stats.Transactions++
		// A zone applied whole is hundreds of megabytes of operations: each sent
		// transaction's may go while the cache fills with the rows they made.
		txns[i] = nil
	}
	r.index.wrote(nil, nil, p.deleted)
	r.lastIndex = r.index.applied(p.compared, p.partial)
	if len(p.taken) == 0 {
		// A root left out for its name is looked at again next time, quiet or not.
		r.last = rows.Set{}
		r.last.Append(desired)
		r.lastSet = want
	}
	return p.stats, errors.Join(p.taken...)
}

// ErrNameTaken is wrapped by Reconcile's error when a row ovnk wants has a name that
// must be unique (a port group's, a meter's) and a row ovnk does not own already holds
// it. That row is left alone and ovnk's is not written; everything else is applied.
// Each such row is a *NameTakenError.
var ErrNameTaken = errors.New("name held by a row ovnk does not own")

// NameTakenError is one row ovnk left out because another owner's row holds its name.
type NameTakenError struct {
	Table, Name string
	// Network is the network the left-out row belongs to (its k8s.ovn.org/network).
	Network string
	// Holder is the UUID of the row holding the name, Owner its owner-controller
	// ("" when it names none, as upstream's meters).
	Holder, Owner string
}

func (e *NameTakenError) Error() string {
	owner := "a row with no owner key"
	if e.Owner != "" {
		owner = e.Owner + "'s row"
	}
	return fmt.Sprintf("%s %q is held by %s (%s), so ovnk's is not written: remove that row and ovnk writes its own",
		e.Table, e.Name, owner, e.Holder)
}

func (e *NameTakenError) Unwrap() error { return ErrNameTaken }

// pack groups units (each must be applied whole) into transactions of at most max
// operations; a unit larger than max travels alone.
func pack(units [][]ovsdb.Operation, max int) [][]ovsdb.Operation {
	var txns [][]ovsdb.Operation
	var cur []ovsdb.Operation
	for _, u := range units {
		if len(cur) > 0 && len(cur)+len(u) > max {
			txns = append(txns, cur)
			cur = nil
		}
		cur = append(cur, u...)
	}
	if len(cur) > 0 {
		txns = append(txns, cur)
	}
	return txns
}

// ownedRows returns every row of the managed tables that ovnk owns, straight from the
// client's cache and without copying: the rows are shared and must never be modified
// (the plan copies a row before changing it).
func ownedRows(c client.Client) ([]entry, error) {
	var out []entry
	for _, t := range rows.Tables {
		rc := c.Cache().Table(t.Name())
		if rc == nil {
			return nil, fmt.Errorf("the NB client does not cache table %s", t.Name())
		}
		for _, m := range rc.RowsShallow() {
			if rows.Owned(externalIDsOf(m)) {
				out = append(out, entry{m, t})
			}
		}
	}
	return out, nil
}

// OwnedRouterPorts returns the router ports ovnk owns, from the client's cache: what
// the last reconcile left, even an interrupted one. The rows are shared and must never
// be modified.
func (r *Reconciler) OwnedRouterPorts() []*nbdb.LogicalRouterPort {
	var out []*nbdb.LogicalRouterPort
	rc := r.Client.Cache().Table("Logical_Router_Port")
	if rc == nil {
		return nil
	}
	for _, m := range rc.RowsShallow() {
		if p, ok := m.(*nbdb.LogicalRouterPort); ok && rows.Owned(p.ExternalIDs) {
			out = append(out, p)
		}
	}
	return out
}

// LocalPorts returns the local (not remote) switch ports ovnk owns, by name, with their
// addresses, from the client's cache.
func (r *Reconciler) LocalPorts() map[string][]string {
	out := map[string][]string{}
	rc := r.Client.Cache().Table("Logical_Switch_Port")
	if rc == nil {
		return out
	}
	for _, m := range rc.RowsShallow() {
		if p, ok := m.(*nbdb.LogicalSwitchPort); ok && rows.Owned(p.ExternalIDs) && p.Type == "" {
			out[p.Name] = p.Addresses
		}
	}
	return out
}

// plan computes the operations of one reconcile.
type plan struct {
	c       client.Client
	ix      *ownedIndex // locked for the plan's life
	keep    func(map[string]string) bool
	desired map[string]entry // by identity
	roots   []entry          // desired root rows, in set order
	named   int
	stats   Stats
	// inserted maps the identity of a desired row this plan inserts to the named UUID
	// it is inserted under and its unit.
	inserted map[string]plannedRef
	unit     int         // the unit being planned
	movedTo  map[int]int // a unit joined into a later one
	taken    []error     // desired roots left out: their unique name is another's
	// replaced holds owned rows deleted in the unit of the row that takes their name.
	replaced map[string]bool
	// deleted are the rows the plan deletes; compared the desired rows it compared.
	deleted, compared []entry
	// changed are, in a delta plan, the identities whose desired rows are not the rows
	// applied last or that the NB changed since; visited those the plan reached.
	changed, visited map[string]bool
	// partial are the identities of rows the plan leaves holding references to kept
	// rows their desired row does not list: the NB does not hold them as desired.
	partial map[string]bool
}

type plannedRef struct {
	ref  string
	unit int
}

func newPlan(c client.Client, ix *ownedIndex, want *indexedSet, keep func(map[string]string) bool) *plan {
	p := &plan{c: c, ix: ix, keep: keep, desired: want.byID, roots: want.roots,
		inserted: map[string]plannedRef{}, movedTo: map[int]int{}, replaced: map[string]bool{}}
	p.stats.Owned = len(ix.byUUID)
	return p
}

func (p *plan) kept(e entry) bool { return p.keep != nil && p.keep(externalIDsOf(e.m)) }

// deltaAtMost: a set of which more than one row in deltaAtMost is new is planned in
// full, walking every row, which costs less than planning each of them on its own.
const deltaAtMost = 4

// planMode says which desired rows a plan looks at.
type planMode int

const (
	// modeFull looks at every desired root and, through it, every row.
	modeFull planMode = iota
	// modeDelta looks at the rows of plan.changed and at the identities the NB changed.
	modeDelta
	// modeQuiet looks at no desired row: each is as the last reconcile applied it.
	modeQuiet
)

// build returns the operations grouped in units: one per desired root with everything
// below it, one per row changed in place below an unchanged root (modeDelta), and one
// per owned root to delete. Only owned roots no longer desired are looked for in every
// mode.
func (p *plan) build(mode planMode) ([][]ovsdb.Operation, error) {
	units, err := p.buildDesired(mode)
	if errors.Is(err, errNeedsFullPlan) {
		return nil, err // the index stays as it is, for the full plan that follows
	}
	// Every change the index knows of is looked at now.
	defer p.ix.clean()
	if err != nil {
		return nil, err
	}
	return p.buildStale(units)
}

// buildDesired plans the desired rows the mode looks at.
func (p *plan) buildDesired(mode planMode) ([][]ovsdb.Operation, error) {
	var units [][]ovsdb.Operation
	var roots []entry
	switch mode {
	case modeFull:
		roots = p.roots
	case modeDelta:
		p.visited = map[string]bool{}
		for _, h := range p.ix.dirty {
			p.changed[h.id] = true
		}
		for _, root := range p.roots {
			if p.changed[root.uuid()] {
				roots = append(roots, root)
			}
		}
	}
	for _, root := range roots {
		holder, taken := p.nameHolder(root)
		if taken != nil {
			p.taken = append(p.taken, taken)
			continue
		}
		p.unit = len(units)
		_, _, ops, err := p.row(root)
		if err != nil {
			return nil, err
		}
		if holder != nil {
			// An older row of ovnk's holds the name under another identity: it goes in
			// the same transaction, before the new one takes the name.
			del, err := p.c.Where(holder.m).Delete()
			if err != nil {
				return nil, fmt.Errorf("build delete of %s: %w", holder.describe(), err)
			}
			p.count(&p.stats.Deletes, del)
			p.replaced[holder.uuid()] = true
			p.deleted = append(p.deleted, *holder)
			ops = append(del, ops...)
		}
		if len(ops) == 0 {
			continue
		}
		// A weak reference to a row inserted by an earlier unit names it by its named
		// UUID, which holds only inside one transaction: join those units into this one.
		var joined []ovsdb.Operation
		for _, u := range p.weakUnits(root) {
			joined = append(joined, units[u]...)
			units[u] = nil
			p.movedTo[u] = len(units)
		}
		units = append(units, append(joined, ops...))
	}
	if mode == modeDelta {
		return p.changedInPlace(units)
	}
	return units, nil
}

// changedInPlace plans, each in a unit of its own, the changed rows no planned parent
// reached: rows whose parent kept its references, so the rows exist in the NB and are
// updated where they are. In identity order, so equal plans send equal transactions.
func (p *plan) changedInPlace(units [][]ovsdb.Operation) ([][]ovsdb.Operation, error) {
	ids := make([]string, 0, len(p.changed))
	for id := range p.changed {
		if !p.visited[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		e, desired := p.desired[id]
		if !desired || e.t.Root() || p.visited[id] {
			continue // gone (its parent dropped it, or the stale roots go below), or planned
		}
		if _, exists := p.ix.current(id); !exists {
			return nil, errNeedsFullPlan
		}
		p.unit = len(units)
		_, _, ops, err := p.row(e)
		if err != nil {
			return nil, err
		}
		if len(ops) > 0 {
			units = append(units, ops)
		}
	}
	return units, nil
}

// buildStale adds to units the deletion of the owned roots no longer desired.
func (p *plan) buildStale(units [][]ovsdb.Operation) ([][]ovsdb.Operation, error) {
	units = slices.DeleteFunc(units, func(u []ovsdb.Operation) bool { return u == nil })
	var stale []entry
	for _, e := range p.ix.roots {
		if p.replaced[e.uuid()] {
			continue
		}
		if p.ix.duplicate(e) {
			stale = append(stale, e)
			continue
		}
		if _, want := p.desired[e.identity()]; !want && !p.kept(e) {
			stale = append(stale, e)
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].uuid() < stale[j].uuid() })
	for _, e := range stale {
		ops, err := p.c.Where(e.m).Delete()
		if err != nil {
			return nil, fmt.Errorf("build delete of %s: %w", e.describe(), err)
		}
		p.count(&p.stats.Deletes, ops)
		p.deleted = append(p.deleted, e)
		units = append(units, ops)
	}
	return units, nil
}

func (p *plan) count(counter *int, ops []ovsdb.Operation) {
	*counter += len(ops)
	p.stats.Operations += len(ops)
}

// row plans a desired row and its children, children first so every named UUID is
// defined before it is used. It returns the reference to the row (its real UUID if it
// exists, or the named UUID it is inserted under) and whether it is inserted. A row
// the last reconcile applied, that the NB has not changed since and whose children
// keep their UUIDs, is passed over without a comparison.
func (p *plan) row(want entry) (ref string, inserted bool, ops []ovsdb.Operation, err error) {
	if pr, ok := p.inserted[want.uuid()]; ok {
		// Listed twice in the set (by one parent or by two): one row is inserted.
		return pr.ref, true, nil, nil
	}
	if p.visited != nil {
		p.visited[want.uuid()] = true
	}
	t := want.t
	h := p.ix.byID[want.uuid()]
	cur, exists := entry{}, h != nil && h.e.m != nil
	if exists {
		cur = h.e
	}
	// In a delta plan, a row applied last time that the NB left alone changes by the
	// difference between its references then and now.
	var applied model.Model
	if p.visited != nil && exists && !h.dirty {
		applied = h.applied
	}
	refCols := t.Refs()
	newChild := false
	var added, removed [][]string
	if applied != nil {
		added, removed = make([][]string, len(refCols)), make([][]string, len(refCols))
	}
	for i, rc := range refCols {
		keys := want.refs(i)
		if applied != nil {
			// Children kept in place are planned on their own if they changed
			// (changedInPlace): only new ones must be planned with their parent.
			if want.m != applied {
				added[i], removed[i] = refDelta(keys, *t.RefField(applied, i))
			}
			keys = added[i]
		}
		for _, key := range keys {
			if rc.Weak {
				_, isNew := p.inserted[key]
				newChild = newChild || isNew
				continue
			}
			child, ok := p.desired[key]
			if !ok {
				return "", false, nil, fmt.Errorf("%s refers to %s, which is not in the desired set", want.describe(), key)
			}
			_, isNew, childOps, err := p.row(child)
			if err != nil {
				return "", false, nil, err
			}
			newChild = newChild || isNew
			ops = append(ops, childOps...)
		}
	}

	if exists && !newChild && !h.dirty && h.applied == want.m {
		// The row the last reconcile applied, and the NB has not changed it since.
		return cur.uuid(), false, ops, nil
	}
	p.stats.Compared++
	p.compared = append(p.compared, want)
	if !exists {
		return p.insert(want, ops)
	}
	if !t.Same(cur.m, want.m) {
		// Work on a copy: cached rows are shared and must never be modified.
		upd := t.Clone(cur.m)
		updOps, err := p.c.Where(upd).Update(upd, t.Changed(upd, want.m)...)
		if err != nil {
			return "", false, nil, fmt.Errorf("build update of %s: %w", want.describe(), err)
		}
		p.count(&p.stats.Updates, updOps)
		ops = append(ops, updOps...)
	}
	for i := range refCols {
		var mutOps []ovsdb.Operation
		if applied != nil {
			mutOps, err = p.referencesChanged(cur, want, i, added[i], removed[i])
		} else {
			var refs []string
			if refs, err = p.resolveKeys(want, i, want.refs(i)); err == nil {
				mutOps, err = p.references(cur, i, refs)
			}
		}
		if err != nil {
			return "", false, nil, err
		}
		ops = append(ops, mutOps...)
	}
	return cur.uuid(), false, ops, nil
}

// insert plans the insertion of want, whose children ops plans already.
func (p *plan) insert(want entry, ops []ovsdb.Operation) (string, bool, []ovsdb.Operation, error) {
	t := want.t
	m := t.Clone(want.m)
	p.named++
	name := fmt.Sprintf("new%d", p.named)
	t.SetUUID(m, name)
	for i := range t.Refs() {
		refs, err := p.resolveKeys(want, i, want.refs(i))
		if err != nil {
			return "", false, nil, err
		}
		*t.RefField(m, i) = refs
	}
	insOps, err := p.c.Create(m)
	if err != nil {
		return "", false, nil, fmt.Errorf("build insert of %s: %w", want.describe(), err)
	}
	p.count(&p.stats.Inserts, insOps)
	p.inserted[want.uuid()] = plannedRef{ref: name, unit: p.unit}
	return name, true, append(ops, insOps...), nil
}

// referencesChanged mutates one reference column of cur, a row the NB holds as the last
// reconcile applied it, from the keys applied then to want's: it adds the keys added
// and removes the keys removed, leaving every other reference as it is.
func (p *plan) referencesChanged(cur, want entry, ref int, added, removed []string) ([]ovsdb.Operation, error) {
	add, err := p.resolveKeys(want, ref, added)
	if err != nil {
		return nil, err
	}
	have := holds(*cur.t.RefField(cur.m, ref), len(add)+len(removed))
	// Only what changes the row: a write that changes nothing has no event.
	add = slices.DeleteFunc(add, have)
	var remove []string
	for _, key := range removed {
		child, ok := p.ix.current(key)
		switch {
		case !ok || !have(child.uuid()):
			// Gone already: removing it would change nothing.
		case p.kept(child):
			p.leftKept(cur)
		default:
			remove = append(remove, child.uuid())
		}
	}
	return p.mutateReferences(cur, ref, add, remove)
}

// holds returns membership in refs, for asking it about n UUIDs: a scan of refs for
// each when n is small (a node joining adds a reference or two to rows that hold
// hundreds), a set otherwise.
func holds(refs []string, n int) func(string) bool {
	if n <= 8 {
		return func(u string) bool { return slices.Contains(refs, u) }
	}
	set := make(map[string]bool, len(refs))
	for _, u := range refs {
		set[u] = true
	}
	return func(u string) bool { return set[u] }
}

// leftKept records that e keeps a reference to a kept row its desired row does not
// list: the NB does not hold e as desired, so e is not taken as applied.
func (p *plan) leftKept(e entry) {
	if p.partial == nil {
		p.partial = map[string]bool{}
	}
	p.partial[e.identity()] = true
}

// resolveKeys turns keys, identities in want's reference column ref, into what the NB
// knows them by: the named UUID of a row this plan inserts, or the UUID of the row that
// holds it. A weak reference must name a desired row planned before want.
func (p *plan) resolveKeys(want entry, ref int, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	weak := want.t.Refs()[ref].Weak
	out := make([]string, 0, len(keys))
	for _, key := range keys {
		if pr, ok := p.inserted[key]; ok {
			out = append(out, pr.ref)
			continue
		}
		cur, exists := p.ix.current(key)
		if _, desired := p.desired[key]; !exists || !desired {
			if weak {
				return nil, fmt.Errorf("%s refers to %s, which is not in the desired set or is planned after it", want.describe(), key)
			}
			return nil, fmt.Errorf("%s refers to %s, which is not planned", want.describe(), key)
		}
		out = append(out, cur.uuid())
	}
	// A key listed twice names one row, and an OVSDB set holds it once.
	slices.Sort(out)
	return slices.Compact(out), nil
}

// nameHolder looks, for a desired root not in the NB yet, for the row that already
// holds its indexed name (a port group's, a meter's): inserting it would fail the whole
// transaction. A row of ovnk's under another identity is returned to be replaced; a row
// of another owner is left alone, and the root with it, as a *NameTakenError.
func (p *plan) nameHolder(root entry) (*entry, error) {
	if !root.t.Indexed() {
		return nil, nil
	}
	if _, exists := p.ix.current(root.uuid()); exists {
		return nil, nil
	}
	rc := p.c.Cache().Table(root.t.Name())
	if rc == nil {
		return nil, nil
	}
	uuid, holder, err := rc.RowByModel(root.m)
	if err != nil || holder == nil {
		return nil, nil
	}
	if ids := externalIDsOf(holder); !rows.Owned(ids) {
		name := ""
		if n, ok := root.m.(interface{ GetName() string }); ok {
			name = n.GetName()
		}
		return nil, &NameTakenError{Table: root.t.Name(), Name: name, Network: externalIDsOf(root.m)[rows.NetworkKey],
			Holder: uuid, Owner: ids[rows.OwnerControllerKey]}
	}
	return &entry{holder, root.t}, nil
}

// weakUnits lists the earlier units that insert a row root refers to weakly, in order.
func (p *plan) weakUnits(root entry) []int {
	var out []int
	for i, rc := range root.t.Refs() {
		if !rc.Weak {
			continue
		}
		for _, key := range root.refs(i) {
			pr, isNew := p.inserted[key]
			if !isNew {
				continue
			}
			u := pr.unit
			for {
				next, moved := p.movedTo[u]
				if !moved {
					break
				}
				u = next
			}
			if u < p.unit && !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	slices.Sort(out)
	return out
}

// references mutates one reference column of an existing row so that, among the rows
// ovnk owns, it refers exactly to want. New references are added before old ones are
// removed: OVSDB checks a column's minimum size (a meter's one band) after each
// mutation. References to rows ovnk does not own, and to
// kept rows, are left as they are.
func (p *plan) references(e entry, ref int, want []string) ([]ovsdb.Operation, error) {
	field := e.t.RefField(e.m, ref)
	have := *field
	if rows.SameSet(have, want) {
		return nil, nil
	}
	haveSet := make(map[string]bool, len(have))
	for _, ref := range have {
		haveSet[ref] = true
	}
	wantSet := make(map[string]bool, len(want))
	for _, ref := range want {
		wantSet[ref] = true
	}
	var add, remove []string
	for _, ref := range want {
		if !haveSet[ref] {
			add = append(add, ref)
		}
	}
	for _, ref := range have {
		owned, ours := p.ix.byUUID[ref]
		if ours && !wantSet[ref] {
			if p.kept(owned) {
				p.leftKept(e)
			} else {
				remove = append(remove, ref)
			}
		}
	}
	return p.mutateReferences(e, ref, add, remove)
}

// mutateReferences adds the UUIDs add to e's reference column ref, then removes the
// UUIDs remove.
func (p *plan) mutateReferences(e entry, ref int, add, remove []string) ([]ovsdb.Operation, error) {
	field := e.t.RefField(e.m, ref)
	var ops []ovsdb.Operation
	for _, change := range []struct {
		refs    []string
		mutator ovsdb.Mutator
	}{{add, ovsdb.MutateOperationInsert}, {remove, ovsdb.MutateOperationDelete}} {
		if len(change.refs) == 0 {
			continue
		}
		sort.Strings(change.refs)
		mut, err := p.c.Where(e.m).Mutate(e.m, model.Mutation{Field: field, Mutator: change.mutator, Value: change.refs})
		if err != nil {
			return nil, fmt.Errorf("build reference change of %s: %w", e.describe(), err)
		}
		p.count(&p.stats.Mutations, mut)
		ops = append(ops, mut...)
	}
	return ops, nil
}
