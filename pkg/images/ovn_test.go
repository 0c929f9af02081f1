package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ociarchive"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// ovnInputs are what the OVN image is made of: the OVN root and busybox.
func ovnInputs(t *testing.T) Inputs {
	t.Helper()
	root := testenv.NeedOVN(t)
	if _, err := os.Stat(BusyboxPath); err != nil {
		testenv.Missing(t, "busybox-static: %v", err)
	}
	return Inputs{Busybox: BusyboxPath, OVNRoot: root}
}

// writeOVN writes the OVN image's archive into a temporary directory.
func writeOVN(t *testing.T) string {
	t.Helper()
	img, err := OVN(ovnInputs(t))
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "ovn-daemonset.tar")
	if _, err := ociarchive.WriteFile(context.Background(), archive, img); err != nil {
		t.Fatal(err)
	}
	return archive
}

// TestOVNImageIsSelfContained reads the OVN image back: its programs, their loader and
// libraries, the schemas and the entry script are in it, and nothing is missing.
func TestOVNImageIsSelfContained(t *testing.T) {
	contents, l := readLayer(t, writeOVN(t))
	if contents.Config.Entrypoint != nil {
		t.Errorf("entrypoint %v: the DaemonSet names the command", contents.Config.Entrypoint)
	}
	l.checkSelfContained(t, OVNImage)
	for _, p := range append([]string{OVNEntryPath, "/usr/share/ovn/ovn-nb.ovsschema", "/usr/share/ovn/ovn-sb.ovsschema", "/bin/sh"}, OVNPrograms...) {
		if _, err := l.resolve(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := OVN(Inputs{Busybox: BusyboxPath}); err == nil || !strings.Contains(err.Error(), "no OVN root given") {
		t.Errorf("without an OVN root: %v", err)
	}
}

// TestContainerdRunsTheOVNImage runs the OVN image under a real containerd as
// upstream's ovnkube-node runs its containers — the NB, the SB and northd, each its own
// container started by the entry script, sharing the node's OVN run directory — and
// reads the NB from inside its container with the plugin's query: the dump must equal
// what a libovsdb client on the node reads, and northd must have compiled the zone.
func TestContainerdRunsTheOVNImage(t *testing.T) {
	archive := writeOVN(t)
	c := startContainerd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.ctr(ctx, "images", "import", archive); err != nil {
		t.Fatal(err)
	}
	// The node's OVN run directory; short, for the sockets in it.
	run, err := os.MkdirTemp("", "ovnrun")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	mount := "type=bind,src=" + run + ",dst=/var/run/ovn,options=rbind:rw"
	start := func(command string) string {
		id := fmt.Sprintf("ovn-%s-%d", command, os.Getpid())
		argv := c.ctrArgv(c.runArgs(id, "--mount", mount)...)
		testenv.StartProcess(t, c.dir, id, nil, append(argv, OVNImage, id, OVNEntryPath, command)...)
		return id
	}
	nbID := start("local-nb-ovsdb")
	sbID := start("local-sb-ovsdb")
	nbSocket, sbSocket := filepath.Join(run, "ovnnb_db.sock"), filepath.Join(run, "ovnsb_db.sock")
	for _, s := range []string{nbSocket, sbSocket} {
		if err := testenv.Eventually(ctx, 30*time.Second, s+" served", func(context.Context) error { _, err := os.Stat(s); return err }); err != nil {
			t.Fatal(err)
		}
	}
	nb, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{"unix:" + nbSocket}})
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	res, err := topology.Compile(topologytest.Layer3(), "node1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&ovn.Reconciler{Client: nb}).Reconcile(ctx, res.Rows, nil); err != nil {
		t.Fatal(err)
	}

	query, err := ovn.DumpQuery()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.ctr(ctx, "tasks", "exec", "--exec-id", "query", "--fifo-dir", filepath.Join(c.dir, "fifo"),
		nbID, "ovsdb-client", "--timeout=30", "query", "unix:/var/run/ovn/ovnnb_db.sock", string(query))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ovn.DumpFromQuery("node1", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{"unix:" + nbSocket}})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	want, err := ovn.TakeDump(ctx, fresh, "node1")
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Tables["Logical_Router"]) == 0 {
		t.Fatalf("the NB holds no routers: %v", want.Tables)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the dump read inside the NB's container differs from the node's:\n got %v\nwant %v", got, want)
	}

	// northd, in its own container, compiles the NB into the SB: a datapath per router.
	// It starts only now: it writes into the NB (ports' up, the router ports' status),
	// which would race the comparison above.
	start("run-ovn-northd")
	err = testenv.Eventually(ctx, 30*time.Second, "northd's datapath of ovn_cluster_router", func(ctx context.Context) error {
		out, err := c.ctr(ctx, "tasks", "exec", "--exec-id", fmt.Sprintf("sbctl-%d", time.Now().UnixNano()), "--fifo-dir", filepath.Join(c.dir, "fifo"),
			sbID, "ovn-sbctl", "--db=unix:/var/run/ovn/ovnsb_db.sock", "--bare", "--columns=external_ids", "list", "Datapath_Binding")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "name=ovn_cluster_router") {
			return fmt.Errorf("datapaths:\n%s", out)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
