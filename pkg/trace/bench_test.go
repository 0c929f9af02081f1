package trace_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
)

// A zone of 200 networks on 110 nodes holds about 100,000 rows: DESIGN.md's trace
// target is ≤ 200 ms on such a snapshot.
const benchNodes, benchNetworks = 110, 200

// BenchmarkTrace100k traces a Layer2 pod to a pod on another node and back, and a pod
// to the internet through its gateway router, over two zones of ~100,000 rows each.
// Each iteration indexes the zones anew from their rows, as a fresh `kubectl ovnk
// trace` does with the snapshots it fetched: nothing parsed is reused.
func BenchmarkTrace100k(b *testing.B) {
	st := topologytest.Scale(benchNodes, benchNetworks)
	sets := map[string]*rows.Set{}
	for _, node := range []string{"node0000", "node0001"} {
		res, err := topology.Compile(st, node)
		if err != nil {
			b.Fatal(err)
		}
		sets[node] = res.Rows
	}
	network := st.Networks[len(st.Networks)-1].Name // a Layer2 network
	var n int
	for b.Loop() {
		zones := trace.Zones{}
		for node, s := range sets {
			zones[node] = trace.ZoneFromRows(node, s, trace.Extra{})
		}
		n = zones["node0000"].Rows()
		c := trace.ClusterOf(st, zones)
		src, err := c.PodEndpoint("ns0199/pod0000", network)
		if err != nil {
			b.Fatal(err)
		}
		for _, dst := range []string{"10.200.0.4", "8.8.8.8"} {
			res, err := trace.Trace(context.Background(), c, trace.Request{Node: src.Node, Port: src.Port, Dst: netip.MustParseAddr(dst), Reply: true})
			if err != nil {
				b.Fatal(err)
			}
			if k := res.Forward.Verdict.Kind; k != trace.Delivered && k != trace.LeftCluster {
				b.Fatalf("to %s: %s", dst, res.Forward.Verdict.Reason)
			}
		}
	}
	b.ReportMetric(float64(n), "zone-rows")
}
