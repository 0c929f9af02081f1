package openflow

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestFakeDump checks the whole-bridge listing, cookies included.
func TestFakeDump(t *testing.T) {
	ctx := context.Background()
	f := NewFake("br-ex")
	if _, err := f.Sync(ctx, "br-ex", foreign, []Flow{foreignFlow}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Sync(ctx, "br-ex", ours, []Flow{{Table: 1, Priority: 0, Actions: "LOCAL"}, {Priority: 10, Match: "in_port=1", Actions: "LOCAL"}}); err != nil {
		t.Fatal(err)
	}
	want := " cookie=0x99, priority=5,arp actions=drop\n" +
		" cookie=0xdeff105, priority=10,in_port=1 actions=LOCAL\n" +
		" cookie=0xdeff105, table=1, priority=0 actions=LOCAL\n"
	if got := f.Dump("br-ex"); got != want {
		t.Errorf("Dump:\n%s\nwant:\n%s", got, want)
	}
	if got := f.Writes(); got != 2 {
		t.Errorf("Writes() = %d, want 2", got)
	}
}

// TestFakeStricter pins where the Fake refuses what ovs-ofctl accepts with a surprise
// (keeping the last of two values, ignoring an empty one), and what it does not know.
func TestFakeStricter(t *testing.T) {
	for _, c := range []struct {
		flow Flow
		want string
	}{
		{Flow{Priority: 1, Match: "ct_state=+trk,ct_state=+est", Actions: "drop"}, "given twice"},
		{Flow{Priority: 1, Match: "ct_state=", Actions: "drop"}, "has no value"},
		{Flow{Priority: 1, Match: "ct_state=trk", Actions: "drop"}, "needs + or -"},
		{Flow{Priority: 1, Match: "ip,ipv6", Actions: "drop"}, "two protocols"},
		{Flow{Priority: 1, Match: "dl_src=00:00:00:00:00:0", Actions: "drop"}, "not a MAC address"},
		{Flow{Priority: 1, Match: "reg0=1", Actions: "drop"}, "unknown keyword"},
		{Flow{Priority: 1, Actions: "goto_table:1"}, "unknown action"},
	} {
		_, err := fakeNormalise(c.flow)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.flow.String(), err, c.want)
		}
	}
}

// TestFakeNAT holds the fake's nat to what ovs-ofctl 3.5 accepts and prints: a nat with
// an address needs commit, and an IPv6 address may come in brackets.
func TestFakeNAT(t *testing.T) {
	f := NewFake("br-ex")
	ctx := context.Background()
	ok := []Flow{
		{Priority: 100, Match: "ip,in_port=1", Actions: "ct(commit,zone=64000,nat(src=172.18.0.2),exec(set_field:0x5->ct_mark)),output:2"},
		{Priority: 100, Match: "ipv6,in_port=1", Actions: "ct(commit,zone=64000,nat(src=[fc00::2]),exec(set_field:0x5->ct_mark)),output:2"},
		{Priority: 90, Match: "ip,in_port=2", Actions: "ct(table=1,zone=64000,nat)"},
	}
	if _, err := f.Sync(ctx, "br-ex", 1, ok); err != nil {
		t.Fatal(err)
	}
	got, err := f.Flows(ctx, "br-ex", 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := "priority=100,ipv6,in_port=1 actions=ct(commit,zone=64000,nat(src=fc00::2),exec(set_field:0x5->ct_mark)),output:2"; !slices.Contains(got, want) {
		t.Errorf("flows %q lack %q", got, want)
	}
	bad := []Flow{{Priority: 100, Match: "ip,in_port=1", Actions: "ct(zone=1,nat(src=1.2.3.4)),output:2"}}
	if _, err := f.Sync(ctx, "br-ex", 1, bad); err == nil || !strings.Contains(err.Error(), "need commit") {
		t.Errorf("ct with nat(src=…) but no commit: %v, want it refused", err)
	}
}
