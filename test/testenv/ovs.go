package testenv

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovnroot"
)

// OVS is an ovs-vswitchd with the userspace (netdev) datapath and its own ovsdb-server.
// It runs in a network namespace of its own, so the tap devices of its bridges never
// clash with the host's or another test's interfaces, and no kernel module is needed.
type OVS struct {
	DB      *DB
	Process *Process
	dir     string
	ctlPath string
}

// StartOVS starts ovsdb-server with a fresh Open_vSwitch database and ovs-vswitchd.
func StartOVS(t testing.TB) *OVS {
	t.Helper()
	return startOVS(t, nil, nil)
}

// StartOVSInNetns starts ovsdb-server and ovs-vswitchd like StartOVS, but vswitchd runs
// inside the named namespace ns, so the namespace's links (an underlay veth, pods'
// veths) can be its ports and its bridges' tap devices appear there. otherConfig is
// written to Open_vSwitch other_config before vswitchd starts (some settings, such as
// userspace-tso-enable, are only read at start).
func StartOVSInNetns(t testing.TB, ns *Netns, otherConfig map[string]string) *OVS {
	t.Helper()
	return startOVS(t, ns, otherConfig)
}

func startOVS(t testing.TB, ns *Netns, otherConfig map[string]string) *OVS {
	t.Helper()
	NeedRoot(t, "ovs-vswitchd creates tap devices for its bridges")
	var wrap []string
	if ns == nil {
		wrap = []string{NeedBinaries(t, "unshare")["unshare"], "--net", "--"}
	} else {
		wrap = []string{"ip", "netns", "exec", ns.Name}
	}
	vswitchd := ovnProgram(t, "ovs-vswitchd")
	dir := t.TempDir()
	db := startDB(t, dir, "conf", NeedOVN(t).Schema(ovnroot.VSwitchSchema))
	o := &OVS{DB: db, dir: dir, ctlPath: filepath.Join(dir, "ovs-vswitchd.ctl")}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if _, err := o.VSCtl(ctx, "--no-wait", "init"); err != nil {
		t.Fatalf("initialise the Open_vSwitch database: %v", err)
	}
	for k, v := range otherConfig {
		if _, err := o.VSCtl(ctx, "--no-wait", "set", "Open_vSwitch", ".", "other_config:"+k+"="+v); err != nil {
			t.Fatalf("set other_config:%s: %v", k, err)
		}
	}
	// --disable-system keeps vswitchd off the kernel datapath entirely.
	argv := append(wrap, vswitchd, db.Endpoint,
		"--disable-system",
		"--unixctl="+o.ctlPath,
		"--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"),
		"--log-file="+filepath.Join(dir, "ovs-vswitchd.vlog"),
	)
	p, err := startProcess(dir, "ovs-vswitchd", ovsEnv(dir), argv...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	o.Process = p
	t.Cleanup(p.Stop)
	if err := waitForSocket(ctx, p, o.ctlPath); err != nil {
		t.Fatalf("ovs-vswitchd: %v\n%s", err, p.LogTail(20))
	}
	return o
}

// Dir is the run directory of this OVS (its databases, control sockets and the bridges'
// OpenFlow management sockets); OVN's ovn-controller must use it as its OVS_RUNDIR.
func (o *OVS) Dir() string { return o.dir }

// Env returns the environment that points OVS and OVN tools at this instance's run
// directory.
func (o *OVS) Env() []string { return ovsEnv(o.dir) }

// VSCtl runs ovs-vsctl against this instance's database.
func (o *OVS) VSCtl(ctx context.Context, args ...string) (string, error) {
	return o.tool(ctx, "ovs-vsctl", append([]string{"--db=" + o.DB.Endpoint, "--timeout=" + deadlineSeconds(ctx)}, args...)...)
}

// AppCtl sends a command to ovs-vswitchd's control socket.
func (o *OVS) AppCtl(ctx context.Context, args ...string) (string, error) {
	return o.tool(ctx, "ovs-appctl", append([]string{"-t", o.ctlPath}, args...)...)
}

func (o *OVS) tool(ctx context.Context, name string, args ...string) (string, error) {
	path, err := o.DB.root.Program(name)
	if err != nil {
		return "", err
	}
	return run(ctx, ovsEnv(o.dir), append([]string{path}, args...)...)
}

