package ovn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

func compile(t *testing.T, st *cluster.State, node string) *topology.Result {
	t.Helper()
	res, err := topology.Compile(st, node)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCompiled) > 0 {
		t.Fatalf("not compiled: %v", res.NotCompiled)
	}
	return res
}

func dump(t *testing.T, s *rows.Set) string {
	t.Helper()
	var b bytes.Buffer
	if err := ovn.WriteRows(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// requireConverged reconciles until the client's cache shows the owned rows equal to the
// desired set, and then requires a further reconcile to send nothing at all.
func requireConverged(ctx context.Context, t *testing.T, r *ovn.Reconciler, desired *rows.Set, keep func(map[string]string) bool) ovn.Stats {
	t.Helper()
	want := dump(t, desired)
	first, err := r.Reconcile(ctx, desired, keep)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	err = testenv.Eventually(ctx, 10*time.Second, "owned rows equal to the desired set", func(ctx context.Context) error {
		s, err := ovn.OwnedSnapshot(ctx, r.Client)
		if err != nil {
			return err
		}
		if got = dump(t, s); got != want {
			return errNotYet
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\ngot:\n%s\nwant:\n%s", err, got, want)
	}
	again, err := r.Reconcile(ctx, desired, keep)
	if err != nil {
		t.Fatal(err)
	}
	if again.Operations != 0 {
		t.Fatalf("a reconcile with nothing changed sent %d operations: %+v", again.Operations, again)
	}
	return first
}

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet = notYet{}

func TestReconcileConvergesAndSendsNothingWhenUnchanged(t *testing.T) {
	_, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}

	st := topologytest.Layer3()
	stats := requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)
	if stats.Inserts == 0 || stats.Transactions != 1 {
		t.Errorf("first reconcile: %+v", stats)
	}

	// A fourth node joins: only the rows about it change.
	st.Nodes = append(st.Nodes, topologytestNode(st, "node4", 5))
	stats = requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)
	if stats.Deletes != 0 || stats.Inserts == 0 || stats.Inserts > 20 {
		t.Errorf("adding a node: %+v", stats)
	}

	// The blue network goes away: its rows go, the default network's stay.
	st.Networks = st.Networks[1:]
	stats = requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)
	if stats.Deletes == 0 || stats.Inserts != 0 {
		t.Errorf("removing a network: %+v", stats)
	}
}

// topologytestNode is a new node with subnets in every Layer3 network of st.
func topologytestNode(st *cluster.State, name string, id int) *cluster.Node {
	n := *st.Nodes[0]
	n.Name, n.ID, n.ChassisID = name, id, "chassis-"+name
	n.Gateway.InterfaceID = "breth0_" + name
	n.Subnets = map[string][]netip.Prefix{
		"default":          {netip.MustParsePrefix("10.244.9.0/24"), netip.MustParsePrefix("fd00:10:244:9::/64")},
		"cluster_udn_blue": {netip.MustParsePrefix("10.10.9.0/24"), netip.MustParsePrefix("2014:100:200:9::/64")},
	}
	return &n
}

