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
	"github.com/ovnk/ovnk/test/sandboxtest"
)

// The benchmarks here time what a user waits for on real hosts, each run once per
// iteration (a sandbox takes seconds, and the machine has two cores): test/benchreport
// prints them beside their targets.

// BenchmarkSandboxUp times sandbox.Up from an empty directory to a ready cluster (the
// control plane; three nodes with their OVS, OVN, containerd and kubelet; the images
// written and imported; the agent installed and ready on every node), with the
// binaries already built: the cold start. Then Up again on the running cluster, which
// checks it and changes nothing: the warm start of a second `make demo`. Tearing down
// is not timed.
func BenchmarkSandboxUp(b *testing.B) {
	opts := sandboxtest.Options(b)
	var total, again time.Duration
	for b.Loop() {
		b.StopTimer()
		opts.Dir = sandboxtest.Dir(b)
		var progress bytes.Buffer
		opts.Progress = &progress
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		begin := time.Now()
		b.StartTimer()
		_, err := sandbox.Up(ctx, opts)
		b.StopTimer()
		total += time.Since(begin)
		if err == nil {
			begin = time.Now()
			_, err = sandbox.Up(ctx, opts)
			again += time.Since(begin)
		}
		cancel()
		sandboxtest.Down(b, opts.Dir)
		if err != nil {
			b.Fatalf("sandbox up: %v\n%s", err, progress.String())
		}
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/up")
	b.ReportMetric(again.Seconds()/float64(b.N), "s/up-again")
}

// rigFirstPingPods is how many pods BenchmarkPodFirstPing creates per iteration; the
// median and the 95th percentile of their times are reported.
const rigFirstPingPods = 100

// rigFirstPingInterval is the pace of the single pings that look for the first answer.
const rigFirstPingInterval = 20 * time.Millisecond

// BenchmarkPodFirstPing times, for pods created one after the other through the API
// server on the blue network, the wait from the create to the pod running with its
// network (its address on ovn-udn1 seen from inside it), and to the first ping a pod on
// another node gets answered: the scheduler places it, the leader allocates it, every
// zone programs it, kubelet has containerd start it, ovnk-cni wires it and waits for
// ovn-controller to bind it. The median and the 95th percentile are the figures.
func BenchmarkPodFirstPing(b *testing.B) {
	r := newBenchRig(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r.networks(ctx)
	const source = "blue/source"
	r.pods(ctx, map[string]string{source: "ovnk-node-1"})
	targets := []string{"ovnk-node-2", "ovnk-node-3"}
	var running, pinged []time.Duration
	n := 0
	for b.Loop() {
		for range rigFirstPingPods {
			n++
			name := fmt.Sprintf("target-%d", n)
			wired, answered, err := r.firstPing(ctx, source, rigBlue, name, targets[n%len(targets)])
			if err != nil {
				b.Fatal(err)
			}
			running, pinged = append(running, wired), append(pinged, answered)
		}
	}
	slices.Sort(running)
	slices.Sort(pinged)
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) }
	b.ReportMetric(ms(running[len(running)/2]), "ms/running")
	b.ReportMetric(ms(running[len(running)*95/100]), "ms/p95-running")
	b.ReportMetric(ms(pinged[len(pinged)/2]), "ms/first-ping")
	b.ReportMetric(ms(pinged[len(pinged)*95/100]), "ms/p95-first-ping")
	b.ReportMetric(ms(pinged[len(pinged)-1]), "ms/slowest-first-ping")
	b.ReportMetric(float64(len(pinged)), "pods")
}

// firstPing creates a pod on node and pings it from source every 20 ms, one echo
// request at a time, until one is answered; it returns the times from the create to
// the pod's address being there inside it, and to the answer.
func (r *rig) firstPing(ctx context.Context, source, namespace, name, node string) (wired, answered time.Duration, _ error) {
	ref := namespace + "/" + name
	begin := time.Now()
	if err := r.createPod(ctx, namespace, name, node); err != nil {
		return 0, 0, err
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
			if addr, last = r.podAddress(ctx, ref, rigUDN); addr.IsValid() {
				wired = time.Since(begin)
			}
		}
		if addr.IsValid() {
			if last = r.pingOnce(ctx, sandbox.Target{Pod: source}, addr, rigFirstPingInterval); last == nil {
				return wired, time.Since(begin), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("no answer from pod %s on %s within %s: %w", ref, node, time.Since(begin).Round(time.Second), last)
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
