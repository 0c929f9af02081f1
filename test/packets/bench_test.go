package packets_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/sandbox"
)

// The benchmarks here time what a user waits for on real hosts, each run once per
// iteration (a sandbox takes seconds, and the machine has two cores): test/benchreport
// prints them beside their targets.

// BenchmarkSandboxUp times sandbox.Up from an empty directory to every server ready
// (etcd, the API server, three nodes with their OVS, OVN daemons and agents, the pods
// daemon), with the binaries already built. Tearing down is not timed.
func BenchmarkSandboxUp(b *testing.B) {
	opts := sandboxOptions(b)
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		opts.Dir = sandboxDir(b)
		var progress bytes.Buffer
		opts.Progress = &progress
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		begin := time.Now()
		b.StartTimer()
		_, err := sandbox.Up(ctx, opts)
		b.StopTimer()
		total += time.Since(begin)
		cancel()
		downSandbox(b, opts.Dir)
		if err != nil {
			b.Fatalf("sandbox up: %v\n%s", err, progress.String())
		}
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/up")
}

// rigFirstPingPods is how many pods BenchmarkPodFirstPing creates per iteration; the
// median of their times is reported.
const rigFirstPingPods = 5

// rigFirstPingInterval is the pace of the single pings that look for the first answer.
const rigFirstPingInterval = 20 * time.Millisecond

// BenchmarkPodFirstPing times, for pods created through the API server on the blue
// network, the wait from the create to the first ping a pod on another node gets
// answered: the leader allocates the pod, every zone programs it, the sandbox wires it
// (as kubelet and the CNI would), ovn-controller binds it. The median is the figure.
func BenchmarkPodFirstPing(b *testing.B) {
	r := newBenchRig(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r.networks(ctx)
	const source = "blue/source"
	r.pods(ctx, map[string]string{source: "ovnk-node-1"})
	targets := []string{"ovnk-node-2", "ovnk-node-3"}
	var times []time.Duration
	n := 0
	for b.Loop() {
		for range rigFirstPingPods {
			n++
			name := fmt.Sprintf("target-%d", n)
			d, err := r.firstPing(ctx, source, rigBlue, name, targets[n%len(targets)])
			if err != nil {
				b.Fatal(err)
			}
			times = append(times, d)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Milliseconds()), "ms/first-ping")
	b.ReportMetric(float64(times[len(times)-1].Milliseconds()), "ms/slowest-first-ping")
	b.ReportMetric(float64(len(times)), "pods")
}

// firstPing creates a pod on node and pings it from source every 20 ms, one echo
// request at a time, until one is answered; it returns the time from the create.
func (r *rig) firstPing(ctx context.Context, source, namespace, name, node string) (time.Duration, error) {
	ref := namespace + "/" + name
	begin := time.Now()
	if err := r.createPod(ctx, namespace, name, node); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(rigFirstPingInterval)
	defer tick.Stop()
	var addr netip.Addr
	var last error
	for {
		if !addr.IsValid() {
			// The address is known once the pod is wired; the API's annotation would
			// tell it sooner, but nothing can answer before the wiring anyway.
			addr, last = r.podAddress(ctx, ref, rigUDN)
		}
		if addr.IsValid() {
			if last = r.pingOnce(ctx, sandbox.Target{Pod: source}, addr, rigFirstPingInterval); last == nil {
				return time.Since(begin), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no answer from pod %s on %s within %s: %w", ref, node, time.Since(begin).Round(time.Second), last)
		case <-tick.C:
		}
	}
}

// BenchmarkAgentRestartLoss pings continuously from a pod on ovnk-node-1 to one on
// ovnk-node-2 while ovnk-node-1's agent is killed and started again, and reports the
// echo requests lost (the target is 0) and how long the agent took to be ready again.
func BenchmarkAgentRestartLoss(b *testing.B) {
	r := newBenchRig(b, "--resync-period="+rigResync)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r.networks(ctx)
	addrs := r.pods(ctx, map[string]string{"blue/blue-a": "ovnk-node-1", "blue/blue-b": "ovnk-node-2"})
	from := sandbox.Target{Pod: "blue/blue-a"}
	r.waitPing(ctx, from, addrs["blue/blue-b"])
	lost, sent := 0, 0
	var ready time.Duration
	for b.Loop() {
		p := r.startPinger(ctx, from, addrs["blue/blue-b"])
		begin := time.Now()
		if err := r.s.RestartAgent(ctx, "ovnk-node-1", syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		ready += time.Since(begin)
		// Keep pinging through the restarted agent's first resync as well.
		r.nextReconcile(ctx, "ovnk-node-1", rigMetrics{Reconciles: 1}, time.Minute)
		s, err := p.stop(ctx)
		if err != nil {
			b.Fatal(err)
		}
		lost, sent = lost+s.Lost(), sent+s.Transmitted
	}
	b.ReportMetric(float64(lost), "lost-pings")
	b.ReportMetric(float64(sent), "pings")
	b.ReportMetric(ready.Seconds()/float64(b.N), "s/agent-ready")
}
