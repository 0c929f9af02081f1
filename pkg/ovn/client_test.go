package ovn_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/test/testenv"
)

func connect(t testing.TB, nb *testenv.NB) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}, LeaderOnly: true})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// startNB starts a real NB, connects to it, and returns both with a context of a minute
// for the test.
func startNB(t *testing.T) (*testenv.NB, client.Client, context.Context) {
	t.Helper()
	nb := testenv.StartNB(t)
	c := connect(t, nb)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return nb, c, ctx
}

// createRouter writes a router through our client and returns nothing but errors:
// callers look at the database with other tools.
func createRouter(ctx context.Context, c client.Client, name string) error {
	ops, err := c.Create(&nbdb.LogicalRouter{
		Name:        name,
		ExternalIDs: map[string]string{"k8s.ovn.org/owner-controller": "ovnk-test"},
	})
	if err != nil {
		return fmt.Errorf("build create: %w", err)
	}
	_, err = ovn.Transact(ctx, c, ops)
	return err
}

// routerInCache waits until the client's cache holds a router of that name.
func routerInCache(ctx context.Context, c client.Client, name string) (*nbdb.LogicalRouter, error) {
	var found *nbdb.LogicalRouter
	err := testenv.Eventually(ctx, 10*time.Second, "router "+name+" in the client cache", func(ctx context.Context) error {
		var routers []*nbdb.LogicalRouter
		if err := c.WhereCache(func(r *nbdb.LogicalRouter) bool { return r.Name == name }).List(ctx, &routers); err != nil {
			return err
		}
		if len(routers) != 1 {
			return fmt.Errorf("%d routers named %s in the cache", len(routers), name)
		}
		found = routers[0]
		return nil
	})
	return found, err
}

func TestClientAndNBCtlSeeEachOthersRows(t *testing.T) {
	nb := testenv.StartNB(t)
	c := connect(t, nb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if err := createRouter(ctx, c, "lr-from-libovsdb"); err != nil {
		t.Fatal(err)
	}
	show, err := nb.NBCtl(ctx, "show")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show, `router `) || !strings.Contains(show, `(lr-from-libovsdb)`) {
		t.Errorf("ovn-nbctl show does not list the router written by our client:\n%s", show)
	}
	ids, err := nb.NBCtl(ctx, "get", "Logical_Router", "lr-from-libovsdb", "external_ids:k8s.ovn.org/owner-controller")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Trim(strings.TrimSpace(ids), `"`); got != "ovnk-test" {
		t.Errorf("owner key read back by ovn-nbctl = %q, want ovnk-test", got)
	}

	if _, err := nb.NBCtl(ctx, "lr-add", "lr-from-nbctl", "--", "set", "Logical_Router", "lr-from-nbctl", "options:chassis=chassis-a"); err != nil {
		t.Fatal(err)
	}
	r, err := routerInCache(ctx, c, "lr-from-nbctl")
	if err != nil {
		t.Fatal(err)
	}
	if r.Options["chassis"] != "chassis-a" {
		t.Errorf("router written by ovn-nbctl has options %v in our cache, want chassis=chassis-a", r.Options)
	}
}

func TestClientMonitorsOnlyModelledColumns(t *testing.T) {
	cols := ovn.ModelledColumns("Logical_Router_Port")
	for _, want := range []string{"name", "mac", "networks", "peer", "options", "external_ids"} {
		if !contains(cols, want) {
			t.Errorf("Logical_Router_Port columns %v lack %q", cols, want)
		}
	}
	for _, c := range cols {
		if strings.HasPrefix(c, "_") {
			t.Errorf("column %q is implicit and must not be requested", c)
		}
	}
	if got := ovn.ModelledColumns("No_Such_Table"); got != nil {
		t.Errorf("unknown table gave columns %v", got)
	}
}

// TestClientWorksWithNewerSchema runs the client against a database created from a
// newer OVN release's schema (26.03, 7.18.0), which has columns and tables ours lacks.
func TestClientWorksWithNewerSchema(t *testing.T) {
	schema := sharedSchema(t, "ovn-nb-7.18.0.ovsschema")
	nb := testenv.StartNBFromSchema(t, schema)
	c := connect(t, nb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if _, err := nb.NBCtl(ctx, "lr-add", "newer-a", "--", "lrp-add", "newer-a", "newer-a-p0", "0a:58:0a:00:00:01", "10.0.0.1/24"); err != nil {
		t.Fatal(err)
	}
	if _, err := routerInCache(ctx, c, "newer-a"); err != nil {
		t.Fatal(err)
	}
	var ports []*nbdb.LogicalRouterPort
	if err := c.List(ctx, &ports); err != nil {
		t.Fatal(err)
	}
	if len(ports) != 1 || ports[0].MAC != "0a:58:0a:00:00:01" || len(ports[0].Networks) != 1 || ports[0].Networks[0] != "10.0.0.1/24" {
		t.Errorf("router port read from the newer schema = %+v", ports)
	}
	if err := createRouter(ctx, c, "newer-b"); err != nil {
		t.Fatalf("write to a newer-schema NB: %v", err)
	}
	list, err := nb.NBCtl(ctx, "lr-list")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, "(newer-b)") {
		t.Errorf("ovn-nbctl lr-list lacks the router our client wrote:\n%s", list)
	}
}

// sharedSchema finds a schema in the shared/ovn directory that sits beside the
// repository: the test reads it, the product never does.
func sharedSchema(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "ovn", name)
	if _, err := os.Stat(path); err != nil {
		testenv.Missing(t, "schema %s not found beside the repository: %v", name, err)
	}
	return path
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestConnectNBErrorNamesTheEndpointOnce: a Northbound that is not there is an error
// naming its endpoint once and saying why, not the endpoint three times over (ours,
// libovsdb's and the dial error's).
func TestConnectNBErrorNamesTheEndpointOnce(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ovnnb_db.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{"unix:" + sock}, ConnectTimeout: time.Second})
	want := "connect to NB unix:" + sock + ": dial: connect: no such file or directory"
	if err == nil || err.Error() != want {
		t.Fatalf("ConnectNB to a missing socket: %v, want %q", err, want)
	}
}
