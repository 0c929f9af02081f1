package ovn_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestDumpHoldsOursAndForeignRows dumps a zone holding ovnk's rows and another
// controller's ACL and address set, and reads the JSON back as a client would.
func TestDumpHoldsOursAndForeignRows(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	requireConverged(ctx, t, r, compile(t, topologytest.Layer3(), "node1").Rows, nil)
	for _, args := range [][]string{
		{"acl-add", "node1", "to-lport", "1000", "ip4.src == $allowed", "allow-related"},
		{"create", "Address_Set", "name=allowed", "addresses=10.244.0.5"},
		{"pg-add", "pg_web", "blue_web"},
	} {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	var d *ovn.Dump
	err := testenv.Eventually(ctx, 10*time.Second, "the foreign rows in the cache", func(ctx context.Context) error {
		var err error
		if d, err = ovn.TakeDump(ctx, c, "node1"); err != nil {
			return err
		}
		if foreign(d.Tables["ACL"], "match", "ip4.src == $allowed") == nil || len(d.Tables["Address_Set"]) != 1 ||
			foreign(d.Tables["Port_Group"], "name", "pg_web") == nil {
			return errNotYet
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		SchemaVersion string                      `json:"schemaVersion"`
		Node          string                      `json:"node"`
		Tables        map[string][]map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != ovn.DumpSchemaVersion || back.Node != "node1" {
		t.Errorf("header: %s %s", back.SchemaVersion, back.Node)
	}
	var router map[string]any
	for _, r := range back.Tables["Logical_Router"] {
		if r["name"] == "ovn_cluster_router" {
			router = r
		}
	}
	if router == nil {
		t.Fatalf("no ovn_cluster_router in %d routers", len(back.Tables["Logical_Router"]))
	}
	ids, _ := router["external_ids"].(map[string]any)
	if ids["k8s.ovn.org/owner-controller"] != "ovnk" || len(router["static_routes"].([]any)) == 0 {
		t.Errorf("router row: %v", router)
	}
	acl := foreign(back.Tables["ACL"], "match", "ip4.src == $allowed")
	if acl["action"] != "allow-related" || acl["direction"] != "to-lport" {
		t.Errorf("ACL row: %v", acl)
	}
	// ovnk's own isolation rows are dumped beside the foreign ones.
	if foreign(back.Tables["Port_Group"], "name", topology.IsolationPortGroup) == nil || len(back.Tables["Meter"]) != 1 {
		t.Errorf("the dump lacks ovnk's port group or meter: %v %v", back.Tables["Port_Group"], back.Tables["Meter"])
	}
}

// foreign returns the first dumped row whose column col equals value, or nil.
func foreign(table []map[string]any, col, value string) map[string]any {
	for _, r := range table {
		if r[col] == value {
			return r
		}
	}
	return nil
}

// TestDumpRowsReadBackTheZone sends a dump through JSON, as kubectl ovnk receives it,
// and checks that its rows print exactly as the live NB's do.
func TestDumpRowsReadBackTheZone(t *testing.T) {
	_, c, ctx := startNB(t)
	requireConverged(ctx, t, &ovn.Reconciler{Client: c}, compile(t, topologytest.OKEP5094(), "ovn-worker").Rows, nil)
	d, err := ovn.TakeDump(ctx, c, "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back ovn.Dump
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.Rows()
	if err != nil {
		t.Fatal(err)
	}
	live, err := ovn.Snapshot(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != live.Len() || got.Len() == 0 {
		t.Fatalf("dump holds %d rows, the NB %d", got.Len(), live.Len())
	}
	var want, have strings.Builder
	if err := nbctl.New(live).Show(&want, ""); err != nil {
		t.Fatal(err)
	}
	if err := nbctl.New(got).Show(&have, ""); err != nil {
		t.Fatal(err)
	}
	if have.String() != want.String() {
		t.Errorf("show of the dump differs from show of the NB:\n%s\n---\n%s", have.String(), want.String())
	}
	back.SchemaVersion = "ovnk.dump/v0"
	if _, err := back.Rows(); err == nil || !strings.Contains(err.Error(), "ovnk.dump/v0") {
		t.Errorf("a dump of another format: %v", err)
	}
}
