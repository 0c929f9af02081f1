package ovn

import (
	"math"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// InsertOps returns the operations inserting every row of s, as one transaction's worth:
// the reconciler's plan against an NB that owns nothing, so parents and children are
// created together under named UUIDs. The set itself is not modified.
func InsertOps(c client.Client, s *rows.Set) ([]ovsdb.Operation, error) {
	txns, err := InsertTransactions(c, s, math.MaxInt)
	if err != nil || len(txns) == 0 {
		return nil, err
	}
	return txns[0], nil
}

// InsertTransactions returns the same operations as InsertOps, split as the reconciler
// splits a diff: transactions of at most maxOps operations, each a whole number of
// roots with every row below them (a unit larger than maxOps travels alone). A named
// UUID holds only inside its transaction, so this is the only way to cut them that
// leaves each transaction valid on its own.
func InsertTransactions(c client.Client, s *rows.Set, maxOps int) ([][]ovsdb.Operation, error) {
	units, err := newPlan(c, emptyIndex(), indexSet(s), nil).build(modeFull)
	if err != nil {
		return nil, err
	}
	return pack(units, maxOps), nil
}
