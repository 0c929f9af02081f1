package sbchassis

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/test/testenv"
)

// step is one desired state, what a Sync into it from the previous step changes, and
// the chassis the SB then holds.
type step struct {
	name                      string
	desired                   []RemoteChassis
	created, updated, deleted string
	want                      string
}

var steps = []step{
	{name: "nothing wanted, nothing there", want: ""},
	{
		name:    "create two",
		desired: []RemoteChassis{remote("node-b", "host-b", "10.0.0.2"), remote("node-a", "host-a", "10.0.0.1")},
		created: "node-a node-b",
		want: lines(
			"node-a host=host-a owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=true",
			"node-b host=host-b owner=ovnk-agent remote=true encaps=geneve/10.0.0.2/node-b/csum=true"),
	},
	{
		name:    "new hostname",
		desired: []RemoteChassis{remote("node-a", "host-a2", "10.0.0.1"), remote("node-b", "host-b", "10.0.0.2")},
		updated: "node-a",
		want: lines(
			"node-a host=host-a2 owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=true",
			"node-b host=host-b owner=ovnk-agent remote=true encaps=geneve/10.0.0.2/node-b/csum=true"),
	},
	{
		name:    "new encap ip",
		desired: []RemoteChassis{remote("node-a", "host-a2", "10.0.0.1"), remote("node-b", "host-b", "10.0.0.20")},
		updated: "node-b",
		want: lines(
			"node-a host=host-a2 owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=true",
			"node-b host=host-b owner=ovnk-agent remote=true encaps=geneve/10.0.0.20/node-b/csum=true"),
	},
	{
		// Encap's (type, ip) index holds across the transaction only because the
		// replaced Encaps are collected before the server checks it.
		name:    "swap encap ips",
		desired: []RemoteChassis{remote("node-a", "host-a2", "10.0.0.20"), remote("node-b", "host-b", "10.0.0.1")},
		updated: "node-a node-b",
		want: lines(
			"node-a host=host-a2 owner=ovnk-agent remote=true encaps=geneve/10.0.0.20/node-a/csum=true",
			"node-b host=host-b owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-b/csum=true"),
	},
	{
		name:    "add one, remove one, its ip moving to the new one",
		desired: []RemoteChassis{remote("node-b", "host-b", "10.0.0.1"), remote("node-c", "host-c", "10.0.0.20")},
		created: "node-c",
		deleted: "node-a",
		want: lines(
			"node-b host=host-b owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-b/csum=true",
			"node-c host=host-c owner=ovnk-agent remote=true encaps=geneve/10.0.0.20/node-c/csum=true"),
	},
	{name: "remove all", deleted: "node-b node-c", want: ""},
	{
		name:    "re-add",
		desired: []RemoteChassis{remote("node-a", "host-a", "10.0.0.1")},
		created: "node-a",
		want:    "node-a host=host-a owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=true",
	},
	{
		name: "IPv6, IPv4-mapped and no hostname",
		desired: []RemoteChassis{
			remote("node-a", "host-a", "10.0.0.1"), remote("node-d", "", "fd00::4"), remote("node-e", "host-e", "::ffff:10.0.0.5"),
		},
		created: "node-d node-e",
		want: lines(
			"node-a host=host-a owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=true",
			"node-d host= owner=ovnk-agent remote=true encaps=geneve/fd00::4/node-d/csum=true",
			"node-e host=host-e owner=ovnk-agent remote=true encaps=geneve/10.0.0.5/node-e/csum=true"),
	},
}

