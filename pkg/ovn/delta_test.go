package ovn_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// editor changes a set the way a compiler that reuses its rows does: every row it
// changes is a copy put in the old one's place, every other row keeps its pointer.
type editor struct {
	s   *rows.Set
	rnd *rand.Rand
	n   int // names new rows
}

// next returns a set holding the same rows as e.s, in slices of its own, to edit.
func (e *editor) next() *rows.Set {
	e.s = reused(e.s)
	return e.s
}

func (e *editor) newID(prefix string) string {
	e.n++
	return fmt.Sprintf("%s:delta-test:%d", prefix, e.n)
}

func withID[T interface{ GetExternalIDs() map[string]string }](ids map[string]string, id string) map[string]string {
	out := maps.Clone(ids)
	out[rows.IDKey] = id
	return out
}

// routerWithRoutes picks a router holding at least min routes.
func (e *editor) routerWithRoutes(min int) int {
	var idx []int
	for i, r := range e.s.Routers {
		if len(r.StaticRoutes) >= min {
			idx = append(idx, i)
		}
	}
	return idx[e.rnd.IntN(len(idx))]
}

func (e *editor) routeIndex(id string) int {
	return slices.IndexFunc(e.s.Routes, func(r *nbdb.LogicalRouterStaticRoute) bool { return r.UUID == id })
}

// addRoute gives a router one more route, the row inserted next to one of its own.
func (e *editor) addRoute() string {
	i := e.routerWithRoutes(1)
	lr := *e.s.Routers[i]
	tmpl := e.s.Routes[e.routeIndex(lr.StaticRoutes[e.rnd.IntN(len(lr.StaticRoutes))])]
	r := *tmpl
	r.UUID = e.newID("route")
	r.ExternalIDs = withID[*nbdb.LogicalRouterStaticRoute](tmpl.ExternalIDs, r.UUID)
	r.IPPrefix = fmt.Sprintf("198.51.100.%d/32", e.n%250)
	lr.StaticRoutes = append(slices.Clone(lr.StaticRoutes), r.UUID)
	e.s.Routers[i] = &lr
	at := e.routeIndex(tmpl.UUID) + 1
	e.s.Routes = slices.Insert(e.s.Routes, at, &r)
	return "add route " + r.UUID + " to " + lr.Name
}

// removeRoute takes a route from a router, and its row from the set.
func (e *editor) removeRoute() string {
	i := e.routerWithRoutes(2)
	lr := *e.s.Routers[i]
	id := lr.StaticRoutes[e.rnd.IntN(len(lr.StaticRoutes))]
	lr.StaticRoutes = slices.DeleteFunc(slices.Clone(lr.StaticRoutes), func(k string) bool { return k == id })
	e.s.Routers[i] = &lr
	e.s.Routes = slices.Delete(e.s.Routes, e.routeIndex(id), e.routeIndex(id)+1)
	return "remove route " + id + " from " + lr.Name
}

// changeRoute changes a route in place: a copy under the same identity, its router
// left as it was.
func (e *editor) changeRoute() string {
	i := e.rnd.IntN(len(e.s.Routes))
	r := *e.s.Routes[i]
	r.ExternalIDs = maps.Clone(r.ExternalIDs)
	r.ExternalIDs["delta-test"] = fmt.Sprint(e.rnd.IntN(1000))
	e.s.Routes[i] = &r
	return "change route " + r.UUID
}

// changePort changes a switch port's options in place.
func (e *editor) changePort() string {
	i := e.rnd.IntN(len(e.s.SwitchPorts))
	p := *e.s.SwitchPorts[i]
	p.Options = maps.Clone(p.Options)
	if p.Options == nil {
		p.Options = map[string]string{}
	}
	p.Options["delta-test"] = fmt.Sprint(e.rnd.IntN(1000))
	e.s.SwitchPorts[i] = &p
	return "change port " + p.Name
}

// addPort gives a switch one more port, a copy of one of its own under a new name.
func (e *editor) addPort() string {
	var idx []int
	for i, ls := range e.s.Switches {
		if len(ls.Ports) > 0 {
			idx = append(idx, i)
		}
	}
	i := idx[e.rnd.IntN(len(idx))]
	ls := *e.s.Switches[i]
	at := slices.IndexFunc(e.s.SwitchPorts, func(p *nbdb.LogicalSwitchPort) bool { return p.UUID == ls.Ports[0] })
	p := *e.s.SwitchPorts[at]
	if p.Type == "router" {
		return "no port added (" + ls.Name + " holds a router link)"
	}
	p.UUID = e.newID("LSP")
	p.Name = fmt.Sprintf("delta-test-%d", e.n)
	p.ExternalIDs = withID[*nbdb.LogicalSwitchPort](p.ExternalIDs, p.UUID)
	ls.Ports = append(slices.Clone(ls.Ports), p.UUID)
	e.s.Switches[i] = &ls
	e.s.SwitchPorts = slices.Insert(e.s.SwitchPorts, at+1, &p)
	return "add port " + p.Name + " to " + ls.Name
}

