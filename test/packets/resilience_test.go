package packets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cli/statuscmd"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// rigResync is the agents' --resync-period in these tests: short, so that "the
// agent's next reconcile" comes within seconds, and every agent keeps proving that a
// reconcile of an unchanged zone writes nothing while the pings run.
const rigResync = "3s"

// rigPath is what a continuous ping goes through: from a pod or a node to an address.
type rigPath struct {
	what string
	from sandbox.Target
	to   netip.Addr
}

// rigRestartPods are the pods of the restart test: ovnk-node-1 holds one end of every
// path, so its agent is the one restarted.
var rigRestartPods = map[string]string{
	"blue/blue-a":   "ovnk-node-1",
	"blue/blue-b":   "ovnk-node-2",
	"green/green-a": "ovnk-node-1",
	"green/green-b": "ovnk-node-3",
}

// rigRestartPaths are the paths of the restart test, one through each part of the
// dataplane the node's agent programs or reads: pods across zones on the Layer3
// network (remote chassis, transit switch), on the Layer2 network through the transit
// router, a pod to the outside world (the gateway router and br-ex's flows), and the
// node to its pod (the management port's addresses and routes).
func rigRestartPaths(ctx context.Context, r *rig, addrs map[string]netip.Addr) []rigPath {
	r.tb.Helper()
	podEth0, err := r.podAddress(ctx, "blue/blue-a", "eth0")
	if err != nil {
		r.fatalf("%v", err)
	}
	return []rigPath{
		{"blue (Layer3) across zones", sandbox.Target{Pod: "blue/blue-a"}, addrs["blue/blue-b"]},
		{"green (Layer2) through the transit router", sandbox.Target{Pod: "green/green-a"}, addrs["green/green-b"]},
		{"blue to the outside world through br-ex", sandbox.Target{Pod: "blue/blue-a"}, rigOutside(r)},
		{"the node to its pod through the management port", sandbox.Target{Node: "ovnk-node-1"}, podEth0},
	}
}

// rigOutside is the outside host's address: its who-am-i server's.
func rigOutside(r *rig) netip.Addr {
	r.tb.Helper()
	u, err := url.Parse(r.s.WhoAmIURL)
	if err != nil {
		r.fatalf("who-am-i URL %q: %v", r.s.WhoAmIURL, err)
	}
	a, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		r.fatalf("who-am-i URL %q: %v", r.s.WhoAmIURL, err)
	}
	return a
}

