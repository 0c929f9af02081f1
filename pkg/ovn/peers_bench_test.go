package ovn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/test/testenv"
)

// The peers' figures: what the same rows cost when written without ovnk's engine.
// `make bench` prints them beside ours, so a ratio is always measured in one run.

// BenchmarkPeerRawTransaction writes 50,000 static routes and the router that holds them
// as one hand-built OVSDB transaction: the floor any engine can reach.
func BenchmarkPeerRawTransaction(b *testing.B) {
	const routes = 50000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nb := testenv.StartNB(b)
		c := connect(b, nb)
		ops := rawRouteOps(routes)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		b.StartTimer()
		if _, err := ovn.Transact(ctx, c, ops); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		assertRouteCount(ctx, b, nb, routes)
		cancel()
	}
	b.ReportMetric(routes, "routes/op")
}

// BenchmarkPeerNBCtl adds 5,000 static routes with one ovn-nbctl invocation of batched
// lr-route-add commands, the way scripts and older controllers program OVN.
func BenchmarkPeerNBCtl(b *testing.B) {
	const routes = 5000
	args := []string{"lr-add", "lr0"}
	for r := 0; r < routes; r++ {
		args = append(args, "--", "lr-route-add", "lr0", routePrefix(r), "100.64.0.1")
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nb := testenv.StartNB(b)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		b.StartTimer()
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		assertRouteCount(ctx, b, nb, routes)
		cancel()
	}
	b.ReportMetric(routes, "routes/op")
}

// assertRouteCount makes sure the database really holds the routes that were timed.
func assertRouteCount(ctx context.Context, b *testing.B, nb *testenv.NB, want int) {
	b.Helper()
	out, err := nb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "Logical_Router_Static_Route")
	if err != nil {
		b.Fatal(err)
	}
	if got := len(strings.Fields(out)); got != want {
		b.Fatalf("NB holds %d static routes after the run, want %d", got, want)
	}
}

// rawRouteOps inserts n routes under named UUIDs and a router referring to all of them.
func rawRouteOps(n int) []ovsdb.Operation {
	ops := make([]ovsdb.Operation, 0, n+1)
	refs := make([]any, 0, n)
	for r := 0; r < n; r++ {
		uuid := fmt.Sprintf("route%d", r)
		ops = append(ops, ovsdb.Operation{
			Op:       ovsdb.OperationInsert,
			Table:    "Logical_Router_Static_Route",
			UUIDName: uuid,
			Row:      ovsdb.Row{"ip_prefix": routePrefix(r), "nexthop": "100.64.0.1"},
		})
		refs = append(refs, ovsdb.UUID{GoUUID: uuid})
	}
	set, _ := ovsdb.NewOvsSet(refs)
	ops = append(ops, ovsdb.Operation{
		Op:    ovsdb.OperationInsert,
		Table: "Logical_Router",
		Row:   ovsdb.Row{"name": "lr0", "static_routes": set},
	})
	return ops
}

// routePrefix returns the r-th distinct /24 under 10.0.0.0/8.
func routePrefix(r int) string {
	return fmt.Sprintf("10.%d.%d.0/24", r/256%256, r%256)
}
