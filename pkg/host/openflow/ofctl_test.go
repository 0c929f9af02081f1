package openflow

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/testenv"
)

// arpRequest is a broadcast ARP request from 02:00:00:00:00:01 (192.0.2.1) for
// 192.0.2.2, as hex for ovs-ofctl packet-out.
const arpRequest = "ffffffffffff" + "020000000001" + "0806" +
	"0001" + "0800" + "06" + "04" + "0001" +
	"020000000001" + "c0000201" + "000000000000" + "c0000202"

var nPacketsRe = regexp.MustCompile(`n_packets=(\d+)`)

// TestOFCtlRepeatedSyncKeepsCounters shows on the real bridge that a Sync with nothing
// to do leaves our flows alone: their packet counters survive it, while a Sync that
// changes the set re-adds every flow of the cookie and so resets them.
func TestOFCtlRepeatedSyncKeepsCounters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, br := realOFCtl(ctx, t)
	arp := Flow{Priority: 100, Match: "arp,in_port=LOCAL", Actions: "drop"}
	if _, err := o.Sync(ctx, "br0", ours, []Flow{arp}); err != nil {
		t.Fatal(err)
	}
	packets := func() int {
		t.Helper()
		out, err := br.OFCtl(ctx, "dump-flows", fmt.Sprintf("cookie=%#x/-1,arp", ours))
		if err != nil {
			t.Fatal(err)
		}
		m := nPacketsRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no n_packets in %q", out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if _, err := br.OFCtl(ctx, "packet-out", "in_port=LOCAL packet="+arpRequest+" actions=table"); err != nil {
		t.Fatal(err)
	}
	// packet-out returns once the switch took the packet; the counter follows at once
	// on the userspace datapath, but poll rather than assume.
	if err := testenv.Eventually(ctx, 5*time.Second, "the ARP flow to count the packet", func(context.Context) error {
		if n := packets(); n != 1 {
			return fmt.Errorf("n_packets=%d", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if changed, err := o.Sync(ctx, "br0", ours, []Flow{arp}); err != nil || changed {
		t.Fatalf("repeated Sync: changed=%v err=%v", changed, err)
	}
	if n := packets(); n != 1 {
		t.Errorf("after a Sync with nothing to do the ARP flow counts %d packets, want 1: it was rewritten", n)
	}
	// The check above can fail: a Sync that does write resets the counter.
	more := []Flow{arp, {Priority: 1, Actions: "drop"}}
	if changed, err := o.Sync(ctx, "br0", ours, more); err != nil || !changed {
		t.Fatalf("Sync with one more flow: changed=%v err=%v", changed, err)
	}
	if n := packets(); n != 0 {
		t.Errorf("after a Sync that rewrote the cookie's flows the ARP flow counts %d packets, want 0", n)
	}
}
