package ovn

import (
	"testing"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// TestIndexWaitsForItsOwnUpdates: reconcile N updates a switch, and the event is still
// in the cache's queue when reconcile N+1 locks the index. Were the index to say it had
// caught up, N+1 would plan against the switch as it was before N's write, and the
// event, taken for N's own when it came, would leave the switch clean: nothing would
// compare it again though N+1's plan never saw what N wrote.
func TestIndexWaitsForItsOwnUpdates(t *testing.T) {
	const table = "Logical_Switch"
	x := emptyIndex()
	before := ownedSwitch("u1", "LS:a")
	x.event(table, nil, before)
	x.clean()
	x.expect([][]ovsdb.Operation{{{Op: ovsdb.OperationUpdate, Table: table,
		Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: "u1"})}}}})
	if x.caughtUp() {
		t.Errorf("the index says it has caught up with the cache while its own update's event is still to come: the next plan compares against %v", x.byUUID["u1"].m)
	}
}

// TestIndexUpdateKeepsAnIdentityListedTwiceBefore: a set that listed a row twice lists
// it once now. update must leave the identity in the index of the desired set, or
// refuse, so that the set is indexed whole.
func TestIndexUpdateKeepsAnIdentityListedTwiceBefore(t *testing.T) {
	m := &nbdb.Meter{UUID: "Meter:a", Name: "a", ExternalIDs: map[string]string{rows.IDKey: "Meter:a"}}
	other := &nbdb.Meter{UUID: "Meter:b", Name: "b", ExternalIDs: map[string]string{rows.IDKey: "Meter:b"}}
	last := &rows.Set{Meters: []*nbdb.Meter{m, other, m}}
	x := indexSet(last)
	next := &rows.Set{Meters: []*nbdb.Meter{m, other}}
	if _, ok := x.update(next, last); ok {
		if _, desired := x.byID["Meter:a"]; !desired {
			t.Errorf("after update, Meter:a is not desired, though next holds it")
		}
	}
}
