package topology

import (
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"runtime"
	"testing"
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
