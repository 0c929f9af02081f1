package ovn_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestDumpQueryEqualsTakeDump reads a zone holding ovnk's rows and another controller's
// with the real ovsdb-client, and requires the decoded dump to equal the one a libovsdb
// client takes of the same NB.
func TestDumpQueryEqualsTakeDump(t *testing.T) {
	nb, c, ctx := startNB(t)
	requireConverged(ctx, t, &ovn.Reconciler{Client: c}, compile(t, topologytest.Layer3(), "node1").Rows, nil)
	writeForeignRows(ctx, t, nb)
	got := queryDump(ctx, t, nb, "node1")
	want := freshDump(ctx, t, nb, "node1")
	if len(want.Tables["ACL"]) == 0 || len(want.Tables["Address_Set"]) == 0 || len(want.Tables["Logical_Router"]) == 0 {
		t.Fatalf("the NB lacks the rows the test wrote: %v", want.Tables)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the dump decoded from ovsdb-client differs from TakeDump's:\n got %v\nwant %v", got, want)
	}
}

// TestDumpQueryWithNewerSchema reads an NB created from a newer OVN release's schema
// (26.03, 7.18.0): its rows carry columns the models lack, which the dump leaves out as
// TakeDump does.
func TestDumpQueryWithNewerSchema(t *testing.T) {
	nb := testenv.StartNBFromSchema(t, sharedSchema(t, "ovn-nb-7.18.0.ovsschema"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	writeForeignRows(ctx, t, nb)
	got := queryDump(ctx, t, nb, "node1")
	want := freshDump(ctx, t, nb, "node1")
	if len(want.Tables["Logical_Switch"]) == 0 {
		t.Fatalf("the NB lacks the rows the test wrote: %v", want.Tables)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the dump decoded from ovsdb-client differs from TakeDump's:\n got %v\nwant %v", got, want)
	}
}

func TestDumpQueryOnlyReads(t *testing.T) {
	q, err := ovn.DumpQuery()
	if err != nil {
		t.Fatal(err)
	}
	var params []json.RawMessage
	if err := json.Unmarshal(q, &params); err != nil {
		t.Fatal(err)
	}
	var db string
	if err := json.Unmarshal(params[0], &db); err != nil || db != "OVN_Northbound" {
		t.Errorf("database %s (%v), want OVN_Northbound", params[0], err)
	}
	tables := map[string]bool{}
	for _, p := range params[1:] {
		var op struct {
			Op, Table string
			Where     []any
		}
		if err := json.Unmarshal(p, &op); err != nil {
			t.Fatal(err)
		}
		if op.Op != "select" || op.Where == nil || len(op.Where) != 0 {
			t.Errorf("operation %s is not a select of every row", p)
		}
		tables[op.Table] = true
	}
	for _, want := range []string{"ACL", "Address_Set", "Logical_Router", "Logical_Switch_Port", "Meter"} {
		if !tables[want] {
			t.Errorf("the query does not read table %s: %v", want, tables)
		}
	}
}

func TestDumpFromQueryRefusesWhatIsNotAnAnswer(t *testing.T) {
	n := queryTables(t)
	refused := make([]any, n)
	refused[0] = map[string]string{"error": "syntax error", "details": "No table named ACL."}
	unrun := make([]any, n)
	for i := range unrun {
		unrun[i] = map[string]any{"rows": []any{}}
	}
	unrun[n-1] = nil
	for _, tc := range []struct {
		name   string
		result any
		want   string
	}{
		{"refused select", refused, "the NB refused the select of table ACL: syntax error: No table named ACL."},
		{"operation not run", unrun, "the NB did not run the select of table "},
		{"too few results", []any{map[string]any{"rows": []any{}}}, "the NB answered the dump query of "},
		{"a row without a UUID", withRow(n, map[string]any{"name": "x"}), "NB table ACL row 0: no _uuid"},
		{"a column of the wrong type", withRow(n, map[string]any{"_uuid": []string{"uuid", "8d2d0f43-3f2b-4ad8-a2a8-4d1e1e7c1f00"}, "priority": "high"}), "NB table ACL row 0: table ACL, column priority: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(tc.result)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ovn.DumpFromQuery("node1", data)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want it to start with %q", err, tc.want)
			}
		})
	}
	if _, err := ovn.DumpFromQuery("node1", []byte("ovsdb-client: transaction failed")); err == nil || !strings.Contains(err.Error(), "decode the NB's answer") {
		t.Errorf("output that is not JSON: %v", err)
	}
}

// withRow is an answer to the dump query with one row in the first table's (ACL's)
// result.
func withRow(n int, row map[string]any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"rows": []any{}}
	}
	out[0] = map[string]any{"rows": []any{row}}
	return out
}

// queryTables is how many tables the dump query selects.
func queryTables(t *testing.T) int {
	t.Helper()
	q, err := ovn.DumpQuery()
	if err != nil {
		t.Fatal(err)
	}
	var params []json.RawMessage
	if err := json.Unmarshal(q, &params); err != nil {
		t.Fatal(err)
	}
	return len(params) - 1
}

// writeForeignRows writes, with ovn-nbctl, rows of another controller: an ACL naming an
// address set, the set, a port group, and a switch with a port.
func writeForeignRows(ctx context.Context, t *testing.T, nb *testenv.NB) {
	t.Helper()
	for _, args := range [][]string{
		{"ls-add", "foreign", "--", "lsp-add", "foreign", "foreign-p0", "--", "lsp-set-addresses", "foreign-p0", "0a:58:0a:f4:00:05 10.244.0.5"},
		{"acl-add", "foreign", "to-lport", "1000", "ip4.src == $allowed", "allow-related"},
		{"create", "Address_Set", "name=allowed", "addresses=10.244.0.5,10.244.0.6", "external_ids:owner=other"},
		{"pg-add", "pg_foreign", "foreign-p0"},
	} {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// queryDump reads nb with `ovsdb-client query` and DumpQuery, and decodes the answer.
func queryDump(ctx context.Context, t *testing.T, nb *testenv.NB, node string) *ovn.Dump {
	t.Helper()
	client, err := testenv.NeedOVN(t).Program("ovsdb-client")
	if err != nil {
		t.Fatal(err)
	}
	q, err := ovn.DumpQuery()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, client, "--timeout=30", "query", nb.Endpoint, string(q)).Output()
	if err != nil {
		t.Fatalf("ovsdb-client query: %v", err)
	}
	d, err := ovn.DumpFromQuery(node, out)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// freshDump is TakeDump on a new connection, which starts from the whole database.
func freshDump(ctx context.Context, t *testing.T, nb *testenv.NB, node string) *ovn.Dump {
	t.Helper()
	d, err := ovn.TakeDump(ctx, connect(t, nb), node)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
