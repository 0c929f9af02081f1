package vswitch_test

import (
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
)

// TestEnsureBridge applies a sequence of bridge settings, to a bridge of ours and to one
// someone else made with ovs-vsctl, and checks the rows on the server after each.
func TestEnsureBridge(t *testing.T) {
	l := newLab(t)
	ctx := testCtx(t)
	l.vsctl(t, "add-br", "br-ex", "--", "set", "Bridge", "br-ex", "datapath_type=netdev", "other_config:foreign=kept")

	const cols = "datapath_type,fail_mode,other_config,external_ids"
	steps := []struct {
		name        string
		bridge      vswitch.Bridge
		wantChanged bool
		want        string // record(Bridge, name, cols)
	}{{
		name: "br-int created",
		bridge: vswitch.Bridge{Name: "br-int", DatapathType: "netdev", FailMode: "secure",
			OtherConfig: map[string]string{"disable-in-band": "true"}},
		wantChanged: true,
		want:        "datapath_type=netdev fail_mode=secure other_config={disable-in-band=true} external_ids={ovnk.io/owner=ovnk-agent}",
	}, {
		name: "br-int again changes nothing",
		bridge: vswitch.Bridge{Name: "br-int", DatapathType: "netdev", FailMode: "secure",
			OtherConfig: map[string]string{"disable-in-band": "true"}},
		want: "datapath_type=netdev fail_mode=secure other_config={disable-in-band=true} external_ids={ovnk.io/owner=ovnk-agent}",
	}, {
		name:        "br-int: a key added, unnamed settings kept",
		bridge:      vswitch.Bridge{Name: "br-int", OtherConfig: map[string]string{"hwaddr": "0a:58:0a:f4:00:01"}},
		wantChanged: true,
		want:        "datapath_type=netdev fail_mode=secure other_config={disable-in-band=true, hwaddr=0a:58:0a:f4:00:01} external_ids={ovnk.io/owner=ovnk-agent}",
	}, {
		name:        "br-int: fail mode changed, a key deleted",
		bridge:      vswitch.Bridge{Name: "br-int", FailMode: "standalone", OtherConfig: map[string]string{"disable-in-band": ""}},
		wantChanged: true,
		want:        "datapath_type=netdev fail_mode=standalone other_config={hwaddr=0a:58:0a:f4:00:01} external_ids={ovnk.io/owner=ovnk-agent}",
	}, {
		name:        "foreign br-ex: only the given key is set, nothing is tagged",
		bridge:      vswitch.Bridge{Name: "br-ex", DatapathType: "netdev", OtherConfig: map[string]string{"hwaddr": "0a:58:c0:00:02:01"}},
		wantChanged: true,
		want:        "datapath_type=netdev fail_mode=[] other_config={foreign=kept, hwaddr=0a:58:c0:00:02:01} external_ids={}",
	}, {
		name:   "foreign br-ex again changes nothing",
		bridge: vswitch.Bridge{Name: "br-ex", DatapathType: "netdev", OtherConfig: map[string]string{"hwaddr": "0a:58:c0:00:02:01"}},
		want:   "datapath_type=netdev fail_mode=[] other_config={foreign=kept, hwaddr=0a:58:c0:00:02:01} external_ids={}",
	}}
	for _, step := range steps {
		before := l.c.Transactions()
		changed, err := l.c.EnsureBridge(ctx, step.bridge)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if changed != step.wantChanged {
			t.Errorf("%s: changed = %v, want %v", step.name, changed, step.wantChanged)
		}
		if sent, want := l.c.Transactions()-before, txns(step.wantChanged); sent != want {
			t.Errorf("%s: sent %d transactions, want %d", step.name, sent, want)
		}
		if got := l.record(t, "Bridge", step.bridge.Name, strings.Split(cols, ",")...); got != step.want {
			t.Errorf("%s: server has\n\t%s\nwant\n\t%s", step.name, got, step.want)
		}
	}

	// As add-br makes it: the bridge's own port, holding an internal interface of the
	// same name, referenced from the Open_vSwitch row; and vswitchd made its tap device.
	// (ovs-vsctl's port commands hide a bridge's local port, so the rows are read.)
	port, iface := l.vsctl(t, "get", "Port", "br-int", "_uuid"), l.vsctl(t, "get", "Interface", "br-int", "_uuid")
	if got, want := l.record(t, "Bridge", "br-int", "ports"), "ports="+port; got != want {
		t.Errorf("bridge br-int: %s, want %s (its Port br-int)", got, want)
	}
	if got, want := l.record(t, "Port", "br-int", "interfaces"), "interfaces="+iface; got != want {
		t.Errorf("port br-int: %s, want %s (its Interface br-int)", got, want)
	}
	if got := l.record(t, "Interface", "br-int", "type"); got != "type=internal" {
		t.Errorf("interface br-int: %s, want type=internal", got)
	}
	if got := l.vsctl(t, "list-br"); got != "br-ex\nbr-int" {
		t.Errorf("ovs-vsctl list-br = %q, want br-ex and br-int", got)
	}
	l.waitLink(t, "br-int")
	// The bridge's local port is the bridge's, not one of "our ports" a resync deletes.
	if owned, err := l.c.OwnedPorts(ctx, "br-int"); err != nil || len(owned) != 0 {
		t.Errorf("OwnedPorts(br-int) = %v, %v; want none (the local port belongs to the bridge)", owned, err)
	}
}

