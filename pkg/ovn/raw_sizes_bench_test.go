package ovn_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/test/testenv"
)

// txnSizes are the transaction sizes, in operations, at which the zone of benchScale is
// written below; 0 is the whole zone in one transaction. ovsdb-server's cost per row is
// not the same at every size (it checks references and indexes per transaction, and a
// big reply or update is one big JSON document), so the floor of an apply is the
// fastest of these, not necessarily the single transaction.
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
// are not timed, as in BenchmarkApplyZone and BenchmarkPeerRawZone.
func benchSized(b *testing.B, desired *rows.Set, write func(context.Context, client.Client) (int, error)) {
	var total time.Duration
	var txns int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := connect(b, testenv.StartNB(b))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		start := time.Now()
		b.StartTimer()
		n, err := write(ctx, c)
		b.StopTimer()
		total += time.Since(start)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		txns = n
	}
	reportSize(b, desired, total)
	b.ReportMetric(float64(txns), "transactions")
}
