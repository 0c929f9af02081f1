package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/google/uuid"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/pkg/poll"
)

// A node's system daemons, each in the node's namespace, their files in the node's
// directory. Where the OVS and OVN tools look by default, they find them: with
// OVS_RUNDIR and OVN_RUNDIR set to the directory (`ovnk-sandbox exec --node` does),
// `ovs-vsctl show`, `ovs-appctl -t ovs-vswitchd …` and `ovn-appctl -t ovn-controller …`
// need no options, as on an installed node. For that the daemons write their own pid
// files (<program>.pid, which the tools read, locked), besides the sandbox's
// (<short name>.pid, which Down reads). The OVN databases' sockets have the names
// ovn-central gives them, which the agent's DaemonSet expects in /var/run/ovn (the
// node's mount namespace puts this directory there).
const (
	ovsSocket = "db.sock" // the Open_vSwitch database, ovs-vsctl's default
	nbSocket  = "ovnnb_db.sock"
	sbSocket  = "ovnsb_db.sock"
	// longestSocket is the longest socket name a node directory gets: a daemon's
	// default control socket carries its pid, of up to 7 digits (pid_max 4194304).
	longestSocket = "ovn-controller.4194304.ctl"
)

// ovsEnv points the OVS and OVN programs' run, database, log and configuration
// directories at a node's directory, so nothing touches /var/run/openvswitch or /etc.
func ovsEnv(dir string) []string {
	var env []string
	for _, v := range []string{"OVS_RUNDIR", "OVS_DBDIR", "OVS_LOGDIR", "OVS_SYSCONFDIR", "OVN_RUNDIR", "OVN_DBDIR", "OVN_LOGDIR", "OVN_SYSCONFDIR"} {
		env = append(env, v+"="+dir)
	}
	return env
}

func (s *Sandbox) nodeDir(n Node) string { return filepath.Join(s.Dir, n.Dir) }

func (s *Sandbox) ovsdb(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" Open_vSwitch database", filepath.Join(n.Dir, "ovsdb"))
}
func (s *Sandbox) vswitchd(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" ovs-vswitchd", filepath.Join(n.Dir, "vswitchd"))
}
func (s *Sandbox) nb(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" NB", filepath.Join(n.Dir, "nb"))
}
func (s *Sandbox) sb(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" SB", filepath.Join(n.Dir, "sb"))
}
func (s *Sandbox) northd(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" ovn-northd", filepath.Join(n.Dir, "northd"))
}
func (s *Sandbox) controller(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" ovn-controller", filepath.Join(n.Dir, "controller"))
}

// defaultCtl is a readiness check for a daemon started without --unixctl: it serves on
// <dir>/<program>.<pid>.ctl once it runs.
func defaultCtl(d *daemon, dir, program string) func(context.Context) error {
	return func(ctx context.Context) error {
		pid := d.pid
		if pid == 0 {
			var err error
			if pid, err = d.readPID(); err != nil {
				return err
			}
		}
		return poll.Dials("unix", filepath.Join(dir, program+"."+strconv.Itoa(pid)+".ctl"))(ctx)
	}
}

// vsctl runs ovs-vsctl against the node's Open_vSwitch database; without --no-wait it
// returns once vswitchd has applied the change.
func (s *Sandbox) vsctl(bins binaries, n Node) func(ctx context.Context, args ...string) (string, error) {
	return func(ctx context.Context, args ...string) (string, error) {
		argv := append([]string{bins.program("ovs-vsctl"), "--db=" + n.OVSEndpoint, "--timeout=30"}, args...)
		return run(ctx, ovsEnv(s.nodeDir(n)), argv...)
	}
}