// TestReconcileAppliesChangesToReusedRows: a set edited as a compiler that reuses its
// rows edits it (rows added, removed and changed in place, everything else the very
// rows applied last) converges through every random sequence of edits and of changes
// made in the NB behind ovnk's back, comparing only what changed.
func TestReconcileAppliesChangesToReusedRows(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			nb, c, ctx := startNB(t)
			r := &ovn.Reconciler{Client: c}
			e := &editor{s: scaleZone(t, 3, 4), rnd: rand.New(rand.NewPCG(seed, 7))}
			requireConverged(ctx, t, r, e.s, nil)
			edits := []func() string{e.addRoute, e.removeRoute, e.changeRoute, e.changePort, e.addPort}
			var log []string
			for step := range 12 {
				e.next()
				changes := 1 + e.rnd.IntN(3)
				for range changes {
					log = append(log, edits[e.rnd.IntN(len(edits))]())
				}
				var stats ovn.Stats
				if step%4 == 3 {
					log = append(log, behind(ctx, t, nb, e))
					// The index hears of a change behind ovnk's back when the cache's
					// event reaches it, which a loaded machine delays: reconcile until
					// it is put back.
					stats = reconcileUntilConverged(ctx, t, r, e.s, log)
				}
				first := requireConvergedLogged(ctx, t, r, e.s, log)
				stats.Compared += first.Compared
				stats.Delta = stats.Delta || first.Delta
				if stats.Compared > 0 && !stats.Delta && step%4 != 3 {
					t.Errorf("step %d was not planned in delta: %+v", step, stats)
				}
				// ovnk's own writes are not changes behind its back.
				if again, err := r.Reconcile(ctx, e.s, nil); err != nil || again.Compared != 0 {
					t.Errorf("step %d: a reconcile after converging compared %d rows (%v), want none", step, again.Compared, err)
				}
				// Each edit changes a row and at most its parent; a change behind
				// ovnk's back a row and its parent.
				if stats.Compared > 2*changes+2 {
					t.Errorf("step %d compared %d of %d rows for %d edits; want only those changed:\n%s", step, stats.Compared, e.s.Len(), changes, strings.Join(log, "\n"))
				}
			}
		})
	}
}

// behind changes the NB behind ovnk's back: a route's next hop, or a port removed.
func behind(ctx context.Context, t *testing.T, nb *testenv.NB, e *editor) string {
	t.Helper()
	if e.rnd.IntN(2) == 0 {
		route := e.s.Routes[e.rnd.IntN(len(e.s.Routes))]
		if _, err := nb.NBCtl(ctx, "set", "Logical_Router_Static_Route", uuidOf(ctx, t, nb, "Logical_Router_Static_Route", route.UUID), "nexthop=192.0.2.99"); err != nil {
			t.Fatal(err)
		}
		return "behind: next hop of " + route.UUID
	}
	port := e.s.SwitchPorts[e.rnd.IntN(len(e.s.SwitchPorts))]
	if _, err := nb.NBCtl(ctx, "lsp-del", port.Name); err != nil {
		t.Fatal(err)
	}
	return "behind: port " + port.Name + " deleted"
}

// reconcileUntilConverged reconciles desired until the owned rows equal it, and returns
// the sum of what the reconciles compared.
func reconcileUntilConverged(ctx context.Context, t *testing.T, r *ovn.Reconciler, desired *rows.Set, log []string) ovn.Stats {
	t.Helper()
	want := dump(t, desired)
	var sum ovn.Stats
	err := testenv.Eventually(ctx, 10*time.Second, "the change behind ovnk's back put back", func(ctx context.Context) error {
		stats, err := r.Reconcile(ctx, desired, nil)
		if err != nil {
			return err
		}
		sum.Compared += stats.Compared
		sum.Delta = sum.Delta || stats.Delta
		s, err := ovn.OwnedSnapshot(ctx, r.Client)
		if err != nil {
			return err
		}
		if dump(t, s) != want {
			return errNotYet
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v after edits:\n%s", err, strings.Join(log, "\n"))
	}
	return sum
}

// requireConvergedLogged is requireConverged, naming the edits made so far when it
// fails.
func requireConvergedLogged(ctx context.Context, t *testing.T, r *ovn.Reconciler, desired *rows.Set, log []string) ovn.Stats {
	t.Helper()
	var stats ovn.Stats
	ok := t.Run("converges", func(t *testing.T) { stats = requireConverged(ctx, t, r, desired, nil) })
	if !ok {
		t.Fatalf("after edits:\n%s", strings.Join(log, "\n"))
	}
	return stats
}

// scaleZone is the zone of the first node of topologytest.Scale(nodes, networks).
func scaleZone(t *testing.T, nodes, networks int) *rows.Set {
	st := topologytest.Scale(nodes, networks)
	return compile(t, st, st.Nodes[0].Name).Rows
}
