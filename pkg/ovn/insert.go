package ovn

import (
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// InsertOps returns the operations inserting every row of s, as one transaction's worth:
// the reconciler's plan against an NB that owns nothing, so parents and children are
// created together under named UUIDs. The set itself is not modified.
func InsertOps(c client.Client, s *rows.Set) ([]ovsdb.Operation, error) {
	units, err := newPlan(c, emptyIndex(), indexSet(s), nil).build(modeFull)
	if err != nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	for _, u := range units {
		ops = append(ops, u...)
	}
	return ops, nil
}