// TestReconcileLeavesForeignRowsAlone pre-seeds the NB as ovn-kubernetes or an operator
// would have, then reconciles through changes and deletions: rows ovnk does not own, and
// the references they hang by — even on ovnk's own routers and switches — survive.
func TestReconcileLeavesForeignRowsAlone(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	foreign := [][]string{
		{"lr-add", "GR_foreign", "--", "set", "Logical_Router", "GR_foreign", "external_ids:k8s.ovn.org/owner-controller=default-network-controller"},
		{"lr-route-add", "GR_foreign", "0.0.0.0/0", "192.0.2.1"},
		{"ls-add", "operator-switch", "--", "lsp-add", "operator-switch", "operator-port"},
	}
	for _, args := range foreign {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	st := topologytest.Layer3()
	requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)

	// Another controller attaches its own rows to ovnk's router and switch.
	attach := [][]string{
		{"lr-route-add", "ovn_cluster_router", "198.51.100.0/24", "100.64.0.9"},
		{"lr-policy-add", "ovn_cluster_router", "2000", "ip4.dst == 198.51.100.1", "drop"},
		{"lsp-add", "node1", "someone-elses-port"},
		{"acl-add", "node1", "to-lport", "1000", "ip4.src == 198.51.100.1", "drop"},
	}
	for _, args := range attach {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	// A change to the cluster and a deleted network rewrite ovnk's rows around them.
	st.Nodes = append(st.Nodes, topologytestNode(st, "node4", 5))
	requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)
	st.Networks = st.Networks[1:]
	requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)

	checks := []struct {
		args []string
		want string
	}{
		{[]string{"lr-route-list", "GR_foreign"}, "192.0.2.1"},
		{[]string{"lsp-list", "operator-switch"}, "operator-port"},
		{[]string{"lr-route-list", "ovn_cluster_router"}, "198.51.100.0/24"},
		{[]string{"lr-policy-list", "ovn_cluster_router"}, "198.51.100.1"},
		{[]string{"lsp-list", "node1"}, "someone-elses-port"},
		{[]string{"acl-list", "node1"}, "198.51.100.1"},
	}
	for _, ck := range checks {
		out, err := nb.NBCtl(ctx, ck.args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, ck.want) {
			t.Errorf("%s lost the foreign %s:\n%s", strings.Join(ck.args, " "), ck.want, out)
		}
	}
	// ovnk's own rows on the same router are still exactly the desired ones.
	out, _ := nb.NBCtl(ctx, "lr-route-list", "ovn_cluster_router")
	if !strings.Contains(out, "10.244.1.0/24") || strings.Contains(out, "10.10.1.0/24") {
		t.Errorf("ovn_cluster_router routes:\n%s", out)
	}
}

func TestReconcileKeepsNetworksThatDidNotCompile(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	st := topologytest.Layer3()
	requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)

	// blue fails to compile in this zone (its node subnet vanished): its rows stay.
	delete(st.Nodes[0].Subnets, "cluster_udn_blue")
	res, err := topology.Compile(st, "node1")
	if err != nil {
		t.Fatal(err)
	}
	keep := func(ids map[string]string) bool { return res.NotCompiled[ids[rows.NetworkKey]] != nil }
	if _, err := r.Reconcile(ctx, res.Rows, keep); err != nil {
		t.Fatal(err)
	}
	out, err := nb.NBCtl(ctx, "lr-route-list", "cluster_udn_blue_ovn_cluster_router")
	if err != nil || !strings.Contains(out, "10.10.1.0/24") {
		t.Errorf("blue's rows were removed although it only failed to compile: %v\n%s", err, out)
	}
}

// TestReconcileChunksAndRemovesDuplicates applies a diff in many small transactions and
// cleans up a duplicate row, as a crashed or concurrent writer might leave behind.
func TestReconcileChunksAndRemovesDuplicates(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c, MaxOperations: 25}
	desired := compile(t, topologytest.OKEP5094(), "ovn-worker").Rows
	stats := requireConverged(ctx, t, r, desired, nil)
	if stats.Transactions < 2 {
		t.Errorf("a %d-operation diff with 25 per transaction took %d transactions", stats.Operations, stats.Transactions)
	}
	// ovn-nbctl's create, unlike lr-add, does not refuse a second router of the same name.
	if _, err := nb.NBCtl(ctx, "create", "Logical_Router", "name=test12_namespace.scoped_transit_router",
		"external_ids:k8s.ovn.org/owner-controller=ovnk", "external_ids:k8s.ovn.org/id=LR:test12_namespace.scoped_transit_router"); err != nil {
		t.Fatal(err)
	}
	requireConverged(ctx, t, r, desired, nil)
	out, _ := nb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "Logical_Router", "name=test12_namespace.scoped_transit_router")
	if n := len(strings.Fields(out)); n != 1 {
		t.Errorf("%d transit routers after reconcile, want 1", n)
	}
}