// TestSync walks the steps in order, checking what each Sync reports, sends and
// leaves in the SB, and that repeating it changes nothing; then replays the steps in
// random order, where only the final state of each is known.
func TestSync(t *testing.T) {
	z := startZone(t)
	for _, st := range steps {
		res, err := z.syncOnce(t, st.desired)
		if err != nil {
			t.Fatalf("%s: Sync: %v", st.name, err)
		}
		checkResult(t, res, st.created, st.updated, st.deleted)
		z.checkDump(t, st.want)
		z.syncAgain(t, st.desired)
		if t.Failed() {
			t.Fatalf("failed at step %q", st.name)
		}
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("random replay seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := 0; i < 3*len(steps); i++ {
		st := steps[r.IntN(len(steps))]
		if _, err := z.syncOnce(t, st.desired); err != nil {
			t.Fatalf("replay %d, %s: Sync: %v", i, st.name, err)
		}
		z.checkDump(t, st.want)
		z.syncAgain(t, st.desired)
		if t.Failed() {
			t.Fatalf("failed at replay %d, step %q (seed %d)", i, st.name, seed)
		}
	}
}

// TestSyncRepairsOurRows changes our rows behind the Syncer's back, as an operator
// with ovn-sbctl might, and expects the next Sync to put them right.
func TestSyncRepairsOurRows(t *testing.T) {
	z := startZone(t)
	desired := []RemoteChassis{remote("node-a", "host-a", "10.0.0.1"), remote("node-b", "host-b", "10.0.0.2")}
	want := lines(
		"node-a host=host-a owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=true",
		"node-b host=host-b owner=ovnk-agent remote=true encaps=geneve/10.0.0.2/node-b/csum=true")
	if _, err := z.syncOnce(t, desired); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	z.sbctl(t, "set", "Encap", z.sbctl(t, "--bare", "--columns=_uuid", "find", "Encap", "chassis_name=node-a"), "options:csum=false")
	z.sbctl(t, "--", "--id=@e", "create", "Encap", "type=vxlan", "ip=10.0.0.99", "chassis_name=node-b",
		"--", "add", "Chassis", "node-b", "encaps", "@e")
	z.sbctl(t, "set", "Chassis", "node-b", "hostname=renamed", "other_config:extra=kept")
	z.checkDump(t, lines(
		"node-a host=host-a owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=false",
		"node-b host=renamed owner=ovnk-agent remote=true encaps=geneve/10.0.0.2/node-b/csum=true,vxlan/10.0.0.99/node-b/"))

	res, err := z.syncOnce(t, desired)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	checkResult(t, res, "", "node-a node-b", "")
	z.checkDump(t, want)
	// Replaced Encaps are gone with the last reference to them.
	if n := len(z.table(t, "Encap", "_uuid")); n != 2 {
		t.Errorf("SB holds %d Encap rows, want 2:\n%s", n, z.sbctl(t, "list", "Encap"))
	}
	// Keys others added to our rows are left alone.
	if got := z.sbctl(t, "get", "Chassis", "node-b", "other_config:extra"); got != "kept" {
		t.Errorf("node-b other_config:extra = %q, want kept", got)
	}
	z.syncAgain(t, desired)
}

// TestSyncRefusesBadInput gives Sync input that must be refused whole: the error
// names the offending value, and nothing is sent, not even the valid chassis.
func TestSyncRefusesBadInput(t *testing.T) {
	z := startZone(t)
	existing := remote("node-a", "host-a", "10.0.0.1")
	if _, err := z.syncOnce(t, []RemoteChassis{existing}); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	state := z.dump(t)
	valid := remote("node-n", "host-n", "10.0.0.14")
	for _, tc := range []struct {
		name    string
		bad     []RemoteChassis
		message string
	}{
		{"empty name", []RemoteChassis{remote("", "host", "10.0.0.9")}, `remote chassis 2 (""): invalid remote chassis: empty name`},
		{"blank name", []RemoteChassis{remote("  ", "host", "10.0.0.9")}, `("  "): invalid remote chassis: empty name`},
		{"zero ip", []RemoteChassis{remote("node-z", "host", "")}, `remote chassis 2 ("node-z"): invalid remote chassis: no encap ip`},
		{"unspecified ip", []RemoteChassis{remote("node-z", "host", "0.0.0.0")}, `encap ip 0.0.0.0 is not a unicast address`},
		{"unspecified IPv6", []RemoteChassis{remote("node-z", "host", "::")}, `encap ip :: is not a unicast address`},
		{"multicast ip", []RemoteChassis{remote("node-z", "host", "239.1.1.1")}, `encap ip 239.1.1.1 is not a unicast address`},
		{"zoned ip", []RemoteChassis{remote("node-z", "host", "fe80::1%eth0")}, `encap ip fe80::1%eth0 has a zone`},
		{"duplicate name", []RemoteChassis{remote("node-a", "host", "10.0.0.9")}, `remote chassis 2 ("node-a"): invalid remote chassis: duplicate name, also chassis 0`},
		{"duplicate ip", []RemoteChassis{remote("node-z", "host", "10.0.0.14")}, `encap ip 10.0.0.14 also given to chassis 1 ("node-n")`},
		{"duplicate ip, once mapped", []RemoteChassis{remote("node-z", "host", "::ffff:10.0.0.1")}, `encap ip 10.0.0.1 also given to chassis 0 ("node-a")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := z.s.transactions
			desired := append([]RemoteChassis{existing, valid}, tc.bad...)
			res, err := z.s.Sync(z.ctx, desired)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Sync(%v) = %v, want an ErrInvalid error", desired, err)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q does not contain %q", err, tc.message)
			}
			if res.Changed() || z.s.transactions != before {
				t.Errorf("refused Sync reported %s and sent %d transactions", res, z.s.transactions-before)
			}
			z.checkDump(t, state)
		})
	}
}

// TestSyncAcrossSBRestart stops the SB under a Syncer: a Sync meanwhile waits for the
// reconnect until its context ends and applies nothing; once the server is back on
// the same database, the client reconnects by itself and Sync works again.
func TestSyncAcrossSBRestart(t *testing.T) {
	z := startZone(t)
	desired := []RemoteChassis{remote("node-a", "host-a", "10.0.0.1"), remote("node-b", "host-b", "10.0.0.2")}
	if _, err := z.syncOnce(t, desired); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	state := z.dump(t)
	sb := z.northd.SB
	sb.Process.Stop()

	ctx, cancel := context.WithTimeout(z.ctx, time.Second)
	defer cancel()
	res, err := z.s.Sync(ctx, desired[:1])
	if !errors.Is(err, context.DeadlineExceeded) || res.Changed() {
		t.Fatalf("Sync while the SB is down = %s, %v; want nothing changed and the deadline exceeded", res, err)
	}

	server, err := testenv.NeedOVN(t).Program("ovsdb-server")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"OVS_RUNDIR=" + sb.Dir, "OVS_DBDIR=" + sb.Dir, "OVS_LOGDIR=" + sb.Dir}
	testenv.StartProcess(t, sb.Dir, "ovsdb-server-sb-again", env, server, filepath.Join(sb.Dir, "sb.db"),
		"--remote=punix:"+sb.Socket, "--unixctl="+filepath.Join(sb.Dir, "sb-again.ctl"),
		"--pidfile="+filepath.Join(sb.Dir, "sb-again.pid"), "--log-file="+filepath.Join(sb.Dir, "sb-again.vlog"))
	if err := testenv.Eventually(z.ctx, 10*time.Second, "the SB back", poll.Dials("unix", sb.Socket)); err != nil {
		t.Fatal(err)
	}
	// The Sync that timed out sent nothing, not even once the server was back.
	z.checkDump(t, state)

	res, err = z.syncOnce(t, desired[:1])
	if err != nil {
		t.Fatalf("Sync after the SB restarted: %v", err)
	}
	checkResult(t, res, "", "", "node-b")
	z.checkDump(t, "node-a host=host-a owner=ovnk-agent remote=true encaps=geneve/10.0.0.1/node-a/csum=true")
	z.syncAgain(t, desired[:1])
}
