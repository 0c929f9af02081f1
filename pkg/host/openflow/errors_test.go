package openflow

import (
	"context"
	"strings"
	"testing"
	"time"
)

// before is what br0 holds when each refused Sync is tried.
var before = state{
	flows: []Flow{
		{Priority: 100, Match: "ip,in_port=1", Actions: "ct(table=1,zone=64000,nat)"},
		{Table: 1, Priority: 0, Actions: "LOCAL"},
	},
	want: []string{
		"priority=100,ip,in_port=1 actions=ct(table=1,zone=64000,nat)",
		"table=1, priority=0 actions=LOCAL",
	},
}

// good is a valid flow that comes before the bad one in each refused set, so a Sync
// that is not atomic would leave it behind.
var good = Flow{Priority: 50, Match: "ipv6,in_port=1", Actions: "ct(table=1,zone=64000,nat)"}

var refused = []struct {
	name string
	bad  Flow
	// ovsSays is in the real error when it is the switch or ovs-ofctl that refuses.
	ovsSays string
}{
	{name: "no actions", bad: Flow{Priority: 1, Match: "ip"}},
	{name: "field without a name", bad: Flow{Priority: 1, Match: "ip,=5", Actions: "drop"}},
	{name: "field without a value", bad: Flow{Priority: 1, Match: "ip,nw_dst=", Actions: "drop"}, ovsSays: "invalid IP address"},
	{name: "malformed value", bad: Flow{Priority: 1, Match: "ip,nw_dst=1.2.3.", Actions: "drop"}, ovsSays: "invalid IP address"},
	{name: "unknown field", bad: Flow{Priority: 1, Match: "ip,bogus=1", Actions: "drop"}, ovsSays: "unknown keyword bogus"},
	{name: "unknown action", bad: Flow{Priority: 1, Match: "ip", Actions: "bogus"}, ovsSays: "unknown action bogus"},
	{name: "field whose prerequisite is missing", bad: Flow{Priority: 1, Match: "nw_dst=192.0.2.1", Actions: "drop"}, ovsSays: normalisedMarker},
	{name: "ct on a match that is not IP", bad: Flow{Priority: 1, Match: "in_port=1", Actions: "ct(commit)"}, ovsSays: "OFPBAC_MATCH_INCONSISTENT"},
	{name: "ct_mark written without commit", bad: Flow{Priority: 1, Match: "ip", Actions: "ct(exec(set_field:1->ct_mark))"}, ovsSays: "requires commit"},
	{name: "drop with another action", bad: Flow{Priority: 1, Match: "ip", Actions: "drop,LOCAL"}, ovsSays: "must not be accompanied"},
	{name: "output to a port that cannot exist", bad: Flow{Priority: 1, Actions: "output:99999"}, ovsSays: "output to unknown port"},
	{name: "port by name", bad: Flow{Priority: 1, Match: "in_port=eth0", Actions: "drop"}, ovsSays: "unknown port"},
	{name: "table 255", bad: Flow{Table: 255, Priority: 1, Actions: "drop"}},
	{name: "flow modification parameter in the match", bad: Flow{Priority: 1, Match: "ip,idle_timeout=5", Actions: "drop"}},
	{name: "a second command smuggled in", bad: Flow{Priority: 1, Actions: "drop\ndelete"}},
	{name: "same match as the good flow", bad: Flow{Priority: 50, Match: "in_port=1,ipv6", Actions: "drop"}},
	// ovs-ofctl parses this, and the switch refuses it inside the bundle: the real
	// bridge shows that the bundle's delete and earlier add are rolled back.
	{name: "the switch refuses it", bad: Flow{Priority: 1, Match: "ip", Actions: "group:99"}, ovsSays: "OFPBAC_BAD_OUT_GROUP"},
}

// TestSyncRefused checks that every refused Sync names the bridge and cookie and
// leaves the bridge exactly as it was, foreign flow included.
func TestSyncRefused(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			be := newBackend(t, kind)
			if _, err := be.b.Sync(ctx, "br0", ours, before.flows); err != nil {
				t.Fatal(err)
			}
			for _, c := range refused {
				changed, err := be.b.Sync(ctx, "br0", ours, []Flow{good, c.bad})
				if err == nil || changed {
					t.Errorf("%s: Sync(%q) = changed %v, err %v; want an error", c.name, c.bad.String(), changed, err)
					continue
				}
				t.Logf("%s: %v", c.name, err)
				if !strings.Contains(err.Error(), "cookie 0xdeff105 on bridge br0") {
					t.Errorf("%s: error does not name the cookie and bridge: %v", c.name, err)
				}
				if kind == "ovs" && c.ovsSays != "" && !strings.Contains(err.Error(), c.ovsSays) {
					t.Errorf("%s: error does not carry ovs-ofctl's %q: %v", c.name, c.ovsSays, err)
				}
				checkFlows(ctx, t, be, c.name, before.want)
			}
		})
	}
}

// TestBadArguments covers what is refused before any flow is looked at.
func TestBadArguments(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			be := newBackend(t, kind)
			flows := []Flow{{Priority: 1, Actions: "drop"}}
			for _, c := range []struct {
				bridge string
				cookie uint64
				want   string
			}{
				{"br-nope", ours, "br-nope"},
				{"unix:/tmp/x", ours, "invalid bridge name"},
				{"-h", ours, "invalid bridge name"},
				{"br0", 0, "cannot be owned"},
				{"br0", ^uint64(0), "cannot be owned"},
			} {
				if _, err := be.b.Sync(ctx, c.bridge, c.cookie, flows); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Sync(%q, %#x) error %v, want one containing %q", c.bridge, c.cookie, err, c.want)
				}
			}
			if _, err := be.b.Flows(ctx, "br-nope", ours); err == nil || !strings.Contains(err.Error(), "br-nope") {
				t.Errorf("Flows(br-nope) error %v, want one naming the bridge", err)
			}
			checkFlows(ctx, t, be, "after bad arguments", nil)
		})
	}
}
