package ovn_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// reused returns a set holding s's rows (the same pointers) in slices of its own.
func reused(s *rows.Set) *rows.Set {
	out := &rows.Set{}
	out.Append(s)
	return out
}

// convergedLayer3 starts an NB and a reconciler, and applies the zone of node1 of
// topologytest.Layer3: where each delta test starts from.
func convergedLayer3(t *testing.T) (*testenv.NB, *ovn.Reconciler, context.Context, *rows.Set) {
	t.Helper()
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	base := compile(t, topologytest.Layer3(), "node1").Rows
	requireConverged(ctx, t, r, base, nil)
	return nb, r, ctx, base
}

// settle reconciles s until a reconcile sends nothing.
func settle(ctx context.Context, t *testing.T, r *ovn.Reconciler, s *rows.Set, keep func(map[string]string) bool) {
	t.Helper()
	err := testenv.Eventually(ctx, 10*time.Second, "a reconcile with nothing to send", func(ctx context.Context) error {
		stats, err := r.Reconcile(ctx, s, keep)
		if err == nil && stats.Operations != 0 {
			return errNotYet
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// changeARoute puts a changed copy of s's first route in its place: a small change
// that makes the next reconcile of s a delta plan.
func changeARoute(s *rows.Set, value string) {
	r := *s.Routes[0]
	r.Options = map[string]string{"review": value}
	s.Routes[0] = &r
}

// TestReconcileKeepsARowListedTwiceBefore: a set that listed one row twice (the same
// pointer twice in its table, which a full plan accepts) and lists it once now keeps the
// row: the copy that went away must not take the identity out of the desired index, or
// the plan would delete the meter and later reconciles insert and delete it in turn.
func TestReconcileKeepsARowListedTwiceBefore(t *testing.T) {
	_, r, ctx, base := convergedLayer3(t)

	twice := reused(base)
	twice.Meters = append(twice.Meters, twice.Meters[0])
	settle(ctx, t, r, twice, nil)

	once := reused(base)
	changeARoute(once, "1") // so that the set is not the one applied: a delta plan
	stats, err := r.Reconcile(ctx, once, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Deletes != 0 {
		t.Errorf("the reconcile deleted %d rows, though every root of the set it applied is still desired", stats.Deletes)
	}
	requireConverged(ctx, t, r, once, nil)
	for i := range 3 {
		stats, err := r.Reconcile(ctx, once, nil)
		if err != nil || stats.Operations != 0 {
			t.Errorf("reconcile %d of the converged set: %+v, %v; want nothing sent", i, stats, err)
		}
	}
}

// TestReconcileSeesAChangeAfterAWriteThatChangedNothing: a reference added to a router
// that holds it already (the route was kept while its router dropped it, then is wanted
// again) must not be sent: it would change nothing, so no event would consume its
// expectation, and the next change made behind ovnk's back to that router would be
// taken for ovnk's own and never put back.
func TestReconcileSeesAChangeAfterAWriteThatChangedNothing(t *testing.T) {
	nb, r, ctx, base := convergedLayer3(t)

	without, i, dropped := dropAKeptRoute(ctx, t, r, base)
	lr := base.Routers[i]

	// The route is wanted again: the router gets it back (it never lost it).
	again := reused(without)
	back := dropped
	back.StaticRoutes = slices.Clone(lr.StaticRoutes)
	again.Routers[i] = &back
	again.Routes = slices.Clone(base.Routes)
	stats, err := r.Reconcile(ctx, again, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Operations != 0 {
		t.Errorf("the route wanted again, which the router still holds, sent %d operations: %+v", stats.Operations, stats)
	}

	// Behind ovnk's back: the router's options.
	if _, err := nb.NBCtl(ctx, "set", "Logical_Router", lr.Name, "options:review=behind"); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 10*time.Second, "the change in the cache", func(ctx context.Context) error {
		var got []*nbdb.LogicalRouter
		if err := r.Client.WhereCache(func(x *nbdb.LogicalRouter) bool { return x.Name == lr.Name }).List(ctx, &got); err != nil {
			return err
		}
		if len(got) != 1 || got[0].Options["review"] != "behind" {
			return errNotYet
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reconcileUntilConverged(ctx, t, r, again, nil)
}

// TestReconcilePlansTheSameSetWithADirtyRowInDelta: the reconcile after a delta plan
// that removed a row is handed the same set; the removed row's delete event leaves its
// identity dirty, and the plan must look at that identity alone, not walk every row.
func TestReconcilePlansTheSameSetWithADirtyRowInDelta(t *testing.T) {
	_, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	e := &editor{s: scaleZone(t, 3, 4)}
	requireConverged(ctx, t, r, e.s, nil)
	e.next()
	i := slices.IndexFunc(e.s.Routers, func(lr *nbdb.LogicalRouter) bool { return len(lr.StaticRoutes) > 1 })
	lr := *e.s.Routers[i]
	id := lr.StaticRoutes[0]
	lr.StaticRoutes = slices.Clone(lr.StaticRoutes[1:])
	e.s.Routers[i] = &lr
	e.s.Routes = slices.DeleteFunc(slices.Clone(e.s.Routes), func(rt *nbdb.LogicalRouterStaticRoute) bool { return rt.UUID == id })
	stats, err := r.Reconcile(ctx, e.s, nil)
	if err != nil || !stats.Delta {
		t.Fatalf("the route's removal: %+v, %v", stats, err)
	}
	// The route's delete (OVSDB drops it once no router refers to it) reaches the cache;
	// the next reconcile's index waits until it holds as many rows as the cache.
	requireCacheRoutes(ctx, t, c, func(routes []*nbdb.LogicalRouterStaticRoute) bool {
		return !slices.ContainsFunc(routes, func(rt *nbdb.LogicalRouterStaticRoute) bool { return rt.ExternalIDs[rows.IDKey] == id })
	})
	stats, err = r.Reconcile(ctx, e.s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !stats.Delta {
		t.Errorf("the set just applied, with one identity dirty, was planned in full (walking all %d rows): %+v", e.s.Len(), stats)
	}
}

// TestReconcileRemovesAKeptReferenceOnceNotKept: a reference to a kept row stays in its
// parent when the parent drops it, so the parent is not held as applied: its next
// change is compared with the NB in full, and the reference (and the route) goes once
// nothing keeps it.
func TestReconcileRemovesAKeptReferenceOnceNotKept(t *testing.T) {
	_, r, ctx, base := convergedLayer3(t)

	without, i, dropped := dropAKeptRoute(ctx, t, r, base)

	// Nothing keeps the route now, and the router is compiled anew (a new row, the same
	// references): the route must go.
	next := reused(without)
	again := dropped
	next.Routers[i] = &again
	requireConverged(ctx, t, r, next, nil)
}

// TestReconcileFallsBackFromDeltaToAFullPlan: a gateway chassis removed behind ovnk's
// back is a changed row the NB lacks, under a router port that is not a root: the delta
// plan gives up and the full plan puts it back.
func TestReconcileFallsBackFromDeltaToAFullPlan(t *testing.T) {
	nb, r, ctx, base := convergedLayer3(t)
	if len(base.GatewayChassis) == 0 {
		t.Fatal("the zone has no gateway chassis to remove")
	}
	gc := base.GatewayChassis[0]
	lrp := base.RouterPorts[slices.IndexFunc(base.RouterPorts, func(p *nbdb.LogicalRouterPort) bool { return slices.Contains(p.GatewayChassis, gc.UUID) })]
	if out, err := nb.NBCtl(ctx, "remove", "Logical_Router_Port", lrp.Name, "gateway_chassis", uuidOf(ctx, t, nb, "Gateway_Chassis", gc.UUID)); err != nil {
		t.Fatal(out, err)
	}
	err := testenv.Eventually(ctx, 10*time.Second, "the gateway chassis gone from the cache", func(ctx context.Context) error {
		var got []*nbdb.GatewayChassis
		if err := r.Client.WhereCache(func(x *nbdb.GatewayChassis) bool { return x.ExternalIDs[rows.IDKey] == gc.UUID }).List(ctx, &got); err != nil {
			return err
		}
		if len(got) != 0 {
			return errNotYet
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	next := reused(base)
	changeARoute(next, "fallback")
	stats := requireConverged(ctx, t, r, next, nil)
	if stats.Delta {
		t.Errorf("a plan that had to insert the gateway chassis says it was a delta plan")
	}
}

// TestReconcileAddsAPortToItsGroupInDeltaAcrossTransactions: a port new to its switch and
// to the port group that lists it, planned in delta with every unit in a transaction of
// its own: the switch's unit must join the port group's, or the group would name the
// port by a named UUID of another transaction.
func TestReconcileAddsAPortToItsGroupInDeltaAcrossTransactions(t *testing.T) {
	_, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c, MaxOperations: 1}
	base := compile(t, topologytest.Layer3(), "node1").Rows
	requireConverged(ctx, t, r, base, nil)
	next := reused(base)
	pg := *next.PortGroups[0]
	member := pg.Ports[0]
	si := slices.IndexFunc(next.Switches, func(ls *nbdb.LogicalSwitch) bool { return slices.Contains(ls.Ports, member) })
	ls := *next.Switches[si]
	pi := slices.IndexFunc(next.SwitchPorts, func(p *nbdb.LogicalSwitchPort) bool { return p.UUID == member })
	port := *next.SwitchPorts[pi]
	port.Name += "-review"
	port.UUID = "LSP:" + port.Name
	port.ExternalIDs = maps.Clone(port.ExternalIDs)
	port.ExternalIDs[rows.IDKey] = port.UUID
	ls.Ports = append(slices.Clone(ls.Ports), port.UUID)
	pg.Ports = append(slices.Clone(pg.Ports), port.UUID)
	next.Switches[si], next.PortGroups[0] = &ls, &pg
	next.SwitchPorts = slices.Insert(next.SwitchPorts, pi+1, &port)
	stats := requireConverged(ctx, t, r, next, nil)
	if !stats.Delta {
		t.Errorf("not a delta plan")
	}
}

// dropAKeptRoute makes a router of base drop its first route, which keep protects (its
// network did not compile, say), and reconciles until the NB settles: the NB keeps the
// route, referenced by the router. It returns the set applied, the router's index in
// it, and the router as it is there.
func dropAKeptRoute(ctx context.Context, t *testing.T, r *ovn.Reconciler, base *rows.Set) (*rows.Set, int, nbdb.LogicalRouter) {
	t.Helper()
	i := slices.IndexFunc(base.Routers, func(lr *nbdb.LogicalRouter) bool { return len(lr.StaticRoutes) > 1 })
	lr := base.Routers[i]
	route := lr.StaticRoutes[0]
	keepRoute := func(ids map[string]string) bool { return ids[rows.IDKey] == route }
	without := reused(base)
	dropped := *lr
	dropped.StaticRoutes = slices.Clone(lr.StaticRoutes[1:])
	without.Routers[i] = &dropped
	without.Routes = slices.DeleteFunc(without.Routes, func(rt *nbdb.LogicalRouterStaticRoute) bool { return rt.UUID == route })
	settle(ctx, t, r, without, keepRoute)
	return without, i, dropped
}

// requireCacheRoutes waits until the client's cache holds routes that ok accepts.
func requireCacheRoutes(ctx context.Context, t *testing.T, c client.Client, ok func([]*nbdb.LogicalRouterStaticRoute) bool) {
	t.Helper()
	err := testenv.Eventually(ctx, 10*time.Second, "the routes in the cache", func(ctx context.Context) error {
		var got []*nbdb.LogicalRouterStaticRoute
		if err := c.List(ctx, &got); err != nil {
			return err
		}
		if !ok(got) {
			return errNotYet
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