// TestAgentRestartKeepsTraffic pings continuously along paths through a node while its
// agent goes away and comes back, twice: killed (SIGKILL, as a crash or an OOM kill:
// kubelet restarts the container), then its pod deleted (as `kubectl delete pod`: the
// DaemonSet starts a new one). The dataplane belongs to OVS, ovn-controller and the
// kernel, and an agent that comes back finds everything as it wants it and must write
// nothing — not to the NB, not to OpenFlow, not to the kernel.
func TestAgentRestartKeepsTraffic(t *testing.T) {
	r := newRig(t, "--resync-period="+rigResync)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const victim = "ovnk-node-1"

	r.networks(ctx)
	paths := rigRestartPaths(ctx, r, r.pods(ctx, rigRestartPods))
	for _, p := range paths {
		r.waitPing(ctx, p.from, p.to)
	}
	// Settled: a whole reconcile of the victim's zone that wrote nothing.
	rigSettled(t, r, ctx, victim)

	// What the agent programs on the node, watched: an agent that comes back to a
	// node as it wants it writes nothing there either. (br-int is ovn-controller's, and
	// changes by itself: the MAC bindings it learns from other nodes' gateway routers.)
	watches := []*rigWatch{
		r.watchFlows(ctx, victim, sandbox.GatewayBridge),
		r.watchKernel(ctx, victim),
	}
	pingers := make([]*rigPinger, len(paths))
	for i, p := range paths {
		pingers[i] = r.startPinger(ctx, p.from, p.to)
	}
	for round, how := range []struct {
		sig  syscall.Signal
		what string
	}{{syscall.SIGKILL, "its process killed"}, {syscall.SIGTERM, "its pod deleted"}} {
		round++
		begin := time.Now()
		if err := r.s.RestartAgent(ctx, victim, how.sig); err != nil {
			t.Fatalf("restart %d of the agent of %s (%s): %v", round, victim, how.what, err)
		}
		ready := time.Since(begin)
		// The restarted agent's metrics start from zero: every write it made since
		// is counted, the reconcile that made it ready and the resync after it.
		m := r.nextReconcile(ctx, victim, rigMetrics{Reconciles: 1}, time.Minute)
		t.Logf("restart %d: the agent of %s was ready again %s after %s; %d reconciles since (%d failed), %d NB write operations",
			round, victim, ready.Round(time.Millisecond), how.what, m.Reconciles, m.Errors, m.Writes)
		if m.Writes != 0 {
			t.Errorf("restart %d: the restarted agent of %s wrote %d operations to an NB that already held its zone, want 0", round, victim, m.Writes)
		}
		if m.Errors != 0 {
			t.Errorf("restart %d: %d of the restarted agent's reconciles failed", round, m.Errors)
		}
	}
	for _, w := range watches {
		if changes := w.stop(); len(changes) > 0 {
			t.Errorf("the %s changed across the agent's restarts:\n%s", w.what, strings.Join(changes, "\n"))
		}
	}
	for i, p := range pingers {
		s, err := p.stop(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (%s -> %s): %s", paths[i].what, p.from, p.to, s.Line)
		if s.Lost() != 0 || s.Transmitted == 0 {
			t.Errorf("%s: %s -> %s lost %d of %d echo requests across two agent restarts, want 0:\n%s",
				paths[i].what, p.from, p.to, s.Lost(), s.Transmitted, strings.Join(s.Unanswered, "\n"))
		}
	}
}

// rigSettled waits until node's agent has done a reconcile that wrote nothing.
func rigSettled(t *testing.T, r *rig, ctx context.Context, node string) {
	t.Helper()
	before, err := r.metrics(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		after := r.nextReconcile(ctx, node, before, time.Minute)
		if after.Writes == before.Writes && after.Reconciles == before.Reconciles+1 {
			return
		}
		before = after
	}
	t.Fatalf("the zone of %s does not settle: every reconcile writes to its NB", node)
}

// rigStatus runs `kubectl ovnk status -o json`.
func (r *rig) rigStatus(ctx context.Context) (statuscmd.Report, error) {
	out, err := r.run(ctx, "ovnk", "status", "-o", "json")
	if err != nil {
		return statuscmd.Report{}, err
	}
	var rep statuscmd.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return statuscmd.Report{}, fmt.Errorf("status -o json: %w\n%s", err, out)
	}
	return rep, nil
}

func rigStatusNode(rep statuscmd.Report, name string) (statuscmd.NodeStatus, bool) {
	for _, n := range rep.Nodes {
		if n.Node == name {
			return n, true
		}
	}
	return statuscmd.NodeStatus{}, false
}

