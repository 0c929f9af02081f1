package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/pkg/poll"
)

// startTimeout bounds how long any server may take to come up.
const startTimeout = 20 * time.Second

// DB is a standalone ovsdb-server serving one database on a unix socket.
type DB struct {
	Dir      string
	Socket   string
	Endpoint string // "unix:" + Socket, the OVSDB connection string
	Process  *Process
	ctlPath  string
	root     ovnroot.Root
}

// NB is a Northbound database created from the schema our models were generated from.
type NB struct{ *DB }

// StartNB starts a Northbound ovsdb-server whose database is created from nbdb.Schema(),
// so tests run against exactly what the models describe.
func StartNB(t testing.TB) *NB {
	t.Helper()
	schema, err := json.Marshal(nbdb.Schema())
	if err != nil {
		t.Fatalf("encode the modelled NB schema: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ovn-nb.ovsschema")
	if err := os.WriteFile(path, schema, 0o644); err != nil {
		t.Fatalf("write NB schema: %v", err)
	}
	return &NB{startDB(t, dir, "nb", path)}
}

// StartNBFromSchema starts a Northbound ovsdb-server from a schema file, such as a newer
// OVN release's, to show our client works against servers it was not generated from.
func StartNBFromSchema(t testing.TB, schemaPath string) *NB {
	t.Helper()
	return &NB{startDB(t, t.TempDir(), "nb", schemaPath)}
}

func startDB(t testing.TB, dir, name, schemaPath string) *DB {
	t.Helper()
	root := NeedOVN(t)
	server, tool := ovnProgram(t, "ovsdb-server"), ovnProgram(t, "ovsdb-tool")
	dbFile := filepath.Join(dir, name+".db")
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if _, err := run(ctx, nil, tool, "create", dbFile, schemaPath); err != nil {
		t.Fatalf("create %s database from %s: %v", name, schemaPath, err)
	}
	db := &DB{
		Dir:     dir,
		Socket:  filepath.Join(dir, name+".sock"),
		ctlPath: filepath.Join(dir, name+".ctl"),
		root:    root,
	}
	db.Endpoint = "unix:" + db.Socket
	p, err := startProcess(dir, "ovsdb-server-"+name, ovsEnv(dir),
		server, dbFile,
		"--remote=punix:"+db.Socket,
		"--unixctl="+db.ctlPath,
		"--pidfile="+filepath.Join(dir, name+".pid"),
		"--log-file="+filepath.Join(dir, "ovsdb-server-"+name+".vlog"),
	)
	if err != nil {
		t.Fatalf("%v", err)
	}
	db.Process = p
	t.Cleanup(p.Stop)
	if err := waitForSocket(ctx, p, db.Socket); err != nil {
		t.Fatalf("%s ovsdb-server: %v\n%s", name, err, p.LogTail(20))
	}
	return db
}

// NBCtl runs ovn-nbctl against the database and returns its output.
func (nb *NB) NBCtl(ctx context.Context, args ...string) (string, error) {
	ctl, err := nb.root.Program("ovn-nbctl")
	if err != nil {
		return "", err
	}
	return run(ctx, ovsEnv(nb.Dir), append([]string{ctl, "--db=" + nb.Endpoint, "--no-leader-only"}, args...)...)
}

// Northd is ovn-northd compiling a Northbound database into its own Southbound one.
type Northd struct {
	NB *NB
	SB *DB
	// Process is the ovn-northd the test started; nil for ZoneAt's.
	Process *Process
	dir     string
}

// ZoneAt is a zone whose servers the test did not start (a sandbox node's): its NB and
// SB at their endpoints, and the ovn-northd already running between them. The tools
// run against it keep their files in a directory of the test's.
func ZoneAt(t testing.TB, nbEndpoint, sbEndpoint string) *Northd {
	t.Helper()
	root := NeedOVN(t)
	dir := t.TempDir()
	db := func(endpoint string) *DB {
		return &DB{Dir: dir, Socket: strings.TrimPrefix(endpoint, "unix:"), Endpoint: endpoint, root: root}
	}
	return &Northd{NB: &NB{db(nbEndpoint)}, SB: db(sbEndpoint), dir: dir}
}

// StartNorthd starts a Southbound ovsdb-server and ovn-northd between it and nb.
func StartNorthd(t testing.TB, nb *NB) *Northd {
	t.Helper()
	root := NeedOVN(t)
	northd := ovnProgram(t, "ovn-northd")
	dir := t.TempDir()
	sb := startDB(t, dir, "sb", root.Schema(ovnroot.SBSchema))
	p, err := startProcess(dir, "ovn-northd", ovsEnv(dir),
		northd,
		"--ovnnb-db="+nb.Endpoint,
		"--ovnsb-db="+sb.Endpoint,
		"--unixctl="+filepath.Join(dir, "northd.ctl"),
		"--pidfile="+filepath.Join(dir, "northd.pid"),
		"--log-file="+filepath.Join(dir, "ovn-northd.vlog"),
	)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(p.Stop)
	n := &Northd{NB: nb, SB: sb, Process: p, dir: dir}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := n.Sync(ctx); err != nil {
		t.Fatalf("ovn-northd did not come up: %v\n%s", err, p.LogTail(20))
	}
	return n
}

// Sync waits until northd has compiled everything written to the NB so far into the SB.
func (n *Northd) Sync(ctx context.Context) error {
	if n.Process != nil {
		if done, err := n.Process.Exited(); done {
			return fmt.Errorf("ovn-northd exited: %v", err)
		}
	}
	_, err := n.NB.NBCtl(ctx, "--wait=sb", "--timeout="+deadlineSeconds(ctx), "sync")
	return err
}

// SBCtl runs ovn-sbctl against the Southbound database.
func (n *Northd) SBCtl(ctx context.Context, args ...string) (string, error) {
	ctl, err := n.SB.root.Program("ovn-sbctl")
	if err != nil {
		return "", err
	}
	return run(ctx, ovsEnv(n.dir), append([]string{ctl, "--db=" + n.SB.Endpoint, "--no-leader-only"}, args...)...)
}

// LearnNeighbor records in the Southbound MAC_Binding table that a router port has
// learned ip at mac, as ovn-controller does after an ARP or ND exchange. ovn-trace
// resolves next hops from that table, so a trace towards an external gateway continues
// past address resolution instead of ending in an ARP request.
func (n *Northd) LearnNeighbor(ctx context.Context, router, port, ip, mac string) error {
	if err := n.Sync(ctx); err != nil {
		return err
	}
	dp, err := n.SBCtl(ctx, "--bare", "--columns=_uuid", "find", "Datapath_Binding", "external_ids:name="+router)
	if err != nil {
		return err
	}
	dp = strings.TrimSpace(dp)
	if dp == "" {
		return fmt.Errorf("router %s has no Southbound datapath", router)
	}
	// A fresh timestamp keeps northd's MAC binding ageing from removing the row at once.
	_, err = n.SBCtl(ctx, "create", "MAC_Binding", "datapath="+dp, "logical_port="+port, "ip="+strconv.Quote(ip), "mac="+strconv.Quote(mac),
		fmt.Sprintf("timestamp=%d", time.Now().UnixMilli()))
	return err
}

// TraceResult is what ovn-trace said about one microflow.
type TraceResult struct {
	// Output is ovn-trace's full, detailed text, for failure messages.
	Output string
	// OutputPorts lists the logical ports the packet left the logical network through,
	// in order: every output except the patch ports between switches and routers.
	OutputPorts []string
	// Hops lists every output, patch ports included, as "port (type)".
	Hops []string
	// Dropped is true when the packet left through no port.
	Dropped bool
}

// FinalPort returns the last logical port the packet was delivered to, or "".
func (r TraceResult) FinalPort() string {
	if len(r.OutputPorts) == 0 {
		return ""
	}
	return r.OutputPorts[len(r.OutputPorts)-1]
}

// ovn-trace marks every output to a logical port with a comment such as
// `/* output to "ls1-vm1", type "" */`; patch ports lead on to another datapath.
var traceOutputRe = regexp.MustCompile(`output to "([^"]+)", type "([^"]*)"`)

// Trace runs ovn-trace on a microflow entering datapath, after waiting for northd to
// compile what the NB holds now.
func (n *Northd) Trace(ctx context.Context, datapath, microflow string) (TraceResult, error) {
	out, err := n.TraceRaw(ctx, datapath, microflow, "--detailed")
	if err != nil {
		return TraceResult{Output: out}, err
	}
	res := TraceResult{Output: out}
	for _, m := range traceOutputRe.FindAllStringSubmatch(out, -1) {
		res.Hops = append(res.Hops, fmt.Sprintf("%s (%s)", m[1], m[2]))
		if m[2] != "patch" {
			res.OutputPorts = append(res.OutputPorts, m[1])
		}
	}
	res.Dropped = len(res.OutputPorts) == 0
	return res, nil
}

// TraceRaw runs ovn-trace with flags (an output format such as --minimal, --summary
// or --detailed, and e.g. --ct=new) on a microflow entering datapath, after waiting
// for northd to compile what the NB holds now, and returns its text.
func (n *Northd) TraceRaw(ctx context.Context, datapath, microflow string, flags ...string) (string, error) {
	if err := n.Sync(ctx); err != nil {
		return "", fmt.Errorf("sync before trace: %w", err)
	}
	trace, err := n.SB.root.Program("ovn-trace")
	if err != nil {
		return "", err
	}
	args := append(append([]string{trace, "--db=" + n.SB.Endpoint}, flags...), datapath, microflow)
	out, err := run(ctx, ovsEnv(n.dir), args...)
	if err != nil {
		return out, fmt.Errorf("ovn-trace %s %q: %w", datapath, microflow, err)
	}
	return out, nil
}

// ovsEnv points the OVS and OVN tools' run, database and log directories at dir, so
// nothing touches /var/run/openvswitch or /var/run/ovn.
func ovsEnv(dir string) []string {
	return []string{"OVS_RUNDIR=" + dir, "OVS_DBDIR=" + dir, "OVS_LOGDIR=" + dir, "OVN_RUNDIR=" + dir, "OVS_SYSCONFDIR=" + dir}
}

// waitForSocket waits until a server accepts connections on its unix socket, failing
// early if it exits. The socket file appears when the server binds it, a moment before
// it listens, so only a successful connection proves the server is ready.
func waitForSocket(ctx context.Context, p *Process, socket string) error {
	return waitRunning(ctx, p, startTimeout, socket, poll.Dials("unix", socket))
}

// deadlineSeconds turns the context's deadline into the whole seconds OVS tools accept.
func deadlineSeconds(ctx context.Context) string {
	d, ok := ctx.Deadline()
	if !ok {
		return "30"
	}
	s := int(time.Until(d).Seconds())
	if s < 1 {
		s = 1
	}
	return fmt.Sprint(s)
}
