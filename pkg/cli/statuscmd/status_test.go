package statuscmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// command is `kubectl ovnk status` against kube, with the agent in namespace and the
// given clock and terminal, and its output streams.
type command struct {
	opts        *Options
	out, errOut *clitest.LockedBuffer
}

func newTestCommand(kube *testenv.Kube, namespace string, clock func() time.Time, term clitest.Terminal) *command {
	out, errOut := &clitest.LockedBuffer{}, &clitest.LockedBuffer{}
	f := clitest.NewFactory(kube.Kubeconfig, term, nil, out, errOut)
	f.Settings = &cmdutil.Settings{AgentNamespace: namespace}
	return &command{opts: &Options{f: f, Now: clock, Interval: 20 * time.Millisecond}, out: out, errOut: errOut}
}

func (c *command) run(ctx context.Context, args ...string) error {
	return clitest.Execute(ctx, newCommand(c.opts), c.out, c.errOut, args...)
}

func ensureNamespace(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

func nodeObject(name, zoneStatus string) *corev1.Node {
	n := node(name, zoneStatus)
	return &n
}

func leaseObject(namespace, node string, renewed time.Time, annotations map[string]string) *coordinationv1.Lease {
	l := lease(node, renewed, annotations)
	l.Namespace = namespace
	return &l
}

func layer3CUDN(name, cidr string) *ovnkv1.ClusterUserDefinedNetwork {
	return &ovnkv1.ClusterUserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ovnkv1.ClusterUserDefinedNetworkSpec{
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tenant": name}},
			Network: ovnkv1.NetworkSpec{
				Topology: ovnkv1.NetworkTopologyLayer3,
				Layer3:   &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: ovnkv1.CIDR(cidr), HostSubnet: 24}}},
			},
		},
	}
}

func layer3UDN(namespace, name, cidr string) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ovnkv1.UserDefinedNetworkSpec{
			Topology: ovnkv1.NetworkTopologyLayer3,
			Layer3:   &ovnkv1.Layer3Config{Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: ovnkv1.CIDR(cidr), HostSubnet: 24}}},
		},
	}
}

// goldenCluster creates four nodes — a ready leader, an agent whose heartbeat expired
// and that failed its last reconcile, a node without an agent, and an agent that lost
// its NB (no last error) — with a CUDN ready everywhere it was reported, a UDN that one
// node cannot program, and a CUDN the leader refused (SubnetOverlap).
func goldenCluster(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	ensureNamespace(ctx, t, c, "ovnk-system")
	ensureNamespace(ctx, t, c, "tenant-red")
	leader := healthy(now.Add(-4 * time.Second))
	leader[cluster.AnnotationAgentLeader] = "true"
	leader[cluster.AnnotationAgentVersion] = "v0.4.0"
	failing := healthy(now.Add(-130 * time.Second))
	failing[cluster.AnnotationAgentVersion] = "v0.4.0"
	failing[cluster.AnnotationLastError] = "apply zone status-b: transaction failed: constraint violation: " +
		"Logical_Router_Port rtos-tenant.red_red_status-b has a duplicate name"
	noNB := with(healthy(now.Add(-5*time.Second)), cluster.AnnotationNBConnected, "false")
	noNB[cluster.AnnotationAgentVersion] = "v0.4.0"
	green := layer3CUDN("green", "10.20.128.0/17")
	clitest.CreateObjects(ctx, t, c,
		nodeObject("status-a", `{"cluster_udn_blue":"","tenant-red_red":""}`),
		nodeObject("status-b", `{"cluster_udn_blue":"","tenant-red_red":"no k8s.ovn.org/l3-gateway-config yet"}`),
		nodeObject("status-c", ""),
		nodeObject("status-d", `{"cluster_udn_blue":"","tenant-red_red":""}`),
		layer3CUDN("blue", "10.20.0.0/16"),
		layer3UDN("tenant-red", "red", "10.30.0.0/16"),
		green,
		leaseObject("ovnk-system", "status-a", now.Add(-3*time.Second), leader),
		leaseObject("ovnk-system", "status-b", now.Add(-2*time.Minute), failing),
		leaseObject("ovnk-system", "status-d", now.Add(-1*time.Second), noNB),
	)
	green.Status.Conditions = []metav1.Condition{{
		Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionFalse, Reason: "SubnetOverlap", LastTransitionTime: metav1.NewTime(now),
		Message: `network "cluster_udn_green" subnet 10.20.128.0/17 overlaps subnet 10.20.0.0/16 of network "cluster_udn_blue"`,
	}}
	if err := c.Status().Update(ctx, green); err != nil {
		t.Fatal(err)
	}
}