// TestReconcileKeepsThePortGroupWithItsPorts follows the isolation port group, whose
// ports belong to the node switch, through pods coming and going, with transactions
// so small that every switch would travel alone: a new pod's port and the group's
// reference to it must still arrive together (the reference names the port by the
// UUID it is inserted under), and a deleted pod leaves the group.
func TestReconcileKeepsThePortGroupWithItsPorts(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c, MaxOperations: 1}

	st := topologytest.Layer3()
	requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)
	requireGroup(ctx, t, nb, "blue_web")

	locked := *st.Pods[0]
	locked.Name = "api"
	locked.Networks = map[string]cluster.PodInterface{
		"default":          {IPs: []netip.Prefix{netip.MustParsePrefix("10.244.0.9/24")}, MAC: "0a:58:0a:f4:00:09", Role: cluster.PodRoleInfrastructureLocked},
		"cluster_udn_blue": {IPs: []netip.Prefix{netip.MustParsePrefix("10.10.0.9/24")}, MAC: "0a:58:0a:0a:00:09", Role: cluster.PodRolePrimary},
	}
	st.Pods = append(st.Pods, &locked)
	stats := requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)
	if stats.Inserts == 0 || stats.Mutations == 0 {
		t.Errorf("a new primary-UDN pod: %+v", stats)
	}
	requireGroup(ctx, t, nb, "blue_api", "blue_web")

	st.Pods = slices.DeleteFunc(st.Pods, func(p *cluster.Pod) bool { return p.Name == "web" })
	requireConverged(ctx, t, r, compile(t, st, "node1").Rows, nil)
	requireGroup(ctx, t, nb, "blue_api")
}

// requireGroup checks, with ovn-nbctl, the ports of the isolation port group.
func requireGroup(ctx context.Context, t *testing.T, nb *testenv.NB, ports ...string) {
	t.Helper()
	out, err := nb.NBCtl(ctx, "--bare", "--columns=ports", "find", "Port_Group", "name="+topology.IsolationPortGroup)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, uuid := range strings.Fields(out) {
		name, err := nb.NBCtl(ctx, "--bare", "--columns=name", "list", "Logical_Switch_Port", uuid)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSpace(name))
	}
	slices.Sort(names)
	if !slices.Equal(names, ports) {
		t.Fatalf("isolation port group holds %v, want %v", names, ports)
	}
}

// TestReconcileReplacesAMetersOnlyBand gives the meter a band of another identity: the
// meter must hold a band at every step, so the new one is added before the old goes.
func TestReconcileReplacesAMetersOnlyBand(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	desired := compile(t, topologytest.Layer3(), "node1").Rows
	requireConverged(ctx, t, r, desired, nil)

	band := *desired.MeterBands[0]
	band.UUID, band.Rate = "MeterBand:acl-logging:v2", 30
	band.ExternalIDs = maps.Clone(band.ExternalIDs)
	band.ExternalIDs[rows.IDKey] = band.UUID
	desired.MeterBands = []*nbdb.MeterBand{&band}
	// A changed row is a copy: the reconciler passes over the rows it applied.
	meter := *desired.Meters[0]
	meter.Bands = []string{band.UUID}
	desired.Meters = []*nbdb.Meter{&meter}
	stats := requireConverged(ctx, t, r, desired, nil)
	if stats.Inserts != 1 || stats.Mutations != 2 {
		t.Errorf("replacing the band: %+v", stats)
	}
	if out, err := nb.NBCtl(ctx, "--bare", "--columns=rate", "list", "Meter_Band"); err != nil || strings.TrimSpace(out) != "30" {
		t.Errorf("meter bands' rates %q, %v; want the one new band", out, err)
	}
}