// TestNodeWithoutOVSIsReported stops one node's Open_vSwitch database: kubectl ovnk
// status must say, for that node, that its agent cannot reach OVS and why, while the
// pods of the other nodes keep talking across their zones without losing a packet.
func TestNodeWithoutOVSIsReported(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const broken = "ovnk-node-3"
	r.networks(ctx)
	addrs := r.pods(ctx, map[string]string{
		"blue/blue-a":   "ovnk-node-1",
		"blue/blue-b":   "ovnk-node-2",
		"green/green-a": "ovnk-node-1",
		"green/green-b": "ovnk-node-2",
		"green/green-c": broken,
	})
	healthy := []rigPath{
		{"blue (Layer3) across zones", sandbox.Target{Pod: "blue/blue-a"}, addrs["blue/blue-b"]},
		{"green (Layer2) through the transit router", sandbox.Target{Pod: "green/green-a"}, addrs["green/green-b"]},
	}
	for _, p := range healthy {
		r.waitPing(ctx, p.from, p.to)
	}
	// The broken node took part: its pod answered before its OVS went away.
	r.waitPing(ctx, sandbox.Target{Pod: "green/green-a"}, addrs["green/green-c"])
	rep, err := r.rigStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := rigStatusNode(rep, broken); !n.Ready || n.LastError != "" {
		t.Fatalf("before its OVS stopped, the agent of %s is not ready or has an error: %+v", broken, n)
	}
	pingers := make([]*rigPinger, len(healthy))
	for i, p := range healthy {
		pingers[i] = r.startPinger(ctx, p.from, p.to)
	}

	r.stopOVSDB(ctx, broken)
	stopped := time.Now()
	var last statuscmd.NodeStatus
	err = testenv.Eventually(ctx, time.Minute, "kubectl ovnk status to report the Open_vSwitch database of "+broken, func(ctx context.Context) error {
		rep, err := r.rigStatus(ctx)
		if err != nil {
			return err
		}
		n, ok := rigStatusNode(rep, broken)
		if !ok {
			return fmt.Errorf("status has no node %s", broken)
		}
		last = n
		// The agent names the endpoint it uses, the DaemonSet's: the node's database
		// seen from inside the node.
		if n.Ready || !strings.Contains(n.LastError, manifests.AgentOVSAddress) {
			return fmt.Errorf("the agent of %s is ready=%v (%s) with last error %q, want not ready and an error naming %s",
				broken, n.Ready, n.NotReadyReason, n.LastError, manifests.AgentOVSAddress)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after its Open_vSwitch database stopped, status shows %s ready=%v %q, last error %q",
		time.Since(stopped).Round(100*time.Millisecond), broken, last.Ready, last.NotReadyReason, last.LastError)
	if !strings.Contains(last.NotReadyReason, "Open vSwitch database") {
		t.Errorf("the agent of %s is not ready for another reason: %q", broken, last.NotReadyReason)
	}
	if !strings.Contains(last.LastError, "is unreachable: dial: connect: ") {
		t.Errorf("the last error of %s does not say why its OVS database is unreachable: %q", broken, last.LastError)
	}

	// The table, as a user sees it, and the exit codes: status shows and exits 0
	// whatever it finds; --wait fails exactly when something is not ready.
	table, err := r.run(ctx, "ovnk", "status")
	if err != nil {
		t.Errorf("kubectl ovnk status failed, want it to print the status and exit 0: %v", err)
	}
	t.Logf("kubectl ovnk status:\n%s", table)
	row := ""
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, broken+" ") {
			row = line
		}
	}
	// Piped, the row is whole: its REASON says why, once (the lines under the table no
	// longer repeat it).
	if why := "cannot reach its node's Open vSwitch database"; !strings.Contains(row, "not ready") || !strings.Contains(row, why) {
		t.Errorf("the status table's row of %s does not say not ready, %q: %q", broken, why, row)
	}
	rep, err = r.rigStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Nodes {
		if n.Node != broken && (!n.Ready || n.LastError != "") {
			t.Errorf("the agent of %s, whose OVS runs, is ready=%v (%s) with last error %q", n.Node, n.Ready, n.NotReadyReason, n.LastError)
		}
	}
	_, waitErr := r.run(ctx, "ovnk", "status", "--wait", "--timeout", "3s")
	if rep.Ready || waitErr == nil || !strings.Contains(waitErr.Error(), "agent on "+broken) {
		t.Errorf("status says ready=%v, and status --wait returned %v; want not ready and --wait failing on the agent of %s", rep.Ready, waitErr, broken)
	}
	t.Logf("status --wait: %v", waitErr)

	for i, p := range pingers {
		s, err := p.stop(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (%s -> %s) while %s had no OVS database: %s", healthy[i].what, p.from, p.to, broken, s.Line)
		if s.Lost() != 0 || s.Transmitted == 0 {
			t.Errorf("%s: %s -> %s lost %d of %d echo requests while %s had no OVS database, want 0:\n%s",
				healthy[i].what, p.from, p.to, s.Lost(), s.Transmitted, broken, strings.Join(s.Unanswered, "\n"))
		}
	}
}
