package openflow

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovnroot"
)

// ofVersion is the OpenFlow version OFCtl speaks: bundles need 1.4 or later, and the
// text ovs-ofctl prints depends on the version (OpenFlow 1.0 shows a ct_mark write as
// "load:…->NXM_NX_CT_MARK[]", 1.5 as "set_field:…->ct_mark"), so parsing, dumping and
// writing must all use the same one.
const ofVersion = "OpenFlow15"

// OFCtl programs bridges of a running ovs-vswitchd through ovs-ofctl. Each Sync runs
// it two or three times (parse, dump, and a bundle only when something changed); each
// Flows once.
type OFCtl struct {
	// Program is the path of ovs-ofctl, or its name to look up in PATH.
	Program string
	// RunDir is the OVS run directory (OVS_RUNDIR), where ovs-vswitchd creates each
	// bridge's OpenFlow management socket <bridge>.mgmt.
	RunDir string

	// run executes a command; nil runs it for real. Tests wrap it to count writes.
	run runFunc
}

var _ Bridges = (*OFCtl)(nil)

// runFunc runs argv with env added to the environment and stdin as its input, and
// returns what it printed. Its error names the command and carries its stderr.
type runFunc func(ctx context.Context, env []string, stdin string, argv ...string) (stdout, stderr string, err error)

// NewOFCtl returns an OFCtl for the OVS whose run directory is runDir, using the
// ovs-ofctl on PATH (a node's, or the agent image's), else the OVN root's
// (pkg/ovnroot), where the tests find OVS.
func NewOFCtl(runDir string) (*OFCtl, error) {
	if prog, err := exec.LookPath("ovs-ofctl"); err == nil {
		return &OFCtl{Program: prog, RunDir: runDir}, nil
	}
	root, err := ovnroot.Find()
	if err != nil {
		return nil, fmt.Errorf("ovs-ofctl is not on PATH, and %w", err)
	}
	prog, err := root.Program("ovs-ofctl")
	if err != nil {
		return nil, err
	}
	return &OFCtl{Program: prog, RunDir: runDir}, nil
}

// Sync implements Bridges. It reads the cookie's flows, asks ovs-ofctl to normalise the
// desired ones (without touching the bridge), and only when the two differ sends one
// atomic bundle that deletes the cookie's flows and adds the desired ones: a flow the
// switch refuses aborts the whole bundle, and packets never see a half-written table.
func (o *OFCtl) Sync(ctx context.Context, bridge string, cookie uint64, flows []Flow) (bool, error) {
	if err := checkArgs(bridge, cookie, flows); err != nil {
		return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: %w", cookie, bridge, err)
	}
	want, err := o.normalise(ctx, flows)
	if err != nil {
		return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: %w", cookie, bridge, err)
	}
	if err := checkUnique(want); err != nil {
		return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: %w", cookie, bridge, err)
	}
	have, err := o.Flows(ctx, bridge, cookie)
	if err != nil {
		return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: %w", cookie, bridge, err)
	}
	sortFlows(want)
	if slices.Equal(want, have) {
		return false, nil
	}
	var in strings.Builder
	fmt.Fprintf(&in, "delete cookie=%#x/-1\n", cookie)
	for _, f := range flows {
		in.WriteString("add " + f.modLine(cookie) + "\n")
	}
	if _, _, err := o.ofctl(ctx, in.String(), "--bundle", "add-flows", bridge, "-"); err != nil {
		return false, fmt.Errorf("replace flows of cookie %#x on bridge %s (the bundle is all or nothing): %w", cookie, bridge, err)
	}
	return true, nil
}

// Flows implements Bridges.
func (o *OFCtl) Flows(ctx context.Context, bridge string, cookie uint64) ([]string, error) {
	if err := checkBridge(bridge); err != nil {
		return nil, fmt.Errorf("dump flows of cookie %#x: %w", cookie, err)
	}
	out, _, err := o.ofctl(ctx, "", "dump-flows", "--no-stats", "--no-names", bridge, fmt.Sprintf("cookie=%#x/-1", cookie))
	if err != nil {
		return nil, fmt.Errorf("dump flows of cookie %#x on bridge %s: %w", cookie, bridge, err)
	}
	prefix := fmt.Sprintf("cookie=%#x, ", cookie)
	var flows []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "OFPST_FLOW reply") || strings.HasPrefix(line, "NXST_FLOW reply") {
			continue // older releases start the dump with the reply's name
		}
		flow, ok := strings.CutPrefix(line, prefix)
		if !ok {
			return nil, fmt.Errorf("dump flows of cookie %#x on bridge %s: unexpected line %q", cookie, bridge, line)
		}
		flows = append(flows, flow)
	}
	sortFlows(flows)
	return flows, nil
}

