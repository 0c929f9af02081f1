package vswitch_test

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestSetExternalIDs applies a sequence of merges to the Open_vSwitch row, which also
// holds keys someone else set, and checks the row on the server after each.
func TestSetExternalIDs(t *testing.T) {
	l := newLab(t)
	ctx := testCtx(t)
	l.vsctl(t, "set", "Open_vSwitch", ".", "external_ids:foreign=kept", "external_ids:hostname=old")

	node := map[string]string{
		"system-id":                "0b6a5e1c-8e5f-4f8e-9d0a-6c1b2a3d4e5f",
		"hostname":                 "node-1",
		"ovn-encap-type":           "geneve",
		"ovn-encap-ip":             "192.0.2.1",
		"ovn-remote":               "unix:/run/ovn/ovnsb_db.sock",
		"ovn-bridge":               "br-int",
		"ovn-bridge-datapath-type": "netdev",
		"ovn-bridge-mappings":      "physnet:br-ex",
		"ovn-is-interconn":         "true",
	}
	steps := []struct {
		name        string
		set         map[string]string
		wantChanged bool
		want        map[string]string // the whole column afterwards
	}{{
		name:        "node configuration merged, foreign key kept, hostname overwritten",
		set:         node,
		wantChanged: true,
		want:        with(node, map[string]string{"foreign": "kept"}),
	}, {
		name: "same again changes nothing",
		set:  node,
		want: with(node, map[string]string{"foreign": "kept"}),
	}, {
		name:        "a value changed and a key deleted with empty value",
		set:         map[string]string{"ovn-encap-ip": "192.0.2.2", "ovn-is-interconn": ""},
		wantChanged: true,
		want: with(node, map[string]string{
			"foreign": "kept", "ovn-encap-ip": "192.0.2.2", "ovn-is-interconn": "",
		}),
	}, {
		name: "deleting absent keys and repeating values changes nothing",
		set:  map[string]string{"ovn-is-interconn": "", "never-set": "", "hostname": "node-1"},
		want: with(node, map[string]string{
			"foreign": "kept", "ovn-encap-ip": "192.0.2.2", "ovn-is-interconn": "",
		}),
	}}
	for _, step := range steps {
		before := l.c.Transactions()
		changed, err := l.c.SetExternalIDs(ctx, step.set)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if changed != step.wantChanged {
			t.Errorf("%s: changed = %v, want %v", step.name, changed, step.wantChanged)
		}
		wantTxns := uint64(0)
		if step.wantChanged {
			wantTxns = 1
		}
		if sent := l.c.Transactions() - before; sent != wantTxns {
			t.Errorf("%s: sent %d transactions, want %d", step.name, sent, wantTxns)
		}
		want := "external_ids=" + renderMap(step.want)
		if got := l.record(t, "Open_vSwitch", ".", "external_ids"); got != want {
			t.Errorf("%s: server has\n\t%s\nwant\n\t%s", step.name, got, want)
		}
		cached, err := l.c.ExternalIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := renderMap(cached); got != renderMap(step.want) {
			t.Errorf("%s: ExternalIDs() = %s, want %s", step.name, got, renderMap(step.want))
		}
	}

	if _, err := l.c.SetExternalIDs(ctx, map[string]string{"": "x"}); err == nil {
		t.Error("an empty key was accepted")
	}
}

// with returns base with over applied, a key with value "" removed.
func with(base, over map[string]string) map[string]string {
	out := maps.Clone(base)
	for k, v := range over {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// TestExternalIDsWaitForOpenvSwitchRow runs against a database nobody has initialised:
// calls fail, naming the fix, until `ovs-vsctl init` makes the row, and a call that is
// waiting when it appears succeeds.
func TestExternalIDsWaitForOpenvSwitchRow(t *testing.T) {
	root := testenv.NeedOVN(t)
	db := testenv.StartNBFromSchema(t, root.Schema(ovnroot.VSwitchSchema)) // any schema; here Open_vSwitch
	ctx := testCtx(t)
	c, err := vswitch.Connect(ctx, db.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.ExternalIDs(short)
	if err == nil || !strings.Contains(err.Error(), "ovs-vsctl --no-wait init") {
		t.Fatalf("ExternalIDs without an Open_vSwitch row: error %v, want one naming `ovs-vsctl --no-wait init`", err)
	}
	if _, err := c.SetExternalIDs(short, map[string]string{"system-id": "x"}); err == nil {
		t.Fatal("SetExternalIDs without an Open_vSwitch row succeeded")
	}

	type result struct {
		changed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		changed, err := c.SetExternalIDs(ctx, map[string]string{"system-id": "node-1"})
		done <- result{changed, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("SetExternalIDs returned (%v, %v) before the row existed", r.changed, r.err)
	default:
	}
	vsctl, err := root.Program("ovs-vsctl")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, vsctl, "--db="+db.Endpoint, "--no-wait", "init")
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+db.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ovs-vsctl init: %v\n%s", err, out)
	}
	if r := <-done; r.err != nil || !r.changed {
		t.Fatalf("SetExternalIDs waiting for the row: (%v, %v), want (true, nil)", r.changed, r.err)
	}
	ids, err := c.ExternalIDs(ctx)
	if err != nil || ids["system-id"] != "node-1" {
		t.Fatalf("ExternalIDs after init = %v, %v", ids, err)
	}
}
