package ovn_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/test/testenv"
)

// txnSizes are the transaction sizes, in operations, at which the zone of benchScale is
// written below; 0 is the whole zone in one transaction. The cost per row need not be
// the same at every size (ovsdb-server checks and commits a transaction as a whole, and
// its request, reply and monitor update are one JSON document each), so the floor of an
// apply is the fastest of these, not necessarily the single transaction.
var txnSizes = []int{2000, 5000, 20000, 100000, 0}

// sizeName names a sub-benchmark by its size. Sub-benchmark names carry no "-": go test
// appends "-GOMAXPROCS" to them, which benchreport strips at the last "-".
func sizeName(maxOps int) string {
	if maxOps == 0 {
		return "whole"
	}
	return fmt.Sprintf("max=%d", maxOps)
}

// opsLimit is maxOps as the splitters take it: 0 is no limit.
func opsLimit(maxOps int) int {
	if maxOps == 0 {
		return math.MaxInt
	}
	return maxOps
}

// BenchmarkPeerRawZoneSizes writes the zone of BenchmarkPeerRawZone as raw insert
// transactions of at most N operations each, with no diff: the floor for the apply at
// every size. A named UUID holds only inside its transaction, so each transaction is
// a whole number of roots with every row below them (ovn.InsertTransactions, which cuts
// them as the reconciler does); whole is BenchmarkPeerRawZone again, measured in the
// same run as the other sizes. Building the operations is timed, as there.
func BenchmarkPeerRawZoneSizes(b *testing.B) {
	b.Cleanup(func() { resetPeakRSS(b) })
	_, desired := benchScale(b)
	for _, maxOps := range txnSizes {
		b.Run(sizeName(maxOps), func(b *testing.B) {
			benchSized(b, desired, func(ctx context.Context, c client.Client) (int, error) {
				txns, err := ovn.InsertTransactions(c, desired, opsLimit(maxOps))
				if err != nil {
					return 0, err
				}
				for i, ops := range txns {
					if _, err := ovn.Transact(ctx, c, ops); err != nil {
						return 0, fmt.Errorf("raw transaction %d of %d (%d operations): %w", i+1, len(txns), len(ops), err)
					}
				}
				return len(txns), nil
			})
		})
	}
}

// BenchmarkApplyZoneSizes is BenchmarkApplyZone with the reconciler's MaxOperations at
// each size of txnSizes (whole: one transaction), to show which size the agent's
// nb-max-operations should default to and whether splitting beats the single raw
// transaction.
func BenchmarkApplyZoneSizes(b *testing.B) {
	b.Cleanup(func() { resetPeakRSS(b) })
	_, desired := benchScale(b)
	for _, maxOps := range txnSizes {
		b.Run(sizeName(maxOps), func(b *testing.B) {
			benchSized(b, desired, func(ctx context.Context, c client.Client) (int, error) {
				r := &ovn.Reconciler{Client: c, MaxOperations: opsLimit(maxOps)}
				stats, err := r.Reconcile(ctx, desired, nil)
				return stats.Transactions, err
			})
		})
	}
}

// benchSized times write, which puts desired into an empty NB through c and returns
// how many transactions it took, once per iteration; starting the NB and connecting
// are not timed, as in BenchmarkApplyZone and BenchmarkPeerRawZone. Beside the time it
// reports the CPU time ovsdb-server and this process spent: other jobs on the machine
// stretch the time, not the CPU, so the sizes compare by CPU under any load.
func benchSized(b *testing.B, desired *rows.Set, write func(context.Context, client.Client) (int, error)) {
	var total, serverCPU, clientCPU time.Duration
	var txns int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nb := testenv.StartNB(b)
		c := connectStandalone(b, nb)
		// Generous: with other jobs on the 2-core machine, one size of the 250 × 250
		// zone took over 5 minutes.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		server, self := cpuOf(b, nb.Process), selfCPU(b)
		start := time.Now()
		b.StartTimer()
		n, err := write(ctx, c)
		b.StopTimer()
		total += time.Since(start)
		serverCPU += cpuOf(b, nb.Process) - server
		clientCPU += selfCPU(b) - self
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		txns = n
	}
	reportSize(b, desired, total)
	b.ReportMetric(float64(txns), "transactions")
	b.ReportMetric(serverCPU.Seconds()/float64(b.N), "server-cpu-s")
	b.ReportMetric(clientCPU.Seconds()/float64(b.N), "client-cpu-s")
}

// connectStandalone is connect without LeaderOnly. A closed libovsdb client (v0.8.1)
// that watched for leader changes stays reachable, whole cache and all, from its
// watcher goroutine, which nothing ends: the ten sized runs would leave ten zones in
// this process under the benchmarks that follow. A standalone server has no leader to
// watch for.
func connectStandalone(b *testing.B, nb *testenv.NB) client.Client {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(c.Close)
	return c
}

// cpuOf is the CPU time a server has used so far.
func cpuOf(b *testing.B, p *testenv.Process) time.Duration {
	u, err := p.Usage()
	if err != nil {
		b.Fatal(err)
	}
	return u.CPU
}

// selfCPU is the CPU time this process has used so far, every thread and the garbage
// collector's included.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS clears this process's VmHWM. BenchmarkApplyZone, which runs after the
// benchmarks of this file (go test runs files in name order), reports VmHWM as its
// own peak: what these held must not count there.
func resetPeakRSS(b *testing.B) {
	// What the Go runtime holds but no longer uses goes back to the system first, so
	// the peak restarts from what is live.
	debug.FreeOSMemory()
	// "5" resets the peak resident set to the current one (proc(5), clear_refs).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Errorf("reset the peak RSS for the benchmarks after this one: %v", err)
	}
}