// TestGolden draws the status of goldenCluster piped, on a terminal in colour and with
// NO_COLOR, at 80 and 200 columns, and -o wide, and compares it with testdata/*.golden
// (rewritten by -update). Piped, the width changes nothing: tables are not fitted.
func TestGolden(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	goldenCluster(ctx, t, clitest.NewClient(t, kube))
	outputs := map[clitest.Terminal]string{}
	draw := func(args ...string) func(t *testing.T, term clitest.Terminal) string {
		return func(t *testing.T, term clitest.Terminal) string {
			c := newTestCommand(kube, "ovnk-system", func() time.Time { return now }, term)
			if err := c.run(ctx, args...); err != nil {
				t.Fatal(err)
			}
			return c.out.String()
		}
	}
	clitest.Goldens(t, "status", clitest.GoldenTerminals, func(t *testing.T, term clitest.Terminal) string {
		outputs[term] = draw()(t, term)
		return outputs[term]
	})
	clitest.Goldens(t, "status-wide", []clitest.GoldenTerminal{clitest.Piped80, clitest.Colour200}, draw("-o", "wide"))

	piped := outputs[clitest.Piped80.Term]
	if piped != outputs[clitest.Piped200.Term] {
		t.Errorf("piped output depends on the width:\n%s\n%s", piped, outputs[clitest.Piped200.Term])
	}
	// Piped, names and reasons are whole, one row per line, for grep.
	for _, want := range []string{
		"tenant-red/red   Pending ", "green            SubnetOverlap ",
		`network "cluster_udn_green" subnet 10.20.128.0/17 overlaps subnet 10.20.0.0/16 of network "cluster_udn_blue"`,
		"not connected to its OVN northbound database",
		"last error: apply zone status-b: transaction failed: constraint violation: Logical_Router_Port rtos-tenant.red_red_status-b has a duplicate name",
	} {
		if !strings.Contains(piped, want) {
			t.Errorf("piped output lacks %q:\n%s", want, piped)
		}
	}
	// On an 80-column terminal every reason is there, wrapped between its words: the
	// names in it whole. The summary does not repeat the agents' reasons.
	tty := outputs[clitest.NoColour80.Term]
	words := strings.Fields(tty)
	for _, want := range []string{
		"Logical_Router_Port", "rtos-tenant.red_red_status-b", "ovnk-system/ovnk-agent-status-c", `"cluster_udn_green"`, `"cluster_udn_blue"`,
		"k8s.ovn.org/l3-gateway-config",
	} {
		if !slices.Contains(words, want) {
			t.Errorf("the 80-column output does not hold %q whole:\n%s", want, tty)
		}
	}
	for _, reason := range []string{"heartbeat expired", "no heartbeat Lease", "not connected to its OVN northbound database"} {
		if n := strings.Count(strings.Join(words, " "), reason); n != 1 {
			t.Errorf("the 80-column output says %q %d times, want once (in the table):\n%s", reason, n, tty)
		}
	}
	if !strings.Contains(tty, "Not ready: 1/4 agents ready, 0/3 networks ready on every node.") {
		t.Errorf("the summary does not count what is ready:\n%s", tty)
	}
}

