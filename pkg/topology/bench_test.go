package topology

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

func benchmarkCompile(b *testing.B, nodes, networks int) {
	st := topologytest.Scale(nodes, networks)
	b.ReportAllocs()
	b.ResetTimer()
	var rowsOut int
	for i := 0; i < b.N; i++ {
		res, err := Compile(st, st.Nodes[0].Name)
		if err != nil || len(res.NotCompiled) > 0 {
			b.Fatalf("%v %v", err, res.NotCompiled)
		}
		rowsOut = res.Rows.Len()
	}
	b.StopTimer()
	b.ReportMetric(float64(rowsOut), "rows")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-MiB")
}

// BenchmarkCompileZone is one zone of a 500-network × 500-node cluster.
func BenchmarkCompileZone(b *testing.B) { benchmarkCompile(b, 500, 500) }

// BenchmarkCompileZoneNodeAdded is the same zone after a 501st node joins: what the
// agent recompiles when a node is added.
func BenchmarkCompileZoneNodeAdded(b *testing.B) { benchmarkCompile(b, 501, 500) }

// BenchmarkCompileZoneNodeJoinMemo is the zone of a Scale cluster compiled, after a
// node joins, with the memo of its compile before: the agent's compile when a node is
// added (issue #18). reused-rows are the result's rows that are the memo's very rows,
// which the reconciler passes over; new-rows the others, which it compares.
func BenchmarkCompileZoneNodeJoinMemo(b *testing.B) {
	for _, size := range []int{250, 500} {
		b.Run(fmt.Sprintf("%dx%d", size, size), func(b *testing.B) {
			// The cluster after the join is built anew, as cluster.Build does at each
			// compile: the memo recognizes nothing by its pointer.
			before, after := topologytest.Scale(size, size), topologytest.Scale(size+1, size)
			zone := before.Nodes[0].Name
			var memo Memo
			first, err := memo.CompileWith(before, zone, Options{})
			if err != nil || len(first.NotCompiled) > 0 {
				b.Fatalf("%v %v", err, first.NotCompiled)
			}
			var res *Result
			for b.Loop() {
				m := memo // the memo of the compile before the join, every time
				if res, err = m.CompileWith(after, zone, Options{}); err != nil || len(res.NotCompiled) > 0 {
					b.Fatalf("%v %v", err, res.NotCompiled)
				}
			}
			old := make(map[model.Model]bool, first.Rows.Len())
			for _, t := range rows.Tables {
				for _, m := range t.Models(first.Rows) {
					old[m] = true
				}
			}
			reused := 0
			for _, t := range rows.Tables {
				for _, m := range t.Models(res.Rows) {
					if old[m] {
						reused++
					}
				}
			}
			b.ReportMetric(float64(reused), "reused-rows")
			b.ReportMetric(float64(res.Rows.Len()-reused), "new-rows")
		})
	}
}
