package openflow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/golden"
	"github.com/ovnk/ovnk/test/testenv"
)

const (
	ours    uint64 = 0xdeff105
	foreign uint64 = 0x99
)

// foreignFlow stands for another agent's flow on the same bridge; no Sync may touch it.
var foreignFlow = Flow{Priority: 5, Match: "arp", Actions: "drop"}

// backend is one Bridges implementation with a bridge "br0" to program.
type backend struct {
	b      Bridges
	writes func() int // bundles sent (OFCtl) or changes applied (Fake)
}

// newBackend returns the Fake, or an OFCtl on a netdev bridge of a real ovs-vswitchd.
// Either way br0 starts with the foreign flow in place.
func newBackend(t *testing.T, kind string) backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var be backend
	switch kind {
	case "fake":
		f := NewFake("br0")
		be = backend{b: f, writes: f.Writes}
	case "ovs":
		o, br := realOFCtl(ctx, t)
		// Another agent's flow, added the way it would: not through us.
		if _, err := br.OFCtl(ctx, "add-flow", foreignFlow.modLine(foreign)); err != nil {
			t.Fatal(err)
		}
		var bundles atomic.Int64
		real := o.run
		if real == nil {
			real = execRun
		}
		o.run = func(ctx context.Context, env []string, stdin string, argv ...string) (string, string, error) {
			if slices.Contains(argv, "--bundle") {
				bundles.Add(1)
			}
			return real(ctx, env, stdin, argv...)
		}
		return backend{b: o, writes: func() int { return int(bundles.Load()) }}
	}
	if _, err := be.b.Sync(ctx, "br0", foreign, []Flow{foreignFlow}); err != nil {
		t.Fatalf("add the foreign flow: %v", err)
	}
	return be
}

// realOFCtl starts OVS with a netdev bridge br0 and returns an OFCtl for it.
func realOFCtl(ctx context.Context, t *testing.T) (*OFCtl, *testenv.Bridge) {
	t.Helper()
	ovs := testenv.StartOVS(t)
	br, err := ovs.AddBridge(ctx, "br0")
	if err != nil {
		t.Fatal(err)
	}
	// The OVN root's ovs-ofctl, whatever the host has on PATH.
	prog, err := testenv.NeedOVN(t).Program("ovs-ofctl")
	if err != nil {
		t.Fatal(err)
	}
	return &OFCtl{Program: prog, RunDir: ovs.Dir()}, br
}

var kinds = []string{"fake", "ovs"}

// state is one desired set of our flows and how a bridge dumps it.
type state struct {
	name  string
	flows []Flow
	want  []string
}

