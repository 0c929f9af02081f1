package ovn_test

import (
	"context"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology"
)

// BenchmarkLayer2Conversion is the agent's work when its node moves to the transit
// router (OKEP-5094) while every other node is still legacy: compile the converted zone
// (with the upgrade pieces for every legacy peer) and apply it over the legacy zone in
// one transaction, as the agent does. The scale is benchScale's, every node legacy.
// Each iteration starts again from the legacy zone, which is not timed.
func BenchmarkLayer2Conversion(b *testing.B) {
	st, _ := benchScale(b)
	for i, n := range st.Nodes {
		n.Layer2TopologyVersion = ""
		n.Layer2GatewayTunnelIDs = map[string]int{}
		for _, net := range st.Networks {
			if net.Topology == cluster.Layer2 {
				// Pods of Scale hold tunnel ids from 3 up to the node count.
				n.Layer2GatewayTunnelIDs[net.Name] = len(st.Nodes) + 3 + i
			}
		}
	}
	local := st.Nodes[0].Name
	legacy, err := topology.Compile(st, local)
	if err != nil || len(legacy.NotCompiled) > 0 {
		b.Fatalf("%v %v", err, legacy.NotCompiled)
	}
	// The node was drained: its own pods are gone.
	var kept []*cluster.Pod
	for _, p := range st.Pods {
		if p.Node != local {
			kept = append(kept, p)
		}
	}
	st.Pods = kept
	r := applied(b, legacy.Rows)
	ctx := context.Background()
	var ops, txns, rowsAfter int
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := topology.CompileWith(st, local, topology.Options{Layer2: topology.Layer2TransitRouter, HoldLocalLayer2Pods: true})
		if err != nil || len(res.NotCompiled) > 0 {
			b.Fatalf("%v %v", err, res.NotCompiled)
		}
		stats, err := r.ReconcileWhole(ctx, res.Rows, nil)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		ops, txns, rowsAfter = stats.Operations, stats.Transactions, res.Rows.Len()
		b.StopTimer()
		if _, err := r.Reconcile(ctx, legacy.Rows, nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(legacy.Rows.Len()), "legacy-rows")
	b.ReportMetric(float64(rowsAfter), "converted-rows")
	b.ReportMetric(float64(ops), "write-ops")
	b.ReportMetric(float64(txns), "transactions")
}