// TestJSONAndYAML prints goldenCluster's report as JSON and YAML: both parse back into
// the same Report.
func TestJSONAndYAML(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	goldenCluster(ctx, t, clitest.NewClient(t, kube))
	var reports []Report
	for _, format := range []string{"json", "yaml"} {
		c := newTestCommand(kube, "ovnk-system", func() time.Time { return now }, clitest.Terminal{TTY: true, Width: 80})
		if err := c.run(ctx, "-o", format); err != nil {
			t.Fatal(err)
		}
		var r Report
		if err := yaml.Unmarshal([]byte(c.out.String()), &r); err != nil {
			t.Fatalf("-o %s does not parse: %v\n%s", format, err, c.out.String())
		}
		if strings.Contains(c.out.String(), "\x1b[") {
			t.Errorf("-o %s has escape sequences", format)
		}
		reports = append(reports, r)
	}
	r := reports[0]
	if r.Ready || len(r.Nodes) != 4 || len(r.Networks) != 3 {
		t.Fatalf("report %+v, want 4 nodes, 3 networks, not ready", r)
	}
	a, b, c := r.Nodes[0], r.Nodes[1], r.Nodes[2]
	if !a.Ready || !a.Leader || a.Version != "v0.4.0" || a.LastReconcile == nil || !a.LastReconcile.Equal(now.Add(-4*time.Second)) {
		t.Errorf("status-a: %+v, want the ready leader v0.4.0 reconciled 4s ago", a)
	}
	if b.Ready || !strings.HasPrefix(b.LastError, "apply zone status-b") || !strings.HasPrefix(b.NotReadyReason, "heartbeat expired") {
		t.Errorf("status-b: %+v, want an expired heartbeat with its last error", b)
	}
	if c.Agent || c.Ready || c.NotReadyReason != "no agent: no heartbeat Lease ovnk-system/ovnk-agent-status-c" {
		t.Errorf("status-c: %+v, want no agent", c)
	}
	if d := r.Nodes[3]; d.Ready || d.NotReadyReason != "not connected to its OVN northbound database" {
		t.Errorf("status-d: %+v, want the reason it is not ready: its NB", d)
	}
	green := r.Networks[1]
	if green.Name != "green" || green.Status != "SubnetOverlap" || !strings.Contains(green.Reason, "overlaps subnet 10.20.0.0/16") {
		t.Errorf("green: %+v, want the leader's refusal and its message", green)
	}
	red := r.Networks[2]
	if red.Network != "tenant-red_red" || red.Name != "tenant-red/red" || red.Status != "Pending" || red.ReadyNodes != 2 || red.TotalNodes != 4 || red.NotReady[0] != (NodeReason{"status-b", "no k8s.ovn.org/l3-gateway-config yet"}) {
		t.Errorf("tenant-red_red: %+v", red)
	}
	jsonForm, _ := json.Marshal(reports[0])
	yamlForm, _ := json.Marshal(reports[1])
	if !bytes.Equal(jsonForm, yamlForm) {
		t.Errorf("-o json and -o yaml differ:\n%s\n%s", jsonForm, yamlForm)
	}
}