// TestReconcileLeavesAForeignNameAlone: another controller's port group and meter hold
// the names ovnk's would take (upstream's own rows, say). Everything else of the zone
// is applied, the error names both, the foreign rows stay as they are; once they are
// gone, ovnk writes its own.
func TestReconcileLeavesAForeignNameAlone(t *testing.T) {
	nb, c, ctx := startNB(t)
	for _, args := range [][]string{
		{"pg-add", topology.IsolationPortGroup},
		{"meter-add", "acl-logging", "drop", "20", "pktps"},
	} {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	waitErr := testenv.Eventually(ctx, 10*time.Second, "the foreign rows in the cache", func(ctx context.Context) error {
		var pgs []*nbdb.PortGroup
		var meters []*nbdb.Meter
		if err := c.List(ctx, &pgs); err != nil {
			return err
		}
		if err := c.List(ctx, &meters); err != nil {
			return err
		}
		if len(pgs) == 0 || len(meters) == 0 {
			return errNotYet
		}
		return nil
	})
	if waitErr != nil {
		t.Fatal(waitErr)
	}
	r := &ovn.Reconciler{Client: c}
	desired := compile(t, topologytest.Layer3(), "node1").Rows
	_, err := r.Reconcile(ctx, desired, nil)
	if !errors.Is(err, ovn.ErrNameTaken) || !strings.Contains(err.Error(), topology.IsolationPortGroup) || !strings.Contains(err.Error(), "acl-logging") {
		t.Fatalf("reconcile with the names taken: %v", err)
	}
	var taken *ovn.NameTakenError
	if !errors.As(err, &taken) || taken.Network != "default" || taken.Holder == "" {
		t.Errorf("the error does not say whose row and which network: %#v", taken)
	}
	if out, err := nb.NBCtl(ctx, "--bare", "--columns=name", "list", "Logical_Router"); err != nil || !strings.Contains(out, "GR_node1") {
		t.Fatalf("the rest of the zone was not applied: %q %v", out, err)
	}
	if out, err := nb.NBCtl(ctx, "--bare", "--columns=ports,acls,external_ids", "find", "Port_Group", "name="+topology.IsolationPortGroup); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("the foreign port group was changed: %q %v", out, err)
	}
	for _, args := range [][]string{{"pg-del", topology.IsolationPortGroup}, {"meter-del", "acl-logging"}} {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	waitErr = testenv.Eventually(ctx, 10*time.Second, "the foreign rows gone from the cache", func(ctx context.Context) error {
		if _, err := r.Reconcile(ctx, desired, nil); errors.Is(err, ovn.ErrNameTaken) {
			return errNotYet
		} else if err != nil {
			return err
		}
		return nil
	})
	if waitErr != nil {
		t.Fatal(waitErr)
	}
	requireConverged(ctx, t, r, desired, nil)
}

// TestReconcileRenamesItsOwnRowInOneTransaction: ovnk's meter gets another identity
// (a new release's) under the same unique name. The old row must go in the same
// transaction as the new one comes, even when the diff is split into the smallest
// transactions, or the name index refuses the new one forever.
func TestReconcileRenamesItsOwnRowInOneTransaction(t *testing.T) {
	_, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c, MaxOperations: 1}
	desired := compile(t, topologytest.Layer3(), "node1").Rows
	requireConverged(ctx, t, r, desired, nil)

	meter := *desired.Meters[0]
	meter.UUID = "Meter:acl-logging:v2"
	meter.ExternalIDs = maps.Clone(meter.ExternalIDs)
	meter.ExternalIDs[rows.IDKey] = meter.UUID
	desired.Meters = []*nbdb.Meter{&meter}
	stats := requireConverged(ctx, t, r, desired, nil)
	// The band stays: the new meter refers to it in the transaction that drops the old.
	if stats.Deletes != 1 || stats.Inserts != 1 || stats.Transactions != 1 {
		t.Errorf("renaming the meter: %+v", stats)
	}
}