// normalisedMarker is what ovs-ofctl logs when it drops match fields whose
// prerequisites are missing (nw_dst without ip matches every packet instead).
const normalisedMarker = "normalization changed ofp_match"

// lineRe finds the line number in ovs-ofctl's complaint about its flow file on stdin.
var lineRe = regexp.MustCompile(`(?m)^ovs-ofctl: -:(\d+): `)

// flowModRe picks the transaction number and the decoded message out of a line of
// parse-flows: "OFPT_FLOW_MOD (OF1.5) (xid=0x2): ADD priority=…" or "…: ***decode error…".
var flowModRe = regexp.MustCompile(`^OFPT_FLOW_MOD \(OF[0-9.]+\) \(xid=0x([0-9a-f]+)\): (.*)$`)

// normalise returns flows in the text dump-flows would show for them, by letting
// `ovs-ofctl parse-flows` decode them offline: its flow_mod lines print the match and
// actions exactly as dumps do ("… ADD table:1 priority=10,ip actions=LOCAL").
func (o *OFCtl) normalise(ctx context.Context, flows []Flow) ([]string, error) {
	if len(flows) == 0 {
		return nil, nil
	}
	var in strings.Builder
	for _, f := range flows {
		in.WriteString(f.modLine(0) + "\n")
	}
	out, stderr, err := o.ofctl(ctx, in.String(), "parse-flows", "-")
	if err != nil {
		// ovs-ofctl names the line ("-:3: unknown keyword bogus"); name the flow.
		if m := lineRe.FindStringSubmatch(stderr); m != nil {
			if n, _ := strconv.Atoi(m[1]); n >= 1 && n <= len(flows) {
				return nil, fmt.Errorf("flow %q: %w", flows[n-1].String(), err)
			}
		}
		return nil, fmt.Errorf("parse flows: %w", err)
	}
	if strings.Contains(stderr, normalisedMarker) {
		return nil, fmt.Errorf("ovs-ofctl would drop match fields whose prerequisites are missing (such as nw_dst without ip): %s", logMessages(stderr))
	}
	var norm []string
	for _, line := range strings.Split(out, "\n") {
		m := flowModRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if mod, ok := strings.CutPrefix(m[2], "ADD "); ok {
			norm = append(norm, fromFlowMod(mod))
			continue
		}
		// A flow ovs-ofctl encodes but cannot decode again (ct(exec(…)) without
		// commit) shows as a decode error; the reason is only in its log.
		xid, _ := strconv.ParseUint(m[1], 16, 32)
		name := fmt.Sprintf("number %d", xid)
		if xid >= 1 && int(xid) <= len(flows) {
			name = fmt.Sprintf("%q", flows[xid-1].String())
		}
		return nil, fmt.Errorf("flow %s: ovs-ofctl cannot decode it (%s): %s", name, m[2], logMessages(stderr))
	}
	if len(norm) != len(flows) {
		return nil, fmt.Errorf("ovs-ofctl parse-flows decoded %d of %d flows: %s\n%s", len(norm), len(flows), logMessages(stderr), strings.TrimSpace(out))
	}
	return norm, nil
}

// fromFlowMod turns parse-flows' "table:1 MATCH actions=…" into dump-flows'
// "table=1, MATCH actions=…".
func fromFlowMod(mod string) string {
	if rest, ok := strings.CutPrefix(mod, "table:"); ok {
		n, after, _ := strings.Cut(rest, " ")
		if t, err := strconv.Atoi(n); err == nil && t != 0 {
			return fmt.Sprintf("table=%d, %s", t, after)
		}
		return after
	}
	return mod
}

// logMessages returns the messages of the log lines ovs-ofctl wrote on stderr
// ("2026-…|00001|ofp_actions|WARN|CT action requires commit…"), without hex dumps.
func logMessages(stderr string) string {
	var msgs []string
	for _, line := range strings.Split(stderr, "\n") {
		if parts := strings.SplitN(line, "|", 5); len(parts) == 5 {
			msgs = append(msgs, parts[4])
		}
	}
	return strings.Join(msgs, "; ")
}

// ofctl runs ovs-ofctl with the OpenFlow version and run directory of o.
func (o *OFCtl) ofctl(ctx context.Context, stdin string, args ...string) (string, string, error) {
	run := o.run
	if run == nil {
		run = execRun
	}
	argv := append([]string{o.Program, "-O", ofVersion}, args...)
	return run(ctx, []string{"OVS_RUNDIR=" + o.RunDir}, stdin, argv...)
}

// execRun is the real runFunc.
func execRun(ctx context.Context, env []string, stdin string, argv ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), stderr.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), stderr.String(), nil
}