// TestWaitUntilReady waits on a node without an agent, then gives it a heartbeat: the
// wait ends with the table, after plain progress lines on a non-terminal.
func TestWaitUntilReady(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	ns := kube.Namespace(t)
	clitest.CreateObjects(ctx, t, c, nodeObject("status-w", ""))

	cmd := newTestCommand(kube, ns, func() time.Time { return now }, clitest.Terminal{TTY: false, Width: 80})
	done := make(chan error, 1)
	go func() { done <- cmd.run(ctx, "--wait", "--timeout", "50s") }()
	err := testenv.Eventually(ctx, 20*time.Second, "a progress line naming the node without an agent", func(context.Context) error {
		if !strings.Contains(cmd.errOut.String(), "0/1 agents ready, 0/0 networks ready; waiting for agent on status-w (no agent") {
			return fmt.Errorf("standard error so far: %q", cmd.errOut.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	clitest.CreateObjects(ctx, t, c, leaseObject(ns, "status-w", now, healthy(now)))
	if err := <-done; err != nil {
		t.Fatalf("status --wait: %v", err)
	}
	if !strings.Contains(cmd.out.String(), "All 1 agent and 0 networks are ready.") {
		t.Errorf("output after the wait:\n%s", cmd.out.String())
	}
	if strings.Contains(cmd.errOut.String(), "\r") {
		t.Errorf("progress on a non-terminal rewrites its line: %q", cmd.errOut.String())
	}
}

// TestWaitTimesOut waits on a node whose agent never comes: at the timeout the command
// fails with one line naming it, after drawing one updating line on the terminal.
func TestWaitTimesOut(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	ns := kube.Namespace(t)
	clitest.CreateObjects(ctx, t, c, nodeObject("status-t", `{"cluster_udn_green":"no k8s.ovn.org/node-subnets yet"}`), layer3CUDN("green", "10.40.0.0/16"))

	cmd := newTestCommand(kube, ns, func() time.Time { return now }, clitest.Terminal{TTY: true, Width: 60})
	err := cmd.run(ctx, "--wait", "--timeout", "300ms")
	want := "timed out after 300ms; not ready: agent on status-t (no agent: no heartbeat Lease " + ns +
		"/ovnk-agent-status-t); network green on status-t"
	if err == nil || err.Error() != want {
		t.Fatalf("status --wait at the timeout: %v\nwant: %s", err, want)
	}
	progress := cmd.errOut.String()
	if !strings.HasPrefix(progress, "\r\x1b[K[") || !strings.HasSuffix(progress, "\r\x1b[K") || strings.Contains(progress, "\n") {
		t.Errorf("terminal progress is not one line rewritten in place and cleared at the end: %q", progress)
	}
	for _, line := range strings.Split(progress, "\r\x1b[K") {
		if w := len([]rune(line)); w >= 60 {
			t.Errorf("progress line of %d columns on a 60-column terminal: %q", w, line)
		}
	}
	if !strings.Contains(cmd.out.String(), "no agent") {
		t.Errorf("the status is not shown at the timeout:\n%s", cmd.out.String())
	}
}

func TestBadFlags(t *testing.T) {
	kube := testenv.SharedKube(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "name"}, `unknown output format "name"`},
		{[]string{"--wait", "--timeout", "0s"}, "--timeout 0s is not positive"},
		{[]string{"nodes"}, `unknown command "nodes"`},
	} {
		cmd := newTestCommand(kube, "ovnk-system", time.Now, clitest.Terminal{})
		clitest.OneLine(t, cmd.run(context.Background(), tc.args...), tc.want)
	}
}

// TestUnreachableCluster fails in one line naming the server.
func TestUnreachableCluster(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := newTestCommand(&testenv.Kube{Kubeconfig: kubeconfig}, "ovnk-system", time.Now, clitest.Terminal{})
	clitest.OneLine(t, cmd.run(context.Background()), "cannot reach the API server at https://127.0.0.1:1")
}

// TestWithPublishedHeartbeat publishes a node's heartbeat the way the agent does,
// through pkg/cluster's format (AgentReport, HeartbeatLabels, HeartbeatLeaseName):
// `status --wait` sees the agent ready, with its version. pkg/agent/heartbeat's tests
// check that the agent writes that format.
func TestWithPublishedHeartbeat(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := clitest.NewClient(t, kube)
	ns := kube.Namespace(t)
	clitest.CreateObjects(ctx, t, c, nodeObject("status-hb", ""))
	reconciled := time.Now().Add(-time.Second)
	renewed := metav1.NewMicroTime(time.Now())
	report := cluster.AgentReport{Version: "v7.7.7", LastReconcile: reconciled, Leader: true, NBConnected: true}
	clitest.CreateObjects(ctx, t, c, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: cluster.HeartbeatLeaseName("status-hb"),
			Labels: cluster.HeartbeatLabels(nil), Annotations: report.Annotate(nil),
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("status-hb"), RenewTime: &renewed, LeaseDurationSeconds: ptr.To[int32](40)},
	})

	cmd := newTestCommand(kube, ns, time.Now, clitest.Terminal{})
	if err := cmd.run(ctx, "--wait", "--timeout", "30s", "-o", "json"); err != nil {
		t.Fatalf("status --wait: %v", err)
	}
	var r Report
	if err := json.Unmarshal([]byte(cmd.out.String()), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Nodes) != 1 {
		t.Fatalf("nodes %+v, want status-hb alone", r.Nodes)
	}
	n := r.Nodes[0]
	if !r.Ready || !n.Ready || !n.Leader || !n.NBConnected || n.Version != "v7.7.7" || n.LastReconcile == nil || n.Heartbeat == nil {
		t.Errorf("status-hb: %+v, want the ready leader v7.7.7 with a heartbeat and a reconcile", n)
	}
	if got := n.LastReconcile.Unix(); got != reconciled.Unix() {
		t.Errorf("last reconcile %v, want %v", n.LastReconcile, reconciled)
	}
}
