package ovn

import (
	"context"
	"fmt"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Snapshot copies the tables of rows.Set from the client's cache. The rows keep their
// real UUIDs, so references between them resolve within the set. The copy is taken
// table by table from a cache that may be updating: callers that need one consistent
// view take it while no transaction is expected, or compare two snapshots.
func Snapshot(ctx context.Context, c client.Client) (*rows.Set, error) {
	s := &rows.Set{}
	for _, t := range rows.Tables {
		if err := c.List(ctx, t.Slice(s)); err != nil {
			return nil, fmt.Errorf("snapshot NB table %s: %w", t.Name(), err)
		}
	}
	s.Sort()
	return s, nil
}

// OwnedSnapshot returns the rows ovnk owns, keyed by identity like the compiler's output:
// printed with package nbctl, a zone's OwnedSnapshot and its compiled rows give the same
// text exactly when the NB holds what the compiler wants. References to rows ovnk does
// not own are left out.
func OwnedSnapshot(ctx context.Context, c client.Client) (*rows.Set, error) {
	owned, err := ownedRows(c)
	if err != nil {
		return nil, err
	}
	identity := make(map[string]string, len(owned))
	for _, e := range owned {
		identity[e.uuid()] = e.identity()
	}
	s := &rows.Set{}
	for _, e := range owned {
		cp := e.t.Clone(e.m)
		e.t.SetUUID(cp, identity[e.uuid()])
		for i := range e.t.Refs() {
			var keys []string
			for _, ref := range e.refs(i) {
				if id, ok := identity[ref]; ok {
					keys = append(keys, id)
				}
			}
			*e.t.RefField(cp, i) = keys
		}
		e.t.Add(s, cp)
	}
	s.Sort()
	return s, nil
}
