package ovn_test

import (
	"fmt"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// TestIndexSharesTheCachesRows: a zone applied from an empty NB reaches the index as
// events, each with a copy of the row the cache stores. Held as they come, every row
// would be in memory twice; the index swaps most of them for the cache's own, and goes
// on following changes made behind ovnk's back to the rows it swapped.
func TestIndexSharesTheCachesRows(t *testing.T) {
	nb, c, ctx := startNB(t)
	const n = 6000
	set := &rows.Set{}
	for i := range n {
		id := fmt.Sprintf("LS:s%04d", i)
		set.Switches = append(set.Switches, &nbdb.LogicalSwitch{UUID: id, Name: fmt.Sprintf("s%04d", i),
			ExternalIDs: map[string]string{rows.OwnerControllerKey: rows.OwnerController, rows.IDKey: id}})
	}
	r := &ovn.Reconciler{Client: c}
	requireConverged(ctx, t, r, set, nil)
	held, shared := r.IndexSharing("Logical_Switch")
	if held != n {
		t.Fatalf("the index holds %d switches, want %d", held, n)
	}
	// Sharing comes once a quarter of the table (and 1024 more) is held as copies: at
	// most that many are left.
	if unshared := held - len(shared); unshared > 1024+n/4 {
		t.Fatalf("the index holds %d of %d switches as copies of the cache's rows, want at most %d", unshared, held, 1024+n/4)
	}

	// A shared row changed behind ovnk's back is still seen, and put back.
	if _, err := nb.NBCtl(ctx, "set", "Logical_Switch", shared[0], "other_config:foreign=yes"); err != nil {
		t.Fatal(err)
	}
	reconcileUntilConverged(ctx, t, r, set, nil)
}