// TestReconcilePassesOverWhatNobodyChanged: a reconcile compares only the rows the NB
// changed since the last one, and those that are new to the desired set; what was
// changed behind ovnk's back is put back all the same.
func TestReconcilePassesOverWhatNobodyChanged(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	st := topologytest.Layer3()
	desired := compile(t, st, "node1").Rows
	requireConverged(ctx, t, r, desired, nil)
	stats, err := r.Reconcile(ctx, desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Compared != 0 || stats.Operations != 0 {
		t.Errorf("a reconcile of the set it just applied compared %d rows and sent %d operations, want none", stats.Compared, stats.Operations)
	}

	// Behind ovnk's back: a route's next hop, a switch's config, and a port removed.
	route := desired.Routes[0]
	behind := [][]string{
		{"set", "Logical_Router_Static_Route", uuidOf(ctx, t, nb, "Logical_Router_Static_Route", route.UUID), "nexthop=192.0.2.99"},
		{"set", "Logical_Switch", "node1", "other_config:subnet=192.0.2.0/24"},
		{"lsp-del", "k8s-node1"},
	}
	for _, args := range behind {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	compared := reconcileUntilConverged(ctx, t, r, desired, nil).Compared
	// The route, the switch, the port, and the switch's parents at most.
	if compared == 0 || compared > 10 {
		t.Errorf("putting back three changes compared %d of %d rows", compared, desired.Len())
	}

	// A changed row is compared, the others are not.
	next := compile(t, st, "node1").Rows
	stats, err = r.Reconcile(ctx, next, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Compared != next.Len() || stats.Operations != 0 {
		t.Errorf("a freshly compiled set of %d rows: compared %d, sent %d operations; want all compared, none sent", next.Len(), stats.Compared, stats.Operations)
	}
}

// uuidOf finds the UUID of the row of table whose identity is id.
func uuidOf(ctx context.Context, t *testing.T, nb *testenv.NB, table, id string) string {
	t.Helper()
	out, err := nb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", table, fmt.Sprintf("external_ids:%s=%q", rows.IDKey, id))
	if err != nil || strings.TrimSpace(out) == "" {
		t.Fatalf("no %s %s: %v", table, id, err)
	}
	return strings.TrimSpace(out)
}

// TestReconcileSaysANameIsTakenEveryTime: a root left out because another owner holds
// its name is reported by every reconcile of the same set, and written once the holder
// goes: the reconciler never takes that set as applied.
func TestReconcileSaysANameIsTakenEveryTime(t *testing.T) {
	nb, c, ctx := startNB(t)
	if _, err := nb.NBCtl(ctx, "pg-add", topology.IsolationPortGroup); err != nil {
		t.Fatal(err)
	}
	r := &ovn.Reconciler{Client: c}
	desired := compile(t, topologytest.Layer3(), "node1").Rows
	err := testenv.Eventually(ctx, 10*time.Second, "the name reported taken", func(ctx context.Context) error {
		_, err := r.Reconcile(ctx, desired, nil)
		if !errors.Is(err, ovn.ErrNameTaken) {
			return fmt.Errorf("reconcile: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := r.Reconcile(ctx, desired, nil); !errors.Is(err, ovn.ErrNameTaken) {
			t.Errorf("reconcile %d of the same set with the name still taken: %v, want ErrNameTaken", i+2, err)
		}
	}
	if _, err := nb.NBCtl(ctx, "pg-del", topology.IsolationPortGroup); err != nil {
		t.Fatal(err)
	}
	requireConverged(ctx, t, r, desired, nil)
}

// TestReconcileSeesARowReplacedInTheSet: a changed copy put in place of a row of the
// set it applied is written.
func TestReconcileSeesARowReplacedInTheSet(t *testing.T) {
	nb, c, ctx := startNB(t)
	r := &ovn.Reconciler{Client: c}
	desired := compile(t, topologytest.Layer3(), "node1").Rows
	requireConverged(ctx, t, r, desired, nil)
	band := *desired.MeterBands[0]
	band.Rate = 777
	desired.MeterBands[0] = &band
	requireConverged(ctx, t, r, desired, nil)
	if out, err := nb.NBCtl(ctx, "--bare", "--columns=rate", "list", "Meter_Band"); err != nil || strings.TrimSpace(out) != "777" {
		t.Errorf("meter band rate %q, %v; want 777", out, err)
	}
}

// TestReconcileInsertsARowListedTwiceOnce: a set whose router lists one route twice
// (as a generator of random zones may) gets that route once, in a set column OVSDB
// accepts, from the raw insert and from the reconciler alike.
func TestReconcileInsertsARowListedTwiceOnce(t *testing.T) {
	_, c, ctx := startNB(t)
	desired := compile(t, topologytest.Layer3(), "node1").Rows
	for _, lr := range desired.Routers {
		if len(lr.StaticRoutes) > 0 {
			twice := *lr
			twice.StaticRoutes = append(slices.Clone(lr.StaticRoutes), lr.StaticRoutes[0])
			*lr = twice
			break
		}
	}
	ops, err := ovn.InsertOps(c, desired)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ovn.Transact(ctx, c, ops); err != nil {
		t.Fatalf("the raw insert of a set listing a route twice: %v", err)
	}
	// The reconciler writes it once too, and then finds nothing to do.
	_, c2, ctx2 := startNB(t)
	r := &ovn.Reconciler{Client: c2}
	err = testenv.Eventually(ctx2, 10*time.Second, "a reconcile with nothing to send", func(ctx context.Context) error {
		stats, err := r.Reconcile(ctx, desired, nil)
		if err == nil && stats.Operations != 0 {
			return errNotYet
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