// Bridge is an OpenFlow bridge on the userspace datapath.
type Bridge struct {
	Name string
	ovs  *OVS
}

// AddBridge creates a netdev bridge and waits until vswitchd has set it up.
func (o *OVS) AddBridge(ctx context.Context, name string) (*Bridge, error) {
	if _, err := o.VSCtl(ctx, "add-br", name, "--", "set", "Bridge", name, "datapath_type=netdev"); err != nil {
		return nil, fmt.Errorf("add bridge %s: %w", name, err)
	}
	return &Bridge{Name: name, ovs: o}, nil
}

// AddPatchPair joins two bridges (or one bridge to itself) with a pair of patch ports
// at the requested OpenFlow port numbers. Patch ports need no device, so they behave
// the same on every machine.
func (o *OVS) AddPatchPair(ctx context.Context, a *Bridge, aPort string, aOfport int, b *Bridge, bPort string, bOfport int) error {
	_, err := o.VSCtl(ctx,
		"add-port", a.Name, aPort, "--", "set", "Interface", aPort, "type=patch", "options:peer="+bPort, fmt.Sprintf("ofport_request=%d", aOfport),
		"--", "add-port", b.Name, bPort, "--", "set", "Interface", bPort, "type=patch", "options:peer="+aPort, fmt.Sprintf("ofport_request=%d", bOfport),
	)
	if err != nil {
		return fmt.Errorf("add patch ports %s<->%s: %w", aPort, bPort, err)
	}
	return nil
}

// OFCtl runs ovs-ofctl on the bridge, speaking OpenFlow 1.5 so every match and action
// the agent may use is accepted.
func (b *Bridge) OFCtl(ctx context.Context, args ...string) (string, error) {
	sub, rest := args[0], args[1:]
	return b.ovs.tool(ctx, "ovs-ofctl", append([]string{"-O", "OpenFlow15", sub, b.mgmt()}, rest...)...)
}

// mgmt is the bridge's OpenFlow management socket, created by vswitchd in its run dir.
func (b *Bridge) mgmt() string { return filepath.Join(b.ovs.dir, b.Name+".mgmt") }

// DumpFlows returns the bridge's flows without the counters that change from run to
// run (duration, packet and byte counts), one flow a line, in table and priority order.
func (b *Bridge) DumpFlows(ctx context.Context, filters ...string) ([]string, error) {
	out, err := b.OFCtl(ctx, append([]string{"dump-flows", "--no-stats", "--sort"}, filters...)...)
	if err != nil {
		return nil, fmt.Errorf("dump flows of %s: %w", b.Name, err)
	}
	var flows []string
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "OFPST_FLOW") && !strings.HasPrefix(line, "NXST_FLOW") {
			flows = append(flows, line)
		}
	}
	return flows, nil
}

// OFTrace is what ofproto/trace said about a flow.
type OFTrace struct {
	Output          string // the whole trace, for failure messages
	FinalFlow       string // the packet's fields after every action: "Final flow: …"
	DatapathActions string // what the datapath would do: "Datapath actions: …"
}

var (
	finalFlowRe       = regexp.MustCompile(`(?m)^Final flow: (.*)$`)
	datapathActionsRe = regexp.MustCompile(`(?m)^Datapath actions: (.*)$`)
)

// Trace runs ofproto/trace for a flow on the bridge, e.g. "in_port=1,ip,nw_dst=10.0.0.5".
func (b *Bridge) Trace(ctx context.Context, flow string) (OFTrace, error) {
	out, err := b.ovs.AppCtl(ctx, "ofproto/trace", b.Name, flow)
	if err != nil {
		return OFTrace{Output: out}, fmt.Errorf("ofproto/trace %s %s: %w", b.Name, flow, err)
	}
	res := OFTrace{Output: out}
	if m := finalFlowRe.FindStringSubmatch(out); m != nil {
		res.FinalFlow = strings.TrimSpace(m[1])
	}
	if m := datapathActionsRe.FindStringSubmatch(out); m != nil {
		res.DatapathActions = strings.TrimSpace(m[1])
	}
	return res, nil
}

// Bridge returns a handle on a bridge of this OVS that something else created, such as
// the br-int ovn-controller programs.
func (o *OVS) Bridge(name string) *Bridge { return &Bridge{Name: name, ovs: o} }
