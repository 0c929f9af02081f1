package nbfake_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbfake"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// TestReconcilerConvergesOnTheFake reconciles a compiled zone into the fake, then the
// zone without one of its networks: each time the reconciler's client sees the rows
// come back as it wrote them, and a second reconcile with nothing changed sends nothing.
func TestReconcilerConvergesOnTheFake(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nb := nbfake.Start(t)
	r := &ovn.Reconciler{Client: connect(ctx, t, nb.Endpoint())}

	st := topologytest.Layer3()
	first := requireConverged(ctx, t, nb, r, st)
	if first.Inserts == 0 || first.Transactions != 1 {
		t.Errorf("first reconcile: %+v", first)
	}

	st.Networks = st.Networks[1:]
	removed := requireConverged(ctx, t, nb, r, st)
	if removed.Deletes == 0 || removed.Inserts != 0 {
		t.Errorf("removing a network: %+v", removed)
	}
}

// requireConverged compiles node1's zone of st, reconciles it, waits until the owned
// rows in the reconciler's client cache equal it, and requires a further reconcile to
// send nothing. It returns the stats of the first reconcile.
func requireConverged(ctx context.Context, t *testing.T, nb *nbfake.NB, r *ovn.Reconciler, st *cluster.State) ovn.Stats {
	t.Helper()
	zone, err := topology.Compile(st, "node1")
	if err != nil {
		t.Fatal(err)
	}
	if len(zone.NotCompiled) > 0 {
		t.Fatalf("not compiled: %v", zone.NotCompiled)
	}
	stats, err := r.Reconcile(ctx, zone.Rows, nil)
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	want := rowText(t, zone.Rows)
	var got string
	err = poll.Until(ctx, 10*time.Second, "the owned rows in the client cache equal to the zone", func(ctx context.Context) error {
		owned, err := ovn.OwnedSnapshot(ctx, r.Client)
		if err != nil {
			return err
		}
		if got = rowText(t, owned); got != want {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		dump, _ := nb.Dump()
		t.Fatalf("%v\ngot:\n%s\nwant:\n%s\nthe fake holds:\n%s", err, got, want, dump)
	}
	again, err := r.Reconcile(ctx, zone.Rows, nil)
	if err != nil {
		t.Fatalf("reconcile again: %v", err)
	}
	if again.Operations != 0 {
		t.Fatalf("a reconcile with nothing changed sent %d operations: %+v", again.Operations, again)
	}
	return stats
}

func rowText(t *testing.T, s *rows.Set) string {
	t.Helper()
	var b bytes.Buffer
	if err := ovn.WriteRows(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