// txns is how many transactions a call should send.
func txns(changed bool) uint64 {
	if changed {
		return 1
	}
	return 0
}

// TestInvalidConfigurationIsRejected checks what is refused before anything is sent.
func TestInvalidConfigurationIsRejected(t *testing.T) {
	l := newLab(t)
	ctx := testCtx(t)
	if _, err := l.c.EnsureBridge(ctx, vswitch.Bridge{Name: "br-int", DatapathType: "netdev"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func() (bool, error)
		want string // in the error
	}{
		{"bridge without a name", func() (bool, error) { return l.c.EnsureBridge(ctx, vswitch.Bridge{}) }, "empty name"},
		{"bridge name too long for a device", func() (bool, error) {
			return l.c.EnsureBridge(ctx, vswitch.Bridge{Name: "br-0123456789abc"})
		}, `"br-0123456789abc"`},
		{"unknown fail mode", func() (bool, error) {
			return l.c.EnsureBridge(ctx, vswitch.Bridge{Name: "br-int", FailMode: "open"})
		}, `fail mode "open"`},
		{"empty other_config key", func() (bool, error) {
			return l.c.EnsureBridge(ctx, vswitch.Bridge{Name: "br-int", OtherConfig: map[string]string{"": "x"}})
		}, "empty key"},
		{"port on a missing bridge", func() (bool, error) {
			return l.c.EnsurePort(ctx, "br-nope", vswitch.Port{Name: "p0", Type: "internal"})
		}, `bridge "br-nope" does not exist`},
		{"the bridge's own port", func() (bool, error) {
			return l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "br-int", Type: "internal"})
		}, "EnsureBridge manages"},
		{"system port name too long for a device", func() (bool, error) {
			return l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "0123456789abcdef"})
		}, "at most 15 bytes"},
		{"bad MAC", func() (bool, error) {
			return l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "p0", Type: "internal", MAC: "0a:58"})
		}, `MAC "0a:58"`},
		{"negative MTU", func() (bool, error) {
			return l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "p0", Type: "internal", MTURequest: -1})
		}, "negative MTU"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := l.c.Transactions()
			changed, err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if changed || l.c.Transactions() != before {
				t.Errorf("changed = %v after %d transactions; want nothing sent", changed, l.c.Transactions()-before)
			}
		})
	}
	// A patch port's name is no device's, so it may be long (ovn-controller's are).
	if _, err := l.c.EnsurePort(ctx, "br-int", vswitch.Port{Name: "patch-br-int-to-br-ex", Type: "patch",
		Options: map[string]string{"peer": "patch-br-ex-to-br-int"}}); err != nil {
		t.Errorf("long patch port name refused: %v", err)
	}
}
