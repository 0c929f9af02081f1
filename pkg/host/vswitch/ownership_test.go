package vswitch_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
)

// TestDeletePort deletes one of our internal ports: the Port and its Interface leave the
// database, vswitchd removes the tap device, and deleting again changes nothing.
func TestDeletePort(t *testing.T) {
	l := newBridgeLab(t)
	ctx := testCtx(t)
	for _, name := range []string{"p1", "p2"} {
		if _, err := l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: name, Type: "internal"}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.c.WaitPort(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	l.waitLink(t, "p1")

	if _, err := l.c.DeletePort(ctx, "br-nope", "p1"); err == nil || !strings.Contains(err.Error(), `on bridge "br-int"`) {
		t.Errorf("DeletePort from the wrong bridge: error %v, want one naming br-int", err)
	}
	before := l.c.Transactions()
	changed, err := l.c.DeletePort(ctx, "br-int", "p1")
	if err != nil || !changed {
		t.Fatalf("DeletePort(p1) = %v, %v; want a change", changed, err)
	}
	if sent := l.c.Transactions() - before; sent != 1 {
		t.Errorf("DeletePort sent %d transactions, want 1", sent)
	}
	if got := l.vsctl(t, "list-ports", "br-int"); got != "p2" {
		t.Errorf("ports of br-int: %q, want only p2", got)
	}
	for _, table := range []string{"Port", "Interface"} {
		if got := l.vsctl(t, "--bare", "--columns=name", "find", table, "name=p1"); got != "" {
			t.Errorf("%s p1 is still in the database: %q", table, got)
		}
	}
	if _, found, err := l.c.Port(ctx, "p1"); err != nil || found {
		t.Errorf("Port(p1) after deletion: found = %v, %v", found, err)
	}
	l.waitNoLink(t, "p1")
	l.waitLink(t, "p2")
	noTransaction(t, l.c, "DeletePort(p1) again", func() (bool, error) { return l.c.DeletePort(ctx, "br-int", "p1") })
}

// TestForeignPortIsUntouched makes a port with ovs-vsctl, as an administrator or another
// program would: EnsurePort and DeletePort refuse it with a typed error naming it, send
// nothing, and leave its rows as they were; OwnedPorts lists only ours.
func TestForeignPortIsUntouched(t *testing.T) {
	l := newBridgeLab(t)
	ctx := testCtx(t)
	l.vsctl(t, "add-port", "br-int", "foreign0", "--", "set", "Interface", "foreign0", "type=internal",
		"external_ids:iface-id=theirs", "mtu_request=1300")
	for _, name := range []string{"ours1", "ours0"} {
		if _, err := l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: name, Type: "internal"}); err != nil {
			t.Fatal(err)
		}
	}
	before := l.portRows(t, "foreign0")

	calls := map[string]func() (bool, error){
		"EnsurePort": func() (bool, error) {
			return l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "foreign0", Type: "internal",
				ExternalIDs: map[string]string{"iface-id": "ours"}})
		},
		"DeletePort": func() (bool, error) { return l.c.DeletePort(ctx, "br-int", "foreign0") },
	}
	for name, call := range calls {
		txns := l.c.Transactions()
		changed, err := call()
		var foreign *vswitch.ForeignPortError
		if !errors.As(err, &foreign) || foreign.Port != "foreign0" || foreign.Bridge != "br-int" {
			t.Errorf("%s(foreign0): error %v, want a *ForeignPortError for foreign0 on br-int", name, err)
		} else if !strings.Contains(err.Error(), `"foreign0"`) {
			t.Errorf("%s(foreign0): error %q does not name the port", name, err)
		}
		if changed || l.c.Transactions() != txns {
			t.Errorf("%s(foreign0): changed = %v, %d transactions; want nothing sent", name, changed, l.c.Transactions()-txns)
		}
	}
	if after := l.portRows(t, "foreign0"); after != before {
		t.Errorf("foreign0 changed:\n\tbefore %s\n\tafter  %s", before, after)
	}

	owned, err := l.c.OwnedPorts(ctx, "br-int")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ours0", "ours1"}; !slices.Equal(owned, want) {
		t.Errorf("OwnedPorts(br-int) = %v, want %v (not foreign0, not the bridge's own port)", owned, want)
	}
	if owned, err := l.c.OwnedPorts(ctx, "br-nope"); err != nil || owned != nil {
		t.Errorf("OwnedPorts of a missing bridge = %v, %v; want none", owned, err)
	}

	// BridgePorts lists every port, ours or not, but not the bridge's own.
	all, err := l.c.BridgePorts(ctx, "br-int")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
		if p.Bridge != "br-int" || p.Type != "internal" {
			t.Errorf("BridgePorts: %+v, want an internal port on br-int", p)
		}
	}
	if want := []string{"foreign0", "ours0", "ours1"}; !slices.Equal(names, want) {
		t.Errorf("BridgePorts(br-int) = %v, want %v", names, want)
	}
	if _, err := l.c.BridgePorts(ctx, "br-nope"); err == nil || !strings.Contains(err.Error(), `"br-nope" does not exist`) {
		t.Errorf("BridgePorts of a missing bridge: %v, want an error naming it", err)
	}
}

// TestEnsurePortMovesOurPort ensures one of our ports on another bridge: OVS port names
// are global, so the desired state means "this port, on that bridge", and it moves.
func TestEnsurePortMovesOurPort(t *testing.T) {
	l := newBridgeLab(t)
	ctx := testCtx(t)
	if _, err := l.c.EnsureBridge(ctx, vswitch.Bridge{Name: "br-ex", DatapathType: "netdev"}); err != nil {
		t.Fatal(err)
	}
	p := vswitch.Port{Name: "p0", Type: "internal", MAC: "0a:58:0a:f4:00:07"}
	if _, err := l.c.EnsurePort(ctx, "br-int", p); err != nil {
		t.Fatal(err)
	}
	if changed, err := l.c.EnsurePort(ctx, "br-ex", p); err != nil || !changed {
		t.Fatalf("EnsurePort(p0 on br-ex) = %v, %v; want a change", changed, err)
	}
	if got := l.vsctl(t, "port-to-br", "p0"); got != "br-ex" {
		t.Errorf("p0 is on %q, want br-ex", got)
	}
	if got := l.vsctl(t, "list-ports", "br-int"); got != "" {
		t.Errorf("br-int still has ports %q", got)
	}
	st, err := l.c.WaitPort(ctx, "p0")
	if err != nil || st.Bridge != "br-ex" {
		t.Fatalf("WaitPort(p0) = %+v, %v; want it on br-ex", st, err)
	}
	l.checkTap(t, "p0 on br-ex", "p0", p.MAC, 0)
	noTransaction(t, l.c, "EnsurePort(p0 on br-ex) again", func() (bool, error) { return l.c.EnsurePort(ctx, "br-ex", p) })
}
