package testenv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/testenv"
)

func TestOFProtoTraceTakesAddedFlow(t *testing.T) {
	o := testenv.StartOVS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	brex, err := o.AddBridge(ctx, "brex")
	if err != nil {
		t.Fatal(err)
	}
	peer, err := o.AddBridge(ctx, "brpeer")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.AddPatchPair(ctx, brex, "to-peer", 1, peer, "to-brex", 1); err != nil {
		t.Fatal(err)
	}
	// Only our flows decide: no NORMAL fallback on an empty table.
	if _, err := o.VSCtl(ctx, "set", "Bridge", "brex", "fail_mode=secure"); err != nil {
		t.Fatal(err)
	}
	if _, err := brex.OFCtl(ctx, "del-flows"); err != nil {
		t.Fatal(err)
	}
	const flow = "table=0,priority=100,in_port=1,ip,nw_src=10.244.0.5,pkt_mark=0xc351,actions=mod_nw_src:172.18.0.100,LOCAL"
	if _, err := brex.OFCtl(ctx, "add-flow", flow); err != nil {
		t.Fatal(err)
	}

	flows, err := brex.DumpFlows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 1 || !strings.Contains(flows[0], "nw_src=10.244.0.5") || !strings.Contains(flows[0], "172.18.0.100") {
		t.Fatalf("dump-flows = %q, want the one flow added", flows)
	}

	hit, err := brex.Trace(ctx, "in_port=1,ip,nw_src=10.244.0.5,nw_dst=8.8.8.8,pkt_mark=0xc351")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hit.Output, "priority 100") || hit.DatapathActions == "" || hit.DatapathActions == "drop" ||
		!strings.Contains(hit.FinalFlow, "nw_src=172.18.0.100") {
		t.Errorf("matching packet did not take the flow (final flow %q, datapath actions %q):\n%s", hit.FinalFlow, hit.DatapathActions, hit.Output)
	}

	miss, err := brex.Trace(ctx, "in_port=1,ip,nw_src=10.244.0.6,nw_dst=8.8.8.8,pkt_mark=0xc351")
	if err != nil {
		t.Fatal(err)
	}
	if miss.DatapathActions != "drop" {
		t.Errorf("packet from another source has datapath actions %q, want drop:\n%s", miss.DatapathActions, miss.Output)
	}
}
