package topology_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// BenchmarkConnect is one zone of a cluster whose Layer3 networks are all connected
// (topologytest.ConnectScale): OVNK_BENCH_CONNECT_NETWORKS networks on
// OVNK_BENCH_CONNECT_NODES nodes, 100 × 100 by default so that `make bench` stays
// within minutes on two cores. OKEP-5224's scale concern, 500 × 500 (250,000 connect
// routes in each zone), is the target size: set both to 500. Since one connect router
// holds at most 32,767 ports, 500 × 500 takes 8 connects of up to 64 networks each.
//
//   - Compile: compiling the zone;
//   - Apply: ovnk's reconcile of the whole zone into an empty NB;
//   - PeerRaw: the same rows as one raw transaction, the floor for Apply;
//   - Resync: a reconcile of the applied zone, which must send 0 operations;
//   - Connected: the zone without its connects applied, then the reconcile that adds
//     them — the agent's work when the ClusterNetworkConnects are created.
func BenchmarkConnect(b *testing.B) {
	nodes, networks := envInt("OVNK_BENCH_CONNECT_NODES", 100), envInt("OVNK_BENCH_CONNECT_NETWORKS", 100)
	st := topologytest.ConnectScale(nodes, networks)
	zone := st.Nodes[0].Name
	desired := compileConnected(b, st, zone)

	b.Run("Compile", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			compileConnected(b, st, zone)
		}
		b.StopTimer()
		reportConnectSize(b, st, desired)
	})
	b.Run("Apply", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			r := &ovn.Reconciler{Client: connectNB(b)}
			b.StartTimer()
			if _, err := r.Reconcile(context.Background(), desired, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportConnectSize(b, st, desired)
		b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
	})
	b.Run("PeerRaw", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := connectNB(b)
			b.StartTimer()
			ops, err := ovn.InsertOps(c, desired)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ovn.Transact(context.Background(), c, ops); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportConnectSize(b, st, desired)
	})
	b.Run("Resync", func(b *testing.B) {
		r := appliedNB(b, desired)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			stats, err := r.Reconcile(context.Background(), desired, nil)
			if err != nil {
				b.Fatal(err)
			}
			if stats.Operations != 0 {
				b.Fatalf("an unchanged resync sent %d operations", stats.Operations)
			}
			b.ReportMetric(float64(stats.Owned), "owned-rows")
		}
		b.ReportMetric(0, "write-ops")
	})
	b.Run("Connected", func(b *testing.B) {
		unconnected := *st
		unconnected.Connects = nil
		before := compileConnected(b, &unconnected, zone)
		var stats ovn.Stats
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			r := appliedNB(b, before)
			b.StartTimer()
			var err error
			if stats, err = r.Reconcile(context.Background(), desired, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(stats.Operations), "write-ops")
		b.ReportMetric(float64(stats.Transactions), "transactions")
	})
}

func compileConnected(b *testing.B, st *cluster.State, zone string) *rows.Set {
	res, err := topology.Compile(st, zone)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.NotCompiled) > 0 {
		b.Fatalf("networks not compiled: %v", res.NotCompiled)
	}
	for name, err := range res.Connects {
		if err != nil {
			b.Fatalf("connect %s not compiled: %v", name, err)
		}
	}
	return res.Rows
}

// reportConnectSize reports the zone's size: all its rows and routes, and the connect
// routers' ports and routes (one each per network and node).
func reportConnectSize(b *testing.B, st *cluster.State, s *rows.Set) {
	ix := rows.NewIndex(s)
	ports, routes := 0, 0
	for _, cc := range st.Connects {
		lr := ix.Router(topology.ConnectRouterName(cc.Name))
		ports += len(lr.Ports)
		routes += len(lr.StaticRoutes)
	}
	b.ReportMetric(float64(s.Len()), "rows")
	b.ReportMetric(float64(len(s.Routes)), "routes")
	b.ReportMetric(float64(len(st.Connects)), "connects")
	b.ReportMetric(float64(ports), "connect-ports")
	b.ReportMetric(float64(routes), "connect-routes")
}

// connectNB starts an empty NB and returns a client of it.
func connectNB(b *testing.B) client.Client {
	nb := testenv.StartNB(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// appliedNB starts an NB holding desired and waits until the client's cache has it all.
func appliedNB(b *testing.B, desired *rows.Set) *ovn.Reconciler {
	r := &ovn.Reconciler{Client: connectNB(b)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if _, err := r.Reconcile(ctx, desired, nil); err != nil {
		b.Fatal(err)
	}
	err := testenv.Eventually(ctx, 10*time.Minute, "the zone in the client's cache", func(ctx context.Context) error {
		stats, err := r.Reconcile(ctx, desired, nil)
		if err == nil && stats.Operations != 0 {
			return errNotInCache
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

type notInCache struct{}

func (notInCache) Error() string { return "the client's cache does not hold the zone yet" }

var errNotInCache = notInCache{}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// peakRSSMiB is this process's peak resident set (VmHWM): the agent holds the same
// cache and compiled rows.
func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}
