package nbfake_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/nbfake"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestConformance runs every case of conformanceCases on the fake and on a real
// ovsdb-server, each case on new, empty databases, and requires of both the outcome
// the case wants at every step and, at the end, the same rows. Without the OVN root
// it skips, or fails under OVNK_REQUIRE_ALL=1 (see package testenv).
func TestConformance(t *testing.T) {
	for _, tc := range conformanceCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			real := connect(ctx, t, testenv.StartNB(t).Endpoint)
			fake := connect(ctx, t, nbfake.Start(t).Endpoint())
			runSteps(ctx, t, "ovsdb-server", real, tc.steps, "")
			runSteps(ctx, t, "the fake", fake, tc.steps, tc.fakeWant)
			rowsReal, rowsFake := snapshot(ctx, t, real), snapshot(ctx, t, fake)
			switch {
			case tc.fakeDiffers != "":
				t.Logf("known difference: %s\novsdb-server holds:\n%s\nthe fake holds:\n%s", tc.fakeDiffers, rowsReal, rowsFake)
			case rowsReal != rowsFake:
				t.Errorf("the servers hold different rows\novsdb-server:\n%s\nthe fake:\n%s", rowsReal, rowsFake)
			default:
				t.Logf("both hold:\n%s", rowsReal)
			}
		})
	}
}

// TestFakeGivesEveryCaseItsOutcome runs the conformance cases on the fake alone, so
// they run where OVN is not installed.
func TestFakeGivesEveryCaseItsOutcome(t *testing.T) {
	for _, tc := range conformanceCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			runSteps(ctx, t, "the fake", connect(ctx, t, nbfake.Start(t).Endpoint()), tc.steps, tc.fakeWant)
		})
	}
}

// runSteps commits each step's operations through c and requires the step's outcome;
// lastWant, when set, replaces the outcome the last step wants (a known difference).
func runSteps(ctx context.Context, t *testing.T, server string, c client.Client, steps []step, lastWant string) {
	t.Helper()
	for i, s := range steps {
		want := s.want
		if i == len(steps)-1 && lastWant != "" {
			want = lastWant
		}
		if got, details := transact(ctx, c, s.ops); got != want {
			t.Errorf("step %d: %s gave %q (%s), the case wants %q", i, server, got, details, want)
		}
	}
}

func connect(ctx context.Context, t *testing.T, endpoint string) client.Client {
	t.Helper()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{endpoint}, LeaderOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// transact commits ops and returns the outcome in the form steps want, and the
// details of an error.
func transact(ctx context.Context, c client.Client, ops []ovsdb.Operation) (outcome, details string) {
	results, err := ovn.Transact(ctx, c, ops)
	for _, r := range results {
		if r.Error != "" {
			return r.Error, r.Details
		}
	}
	if err != nil {
		return "error", err.Error()
	}
	out := []string{"ok"}
	for i, op := range ops {
		switch op.Op {
		case ovsdb.OperationUpdate, ovsdb.OperationMutate, ovsdb.OperationDelete:
			out = append(out, fmt.Sprintf("count=%d", results[i].Count))
		case ovsdb.OperationSelect:
			out = append(out, fmt.Sprintf("rows=%d", len(results[i].Rows)))
			for _, row := range results[i].Rows {
				out = append(out, "columns="+strings.Join(columnNames(row), ","))
			}
		}
	}
	return strings.Join(out, " "), ""
}

// columnNames lists a row's columns, sorted, without _version: the fake keeps no
// row versions (a known difference, see docs/testing.md).
func columnNames(row ovsdb.Row) []string {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(row)) {
		if name != "_version" {
			names = append(names, name)
		}
	}
	return names
}

// snapshot selects every row of every table in one transaction, so both servers are
// read the same way, and renders them with nbfake.Format.
func snapshot(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	tables := slices.Sorted(maps.Keys(nbdb.Schema().Tables))
	ops := make([]ovsdb.Operation, 0, len(tables))
	for _, table := range tables {
		ops = append(ops, ovsdb.Operation{Op: ovsdb.OperationSelect, Table: table})
	}
	results, err := ovn.Transact(ctx, c, ops)
	if err != nil {
		t.Fatalf("select every table: %v", err)
	}
	rows := map[string][]ovsdb.Row{}
	for i, table := range tables {
		rows[table] = results[i].Rows
	}
	return nbfake.Format(rows)
}