// startNodeServers starts a node's system daemons in its namespaces (network and mount:
// they see the node's /var/run/openvswitch and /var/run/ovn, which the addresses the
// agent hands ovn-controller name) and waits until each
// serves: the Open_vSwitch database (initialised as an install does, with a fresh
// system-id), ovs-vswitchd on the userspace datapath, the gateway bridge, the zone's NB
// and SB with ovn-northd between them, and ovn-controller, which waits by itself until
// the agent sets the external_ids it reads.
func (s *Sandbox) startNodeServers(ctx context.Context, bins binaries, n Node) error {
	dir := s.nodeDir(n)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory of node %s: %w", n.Name, err)
	}
	env := ovsEnv(dir)
	inNode := func(d *daemon, argv ...string) error {
		return d.startDetached(dir, env, s.inNodeArgv(n, argv...)...)
	}
	nbSchema, err := json.Marshal(nbdb.Schema())
	if err != nil {
		return fmt.Errorf("encode the NB schema: %w", err)
	}
	// The NB is created from the schema ovnk's models were generated from, the one the
	// agent is built for; SB and Open_vSwitch come from the release that runs them.
	nbSchemaPath := filepath.Join(dir, "ovn-nb.ovsschema")
	if err := os.WriteFile(nbSchemaPath, nbSchema, 0o644); err != nil {
		return fmt.Errorf("write the NB schema of node %s: %w", n.Name, err)
	}
	for db, schema := range map[string]string{"conf.db": bins.root.Schema(ovnroot.VSwitchSchema), "nb.db": nbSchemaPath, "sb.db": bins.root.Schema(ovnroot.SBSchema)} {
		if _, err := run(ctx, nil, bins.program("ovsdb-tool"), "create", filepath.Join(dir, db), schema); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}

	ovsdb := s.ovsdb(n)
	if err := inNode(ovsdb, bins.program("ovsdb-server"), filepath.Join(dir, "conf.db"), "--remote=punix:"+filepath.Join(dir, ovsSocket), "--pidfile"); err != nil {
		return err
	}
	if err := waitStarted(ctx, ovsdb, nbTimeout, "the Open_vSwitch database of "+n.Name, poll.Dials("unix", filepath.Join(dir, ovsSocket))); err != nil {
		return err
	}
	vsctl := s.vsctl(bins, n)
	// userspace-tso-enable is read only when vswitchd starts; without it TCP across
	// zones fails on checksums (ICMP works either way).
	if _, err := vsctl(ctx, "--no-wait", "init", "--", "set", "Open_vSwitch", ".",
		"other_config:userspace-tso-enable=true",
		"external_ids:system-id="+uuid.NewString(),
		"external_ids:hostname="+n.Name,
	); err != nil {
		return fmt.Errorf("node %s: initialise the Open_vSwitch database: %w", n.Name, err)
	}
	vswitchd := s.vswitchd(n)
	// --disable-system keeps vswitchd off the kernel datapath (there is no module here).
	if err := inNode(vswitchd, bins.program("ovs-vswitchd"), n.OVSEndpoint, "--disable-system", "--pidfile"); err != nil {
		return err
	}
	if err := waitStarted(ctx, vswitchd, nbTimeout, "ovs-vswitchd of "+n.Name, defaultCtl(vswitchd, dir, "ovs-vswitchd")); err != nil {
		return err
	}
	if err := s.installHost(ctx, n, vsctl); err != nil {
		return err
	}

	dbs := []struct {
		d            *daemon
		file, socket string
	}{{s.nb(n), "nb.db", nbSocket}, {s.sb(n), "sb.db", sbSocket}}
	for _, db := range dbs {
		if err := inNode(db.d, bins.program("ovsdb-server"), filepath.Join(dir, db.file),
			"--remote=punix:"+filepath.Join(dir, db.socket),
			"--unixctl="+db.d.base()+".ctl",
		); err != nil {
			return err
		}
	}
	for _, db := range dbs {
		if err := waitStarted(ctx, db.d, nbTimeout, db.d.name+" to accept connections", poll.Dials("unix", filepath.Join(dir, db.socket))); err != nil {
			return err
		}
	}
	northd := s.northd(n)
	if err := inNode(northd, bins.program("ovn-northd"), "--ovnnb-db="+n.NBEndpoint, "--ovnsb-db="+n.SBEndpoint, "--pidfile"); err != nil {
		return err
	}
	if err := waitStarted(ctx, northd, nbTimeout, "ovn-northd of "+n.Name, defaultCtl(northd, dir, "ovn-northd")); err != nil {
		return err
	}
	controller := s.controller(n)
	if err := inNode(controller, bins.program("ovn-controller"), n.OVSEndpoint, "--pidfile"); err != nil {
		return err
	}
	return waitStarted(ctx, controller, nbTimeout, "ovn-controller of "+n.Name, defaultCtl(controller, dir, "ovn-controller"))
}