var states = []state{
	{
		name: "canonical input stays as it is",
		flows: []Flow{
			{Priority: 100, Match: "ip,in_port=1", Actions: "ct(table=1,zone=64000,nat)"},
			{Priority: 100, Match: "ip,in_port=LOCAL", Actions: "ct(commit,zone=64000,exec(set_field:0x2->ct_mark)),output:1"},
			{Priority: 10, Match: "in_port=1", Actions: "LOCAL,output:2"},
			{Table: 1, Priority: 100, Match: "ct_state=+est+trk,ct_mark=0x1", Actions: "output:2"},
			{Table: 1, Priority: 0, Actions: "LOCAL"},
		},
		want: []string{
			"priority=100,ip,in_port=1 actions=ct(table=1,zone=64000,nat)",
			"priority=100,ip,in_port=LOCAL actions=ct(commit,zone=64000,exec(set_field:0x2->ct_mark)),output:1",
			"priority=10,in_port=1 actions=LOCAL,output:2",
			"table=1, priority=100,ct_state=+est+trk,ct_mark=0x1 actions=output:2",
			"table=1, priority=0 actions=LOCAL",
		},
	},
	{
		name: "other spellings are normalised as ovs-ofctl prints them",
		flows: []Flow{
			{Priority: 100, Match: "in_port=1,ip", Actions: "ct(zone=64000,nat,table=1)"},
			{Priority: 100, Match: "in_port=65534,dl_type=0x0800", Actions: "ct(commit,exec(load:2->NXM_NX_CT_MARK[]),zone=64000),output:1"},
			{Priority: 10, Match: "in_port=1", Actions: "output:LOCAL,2"},
			{Table: 1, Priority: 100, Match: "ct_mark=1,ct_state=+trk+est", Actions: "output:2"},
			{Table: 1, Priority: DefaultPriority, Match: "ct_zone=0x10,ct_state=-trk", Actions: "normal"},
			{Table: 3, Priority: DefaultPriority, Actions: "drop"},
			{Priority: 7, Match: "tcp,tp_dst=0x50,nw_dst=10.1.2.3/255.0.0.0,dl_dst=0A:00:00:00:00:01", Actions: "resubmit(,1)"},
			{Priority: 7, Match: "dl_type=0x86dd,nw_proto=58,icmpv6_type=135,ipv6_dst=FD00:0:0::1/128", Actions: "LOCAL"},
			{Priority: 7, Match: "arp,nw_dst=192.0.2.2", Actions: "FLOOD"},
			{Priority: 7, Match: "ip,nw_proto=47,nw_src=192.0.2.0/24", Actions: "in_port"},
		},
		want: []string{
			"priority=100,ip,in_port=1 actions=ct(table=1,zone=64000,nat)",
			"priority=100,ip,in_port=LOCAL actions=ct(commit,zone=64000,exec(set_field:0x2->ct_mark)),output:1",
			"priority=10,in_port=1 actions=LOCAL,output:2",
			"priority=7,arp,arp_tpa=192.0.2.2 actions=FLOOD",
			"priority=7,icmp6,ipv6_dst=fd00::1,icmp_type=135 actions=LOCAL",
			"priority=7,ip,nw_src=192.0.2.0/24,nw_proto=47 actions=IN_PORT",
			"priority=7,tcp,dl_dst=0a:00:00:00:00:01,nw_dst=10.0.0.0/8,tp_dst=80 actions=resubmit(,1)",
			"table=1, ct_state=-trk,ct_zone=16 actions=NORMAL",
			"table=1, priority=100,ct_state=+est+trk,ct_mark=0x1 actions=output:2",
			"table=3, actions=drop",
		},
	},
	{
		name: "one flow changes, one goes",
		flows: []Flow{
			{Priority: 100, Match: "ip,in_port=1", Actions: "ct(table=1,zone=64000,nat)"},
			{Table: 1, Priority: 0, Actions: "drop"},
		},
		want: []string{
			"priority=100,ip,in_port=1 actions=ct(table=1,zone=64000,nat)",
			"table=1, priority=0 actions=drop",
		},
	},
	{name: "nothing wanted removes all our flows"},
}

// TestSync drives each implementation through the states in order, then in a random
// order, checking after every Sync the dump, whether it reported a change, that a
// repeated Sync writes nothing, and that the foreign flow is untouched.
func TestSync(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			be := newBackend(t, kind)
			order := slices.Clone(states)
			seed := uint64(time.Now().UnixNano())
			r := rand.New(rand.NewPCG(seed, seed))
			for range 2 {
				shuffled := slices.Clone(states)
				r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				order = append(order, shuffled...)
			}
			t.Logf("random order from seed %d", seed)
			var prev []string
			for i, st := range order {
				step := fmt.Sprintf("step %d (%s)", i, st.name)
				changed, err := be.b.Sync(ctx, "br0", ours, st.flows)
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				if want := !slices.Equal(prev, st.want); changed != want {
					t.Errorf("%s: Sync reported changed=%v, want %v", step, changed, want)
				}
				checkFlows(ctx, t, be, step, st.want)
				writes := be.writes()
				if changed, err := be.b.Sync(ctx, "br0", ours, st.flows); err != nil || changed {
					t.Errorf("%s: repeated Sync: changed=%v err=%v, want no change", step, changed, err)
				}
				if w := be.writes(); w != writes {
					t.Errorf("%s: repeated Sync wrote to the bridge (%d writes, was %d)", step, w, writes)
				}
				prev = st.want
			}
		})
	}
}

// checkFlows fails unless our flows are want and the foreign flow is still there.
func checkFlows(ctx context.Context, t *testing.T, be backend, step string, want []string) {
	t.Helper()
	got, err := be.b.Flows(ctx, "br0", ours)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if d := golden.Lines(want, got); d != "" {
		t.Errorf("%s: flows of cookie %#x (-want +got):\n%s", step, ours, d)
	}
	other, err := be.b.Flows(ctx, "br0", foreign)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if want := []string{"priority=5,arp actions=drop"}; !slices.Equal(other, want) {
		t.Errorf("%s: foreign flows %q, want %q", step, other, want)
	}
}
