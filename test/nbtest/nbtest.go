// Package nbtest writes row sets into the real NB servers test/testenv starts and reads
// them back, for tests that hold what ovnk computes against what OVN's own tools make
// of it.
package nbtest

import (
	"context"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/test/testenv"
)

// timeout bounds each helper's work against the NB.
const timeout = 30 * time.Second

// Connect opens a connection of its own to nb, which starts from the whole database
// and so sees every committed row; it is closed when the test ends.
func Connect(t testing.TB, nb *testenv.NB) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// WithNorthd starts an NB with ovn-northd on it and writes s into the NB in one
// transaction, as an agent's first reconcile into an empty NB would.
func WithNorthd(t *testing.T, s *rows.Set) *testenv.Northd {
	t.Helper()
	nb := testenv.StartNB(t)
	northd := testenv.StartNorthd(t, nb)
	c := Connect(t, nb)
	ops, err := ovn.InsertOps(c, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := ovn.Transact(ctx, c, ops); err != nil {
		t.Fatalf("the NB refused the rows: %v", err)
	}
	return northd
}

// Dump reads nb as `ovnk-agent dump` on node would.
func Dump(t testing.TB, nb *testenv.NB, node string) *ovn.Dump {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d, err := ovn.TakeDump(ctx, Connect(t, nb), node)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Snapshot reads nb's rows, with their real UUIDs, as the truth a view must show.
func Snapshot(t testing.TB, nb *testenv.NB) *rows.Set {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := ovn.Snapshot(ctx, Connect(t, nb))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
