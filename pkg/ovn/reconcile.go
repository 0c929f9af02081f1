package ovn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

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
type Reconciler struct {
	Client client.Client
	// MaxOperations per transaction; DefaultMaxOperations when zero.
	MaxOperations int
}

// Stats counts what one reconcile did.
type Stats struct {
	Inserts, Updates, Mutations, Deletes int
	// Operations is every write operation sent; 0 when the NB already matched.
	Operations   int
	Transactions int
	// Owned is how many rows ovnk owned before the reconcile.
	Owned int
}

// Reconcile writes the difference between desired and the rows ovnk owns: it inserts
// missing rows, updates changed columns, and removes owned rows no longer desired.
// Rows ovnk does not own are never modified or deleted, and references other
// controllers added to ovnk's rows are kept. keep, when not nil, protects owned rows
// that are not desired but must stay (a network that could not be compiled this time).
//
// desired is keyed by identity (rows.IDKey), as the topology compiler produces it.
// Nothing is written when the NB already matches.
func (r *Reconciler) Reconcile(ctx context.Context, desired *rows.Set, keep func(externalIDs map[string]string) bool) (Stats, error) {
	cur, err := ownedRows(ctx, r.Client)
	if err != nil {
		return Stats{}, err
	}
	p := newPlan(r.Client, desired, cur, keep)
	units, err := p.build()
	if err != nil {
		return p.stats, err
	}
	max := r.MaxOperations
	if max <= 0 {
		max = DefaultMaxOperations
	}
	for _, txn := range pack(units, max) {
		if _, err := Transact(ctx, r.Client, txn); err != nil {
			return p.stats, fmt.Errorf("apply %d of %d operations: %w", len(txn), p.stats.Operations, err)
		}
		p.stats.Transactions++
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
// (the plan copies a row before changing it). ctx is unused: reading the cache waits on
// nothing.
func ownedRows(_ context.Context, c client.Client) ([]entry, error) {
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

// HasLocalPort reports whether the client's cache holds a switch port ovnk owns like
// want: its name, local (not remote) and with its addresses.
func (r *Reconciler) HasLocalPort(want *nbdb.LogicalSwitchPort) bool {
	rc := r.Client.Cache().Table("Logical_Switch_Port")
	if rc == nil {
		return false
	}
	_, m, err := rc.RowByModel(&nbdb.LogicalSwitchPort{Name: want.Name})
	p, ok := m.(*nbdb.LogicalSwitchPort)
	return err == nil && ok && rows.Owned(p.ExternalIDs) && p.Type == "" && slices.Equal(p.Addresses, want.Addresses)
}

// plan computes the operations of one reconcile.
type plan struct {
	c       client.Client
	keep    func(map[string]string) bool
	desired map[string]entry // by identity
	roots   []entry          // desired root rows, in set order
	current map[string]entry // by identity; the lowest UUID when duplicated
	byUUID  map[string]entry // every owned row
	extra   []entry          // owned duplicates of a current row's identity
	named   int
	stats   Stats
	// planned maps the identity of a desired row that is a weak reference's target to
	// the reference planned for it (its UUID, or the named UUID it is inserted under)
	// and the unit that inserts it.
	planned map[string]plannedRef
	unit    int         // the unit being planned
	movedTo map[int]int // a unit joined into a later one
	taken   []error     // desired roots left out: their unique name is another's
	// replaced holds owned rows deleted in the unit of the row that takes their name.
	replaced map[string]bool
}

type plannedRef struct {
	ref  string
	unit int
	new  bool
}

func newPlan(c client.Client, desired *rows.Set, cur []entry, keep func(map[string]string) bool) *plan {
	p := &plan{c: c, keep: keep, desired: map[string]entry{}, current: map[string]entry{}, byUUID: map[string]entry{}, planned: map[string]plannedRef{}, movedTo: map[int]int{}, replaced: map[string]bool{}}
	// Roots in set order: switches before port groups, whose ports they own.
	for _, t := range rows.Tables {
		for _, m := range t.Models(desired) {
			e := entry{m, t}
			p.desired[e.uuid()] = e
			if t.Root() {
				p.roots = append(p.roots, e)
			}
		}
	}
	// Duplicates resolve the same way every time: the lowest UUID is the one kept.
	uuids := make([]string, len(cur))
	for i, e := range cur {
		uuids[i] = e.uuid()
	}
	order := make([]int, len(cur))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return uuids[order[i]] < uuids[order[j]] })
	for _, i := range order {
		e := cur[i]
		p.byUUID[uuids[i]] = e
		id := e.identity()
		if _, dup := p.current[id]; dup || id == "" {
			p.extra = append(p.extra, e)
			continue
		}
		p.current[id] = e
	}
	p.stats.Owned = len(cur)
	return p
}

func (p *plan) kept(e entry) bool { return p.keep != nil && p.keep(externalIDsOf(e.m)) }

// build returns the operations grouped in units: one per desired root with everything
// below it, and one per owned root to delete.
func (p *plan) build() ([][]ovsdb.Operation, error) {
	var units [][]ovsdb.Operation
	for _, root := range p.roots {
		holder, taken := p.nameHolder(root)
		if taken != nil {
			p.taken = append(p.taken, taken)
			continue
		}
		p.unit = len(units)
		_, ops, err := p.row(root)
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
	units = slices.DeleteFunc(units, func(u []ovsdb.Operation) bool { return u == nil })
	var stale []entry
	for id, e := range p.current {
		if _, want := p.desired[id]; !want && e.t.Root() && !p.kept(e) && !p.replaced[e.uuid()] {
			stale = append(stale, e)
		}
	}
	for _, e := range p.extra {
		if e.t.Root() && !p.replaced[e.uuid()] {
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
		units = append(units, ops)
	}
	return units, nil
}

func (p *plan) count(counter *int, ops []ovsdb.Operation) {
	*counter += len(ops)
	p.stats.Operations += len(ops)
}

// row plans a desired row and its children, children first so every named UUID is
// defined before it is used. It returns the reference to the row: its real UUID if it
// exists, or the named UUID it is inserted under.
func (p *plan) row(want entry) (string, []ovsdb.Operation, error) {
	t := want.t
	refCols := t.Refs()
	var ops []ovsdb.Operation
	childRefs := make([][]string, len(refCols))
	for i, rc := range refCols {
		if rc.Weak {
			continue
		}
		for _, key := range want.refs(i) {
			child, ok := p.desired[key]
			if !ok {
				return "", nil, fmt.Errorf("%s refers to %s, which is not in the desired set", want.describe(), key)
			}
			ref, childOps, err := p.row(child)
			if err != nil {
				return "", nil, err
			}
			childRefs[i] = append(childRefs[i], ref)
			ops = append(ops, childOps...)
		}
	}
	for i, rc := range refCols {
		if !rc.Weak {
			continue
		}
		for _, key := range want.refs(i) {
			pr, ok := p.planned[key]
			if !ok {
				return "", nil, fmt.Errorf("%s refers to %s, which is not in the desired set or is planned after it", want.describe(), key)
			}
			childRefs[i] = append(childRefs[i], pr.ref)
		}
	}

	cur, exists := p.current[want.uuid()]
	if !exists {
		m := t.Clone(want.m)
		p.named++
		name := fmt.Sprintf("new%d", p.named)
		t.SetUUID(m, name)
		for i := range refCols {
			*t.RefField(m, i) = childRefs[i]
		}
		insOps, err := p.c.Create(m)
		if err != nil {
			return "", nil, fmt.Errorf("build insert of %s: %w", want.describe(), err)
		}
		p.count(&p.stats.Inserts, insOps)
		if weakTargets[t.Name()] {
			p.planned[want.uuid()] = plannedRef{ref: name, unit: p.unit, new: true}
		}
		return name, append(ops, insOps...), nil
	}

	uuid := cur.uuid()
	if weakTargets[t.Name()] {
		p.planned[want.uuid()] = plannedRef{ref: uuid, unit: p.unit}
	}
	// Work on a copy: cached rows are shared and must never be modified.
	upd := entry{t.Clone(cur.m), t}
	if fields := t.Changed(upd.m, want.m); len(fields) > 0 {
		updOps, err := p.c.Where(upd.m).Update(upd.m, fields...)
		if err != nil {
			return "", nil, fmt.Errorf("build update of %s: %w", want.describe(), err)
		}
		p.count(&p.stats.Updates, updOps)
		ops = append(ops, updOps...)
	}
	for i := range refCols {
		mutOps, err := p.references(upd, i, childRefs[i])
		if err != nil {
			return "", nil, err
		}
		ops = append(ops, mutOps...)
	}
	return uuid, ops, nil
}

// nameHolder looks, for a desired root not in the NB yet, for the row that already
// holds its indexed name (a port group's, a meter's): inserting it would fail the whole
// transaction. A row of ovnk's under another identity is returned to be replaced; a row
// of another owner is left alone, and the root with it, as a *NameTakenError.
func (p *plan) nameHolder(root entry) (*entry, error) {
	if !root.t.Indexed() {
		return nil, nil
	}
	if _, exists := p.current[root.uuid()]; exists {
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
			pr := p.planned[key]
			if !pr.new {
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
		owned, ours := p.byUUID[ref]
		if ours && !wantSet[ref] && !p.kept(owned) {
			remove = append(remove, ref)
		}
	}
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
