package zone

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

const (
	cnc   = "colored-enterprise"
	blue  = "blue_blue-network"
	green = "green_green-network"
)

// zoneNB is a real NB and the reconciler the agent would use on it.
type zoneNB struct {
	t *testing.T
	r *ovn.Reconciler
}

func startZoneNB(t *testing.T) *zoneNB {
	nb := testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &zoneNB{t: t, r: &ovn.Reconciler{Client: c}}
}

var errNotYet = errors.New("the client's cache does not show the last transaction yet")

// apply does what the agent's reconcile does with a state and the builder's errors —
// compile ovn-worker's zone, reconcile with Keep — and waits until a further reconcile
// has nothing to send. It returns the rows ovnk then owns.
func (z *zoneNB) apply(st *cluster.State, buildErrs ...error) *rows.Set {
	t := z.t
	t.Helper()
	res, err := topology.Compile(st, "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	keep := Keep(buildErrs, res.NotCompiled)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := z.r.Reconcile(ctx, res.Rows, keep); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 10*time.Second, "a reconcile with nothing to send", func(ctx context.Context) error {
		stats, err := z.r.Reconcile(ctx, res.Rows, keep)
		if err == nil && stats.Operations != 0 {
			return errNotYet
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	owned, err := ovn.OwnedSnapshot(ctx, z.r.Client)
	if err != nil {
		t.Fatal(err)
	}
	return owned
}

// connectRowIDs lists the identities of the owned rows that belong to the connect, and
// of the rows referenced by the routers (so that a row dropped from its router but not
// deleted would show).
func connectRowIDs(s *rows.Set) []string {
	var out []string
	add := func(ids map[string]string) {
		if name, ok := topology.ConnectOf(ids); ok && name == cnc {
			out = append(out, ids[rows.IDKey])
		}
	}
	referenced := map[string]bool{}
	for _, lr := range s.Routers {
		add(lr.ExternalIDs)
		for _, ref := range slices.Concat(lr.Ports, lr.StaticRoutes, lr.Policies) {
			referenced[ref] = true
		}
	}
	for _, p := range s.RouterPorts {
		if referenced[p.UUID] {
			add(p.ExternalIDs)
		}
	}
	for _, r := range s.Routes {
		if referenced[r.UUID] {
			add(r.ExternalIDs)
		}
	}
	for _, p := range s.Policies {
		if referenced[p.UUID] {
			add(p.ExternalIDs)
		}
	}
	slices.Sort(out)
	return out
}

func desiredConnectRows(t *testing.T, st *cluster.State) []string {
	t.Helper()
	res, err := topology.Compile(st, "ovn-worker")
	if err != nil {
		t.Fatal(err)
	}
	return connectRowIDs(res.Rows)
}

// TestKeepRemovesDisconnectedRowsAndKeepsUnreadableOnes drives a real NB through what
// happens to a ClusterNetworkConnect: created, unreadable (its rows stay), a network
// unselected (that network's rows go, in both directions), a selected network the
// builder leaves out (its rows stay), and deleted (every row goes).
func TestKeepRemovesDisconnectedRowsAndKeepsUnreadableOnes(t *testing.T) {
	z := startZoneNB(t)
	connected := topologytest.OKEP5224()
	all := desiredConnectRows(t, connected)
	if len(all) < 10 {
		t.Fatalf("only %d connect rows compiled: %v", len(all), all)
	}
	requireRows := func(step string, got *rows.Set, want []string) {
		t.Helper()
		if have := connectRowIDs(got); !slices.Equal(have, want) {
			t.Errorf("%s: the NB holds connect rows\n%v\nwant\n%v", step, have, want)
		}
	}
	requireRows("connected", z.apply(connected), all)

	unreadable := topologytest.OKEP5224()
	unreadable.Connects = nil
	badCNC := &cluster.ObjectError{Object: cluster.ObjectRef{Kind: "ClusterNetworkConnect", Name: cnc},
		Annotation: cluster.AnnotationConnectSubnets, Err: errors.New("not JSON")}
	requireRows("the connect unreadable", z.apply(unreadable, badCNC), all)

	greenOnly := topologytest.OKEP5224()
	greenOnly.Connects[0].Networks = []string{green}
	wantGreen := desiredConnectRows(t, greenOnly)
	got := z.apply(greenOnly)
	requireRows("blue unselected", got, wantGreen)
	for _, p := range got.Policies {
		if p.ExternalIDs[topology.DestinationNetworkKey] == blue {
			t.Errorf("blue unselected: green's policy toward blue remains: %s", p.Match)
		}
	}

	// Blue is back in the connect, then its UDN becomes unreadable: the builder leaves
	// blue out of the state (and so out of the connect), and its connect rows stay —
	// green's policy toward blue included.
	z.apply(connected)
	blueUnreadable := topologytest.OKEP5224()
	blueUnreadable.Networks = slices.DeleteFunc(blueUnreadable.Networks, func(n *cluster.Network) bool { return n.Name == blue })
	blueUnreadable.Connects[0].Networks = []string{green}
	badUDN := &cluster.ObjectError{Object: cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: "blue", Name: "blue-network"},
		Annotation: "k8s.ovn.org/network-id", Err: errors.New("not a number")}
	requireRows("blue unreadable", z.apply(blueUnreadable, badUDN), all)

	deleted := topologytest.OKEP5224()
	deleted.Connects = nil
	got = z.apply(deleted)
	requireRows("the connect deleted", got, nil)
	for _, s := range [][]map[string]string{idsOf(got.Routers), idsOf(got.RouterPorts), idsOf(got.Routes), idsOf(got.Policies)} {
		for _, ids := range s {
			if ids[rows.OwnerTypeKey] == topology.ConnectOwnerType {
				t.Errorf("the connect deleted: row %s remains", ids[rows.IDKey])
			}
		}
	}
}

func idsOf[T interface{ GetExternalIDs() map[string]string }](rs []T) []map[string]string {
	out := make([]map[string]string, len(rs))
	for i, r := range rs {
		out[i] = r.GetExternalIDs()
	}
	return out
}

// TestNameConflictsAreReportedByNetwork: rows left out for a name another owner holds
// become their network's zone status; any other reconcile error stays an error.
func TestNameConflictsAreReportedByNetwork(t *testing.T) {
	pg := &ovn.NameTakenError{Table: "Port_Group", Name: topology.IsolationPortGroup, Network: "default", Holder: "u1"}
	meter := &ovn.NameTakenError{Table: "Meter", Name: "acl-logging", Network: "default", Holder: "u2", Owner: "default-network-controller"}
	got, err := nameConflicts(errors.Join(pg, meter))
	if err != nil || len(got) != 1 || got["default"] != pg.Error()+"; "+meter.Error() {
		t.Errorf("conflicts %v, %v", got, err)
	}
	other := errors.New("apply 10 of 10 operations: connection refused")
	if _, err := nameConflicts(errors.Join(pg, other)); err == nil {
		t.Error("a failed transaction was taken for a name conflict")
	}
	if _, err := nameConflicts(other); err != other {
		t.Errorf("a plain error came back as %v", err)
	}
}
