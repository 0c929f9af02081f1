package nbfake_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/nbfake"
	"github.com/ovnk/ovnk/pkg/poll"
)

func TestDumpShowsWhatCommitted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nb := nbfake.Start(t)
	c := connect(ctx, t, nb.Endpoint())
	if _, err := ovn.Transact(ctx, c, switchWithPort("sw", portUUID, ovsdb.Row{"addresses": set("0a:58:0a:f4:00:05 10.244.0.5")})); err != nil {
		t.Fatal(err)
	}
	// Refused whole: the switch of the first operation is not there either.
	if _, err := ovn.Transact(ctx, c, ops(
		insert("Logical_Switch", ovsdb.Row{"name": "refused"}),
		insert("Logical_Switch", ovsdb.Row{"name": "refused-too", "ports": set(uuid(missingUUID))}),
	)); err == nil {
		t.Fatal("a transaction referring to a missing port committed")
	}

	got, err := nb.Dump()
	if err != nil {
		t.Fatal(err)
	}
	want := `Logical_Switch#0 name="sw" ports=Logical_Switch_Port#0
Logical_Switch_Port#0 addresses="0a:58:0a:f4:00:05 10.244.0.5" name="p1"
`
	if got != want {
		t.Errorf("Dump:\n%s\nwant:\n%s", got, want)
	}

	ports, err := nb.Rows("Logical_Switch_Port")
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 1 || ports[0]["_uuid"] != uuid(portUUID) || ports[0]["name"] != "p1" {
		t.Errorf("Rows(Logical_Switch_Port) = %v, want the one port p1 of UUID %s", ports, portUUID)
	}
	// Every column is there, at its default when nothing was written to it.
	if len(ports[0]) != len(nbdb.Schema().Tables["Logical_Switch_Port"].Columns)+1 {
		t.Errorf("Rows(Logical_Switch_Port) gave columns %v, want every column and _uuid", ports[0])
	}
}

func TestClientCacheFollowsTheFake(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := connect(ctx, t, nbfake.Start(t).Endpoint())
	if _, err := ovn.Transact(ctx, c, ops(insert("Logical_Router", ovsdb.Row{"name": "r"}))); err != nil {
		t.Fatal(err)
	}
	err := poll.Until(ctx, 10*time.Second, "router r in the client cache", func(ctx context.Context) error {
		var routers []nbdb.LogicalRouter
		if err := c.List(ctx, &routers); err != nil {
			return err
		}
		if len(routers) != 1 || routers[0].Name != "r" {
			return fmt.Errorf("the cache holds routers %v", routers)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNewRefusesASocketInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nb.sock")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if nb, err := nbfake.New(path); err == nil {
		nb.Close()
		t.Fatalf("New served on %s, where a file already is", path)
	}
}

func TestClosedFakeRefusesConnections(t *testing.T) {
	nb := nbfake.Start(t)
	nb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint()}, ConnectTimeout: 200 * time.Millisecond})
	if err == nil {
		c.Close()
		t.Fatal("connected to a closed fake")
	}
}
