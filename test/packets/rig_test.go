package packets_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// The demo's two networks (scripts/demo.sh): blue, a namespaced Layer3 network, and
// green, a cluster-wide Layer2 network whose nodes meet at the transit router. Pods of
// both get their primary network on ovn-udn1.
const (
	rigBlue  = "blue"
	rigGreen = "green"
	rigUDN   = "ovn-udn1"
	// rigPrimaryLabel must be on a namespace when it is created for its pods to take a
	// primary user-defined network.
	rigPrimaryLabel = "k8s.ovn.org/primary-user-defined-network"
)

// rig is a lab with a typed client for the API server and the testing.TB it reports to,
// so that benchmarks, which get no *testing.T, drive a sandbox the same way tests do.
type rig struct {
	*lab
	tb   testing.TB
	kube kubernetes.Interface
}

// newRig starts a sandbox for a test (lab_test.go's startSandbox).
func newRig(t *testing.T, agentArgs ...string) *rig {
	t.Helper()
	return rigFor(t, startSandbox(t, agentArgs...))
}

// rigFor wraps a running lab; its own t may be nil (a benchmark's), as the rig only
// reports to tb.
func rigFor(tb testing.TB, l *lab) *rig {
	tb.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", l.s.Kubeconfig)
	if err != nil {
		tb.Fatalf("kubeconfig %s: %v", l.s.Kubeconfig, err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatalf("kubernetes client: %v", err)
	}
	return &rig{lab: l, tb: tb, kube: kube}
}

// newBenchRig starts a sandbox for a benchmark and removes it when the benchmark ends.
func newBenchRig(b *testing.B, agentArgs ...string) *rig {
	b.Helper()
	return rigFor(b, startSandbox(b, agentArgs...))
}

// fatalf fails the test or benchmark now.
func (r *rig) fatalf(format string, args ...any) {
	r.tb.Helper()
	r.tb.Fatalf(format, args...)
}

// mustRun is lab.must for tests and benchmarks alike.
func (r *rig) mustRun(ctx context.Context, args ...string) string {
	r.tb.Helper()
	out, err := r.run(ctx, args...)
	if err != nil {
		r.fatalf("%v", err)
	}
	return out
}

// networks creates the demo's namespaces and networks through kubectl ovnk, as
// scripts/demo.sh does.
func (r *rig) networks(ctx context.Context) {
	r.tb.Helper()
	for _, ns := range []string{rigBlue, rigGreen} {
		_, err := r.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ns, Labels: map[string]string{rigPrimaryLabel: ""},
		}}, metav1.CreateOptions{})
		if err != nil {
			r.fatalf("create namespace %s: %v", ns, err)
		}
	}
	r.mustRun(ctx, "ovnk", "network", "create", "blue", "-n", rigBlue, "--topology", "layer3", "--subnet", "10.128.0.0/16")
	r.mustRun(ctx, "ovnk", "network", "create", "green", "--cluster", "--namespaces", rigGreen, "--topology", "layer2", "--subnet", "10.200.0.0/16")
}

// createPod creates a pod of the test application for node; the scheduler places it
// and the node's kubelet starts it, wired by ovnk-cni.
func (r *rig) createPod(ctx context.Context, namespace, name, node string) error {
	_, err := r.kube.CoreV1().Pods(namespace).Create(ctx, sandbox.TestPod(namespace, name, node), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create pod %s/%s on %s: %w", namespace, name, node, err)
	}
	return nil
}

// pods creates pods ("namespace/name" → node) and returns each one's address on its
// primary user-defined network once the sandbox has wired it.
func (r *rig) pods(ctx context.Context, where map[string]string) map[string]netip.Addr {
	r.tb.Helper()
	for ref, node := range where {
		ns, name, _ := strings.Cut(ref, "/")
		if err := r.createPod(ctx, ns, name, node); err != nil {
			r.fatalf("%v", err)
		}
	}
	addrs := map[string]netip.Addr{}
	for ref := range where {
		var addr netip.Addr
		err := testenv.Eventually(ctx, 2*time.Minute, "pod "+ref+" wired with an address on "+rigUDN, func(ctx context.Context) error {
			var err error
			addr, err = r.podAddress(ctx, ref, rigUDN)
			return err
		})
		if err != nil {
			r.fatalf("%v", err)
		}
		addrs[ref] = addr
	}
	return addrs
}

// podAddress reads the IPv4 address of a pod's interface from inside the pod.
func (r *rig) podAddress(ctx context.Context, ref, iface string) (netip.Addr, error) {
	out, err := r.exec(ctx, sandbox.Target{Pod: ref}, "ip", "-4", "-o", "addr", "show", "dev", iface)
	if err != nil {
		return netip.Addr{}, err
	}
	// "3: ovn-udn1    inet 10.128.1.3/24 brd … scope global ovn-udn1\ …"
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "inet" {
			p, err := netip.ParsePrefix(f[i+1])
			if err != nil {
				return netip.Addr{}, fmt.Errorf("pod %s: address %q of %s: %w", ref, f[i+1], iface, err)
			}
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("pod %s has no IPv4 address on %s yet", ref, iface)
}

// pingOnce sends one ping from a pod or a node and reports whether it was answered
// within wait.
func (r *rig) pingOnce(ctx context.Context, from sandbox.Target, to netip.Addr, wait time.Duration) error {
	_, err := r.exec(ctx, from, "ping", "-n", "-q", "-c", "1", "-W", strconv.FormatFloat(wait.Seconds(), 'f', 3, 64), to.String())
	return err
}

// waitPing waits until from's pings to to are answered.
func (r *rig) waitPing(ctx context.Context, from sandbox.Target, to netip.Addr) {
	r.tb.Helper()
	err := testenv.Eventually(ctx, time.Minute, fmt.Sprintf("%s to reach %s", from, to), func(ctx context.Context) error {
		return r.pingOnce(ctx, from, to, time.Second)
	})
	if err != nil {
		r.fatalf("%v", err)
	}
}

// rigMetrics are the zone metrics of one agent (pkg/agent/zone/metrics.go).
type rigMetrics struct {
	// Reconciles counts the zone's reconciles, failed ones too.
	Reconciles int
	// Errors counts the failed ones.
	Errors int
	// Writes sums the NB write operations of every kind, of the reconciles that
	// succeeded: a failed one's are not counted, so only with no Errors is it all.
	Writes int
}

// metrics reads an agent's /metrics through its host port.
func (r *rig) metrics(ctx context.Context, node string) (rigMetrics, error) {
	n, err := r.node(node)
	if err != nil {
		return rigMetrics{}, err
	}
	url := "http://" + n.HTTPAddress + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return rigMetrics{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rigMetrics{}, fmt.Errorf("metrics of the agent of %s: %w", node, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return rigMetrics{}, fmt.Errorf("metrics of the agent of %s at %s: status %d: %v", node, url, resp.StatusCode, err)
	}
	var m rigMetrics
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := rigMetricLine(line)
		if !ok {
			continue
		}
		switch {
		case name == "ovnk_zone_reconcile_duration_seconds_count":
			m.Reconciles += int(value)
		case name == "ovnk_zone_reconcile_errors_total":
			m.Errors += int(value)
		case strings.HasPrefix(name, "ovnk_zone_operations_total{"):
			m.Writes += int(value)
		}
	}
	return m, nil
}

// rigMetricLine splits a sample line of the Prometheus text format into its name (with
// labels) and value.
func rigMetricLine(line string) (string, float64, bool) {
	if line == "" || strings.HasPrefix(line, "#") {
		return "", 0, false
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(line[i+1:], 64)
	return line[:i], v, err == nil
}

// nextReconcile waits until node's agent has finished a reconcile after the one that
// since saw, and returns the metrics then.
func (r *rig) nextReconcile(ctx context.Context, node string, since rigMetrics, timeout time.Duration) rigMetrics {
	r.tb.Helper()
	var now rigMetrics
	err := testenv.Eventually(ctx, timeout, "the next reconcile of the agent of "+node, func(ctx context.Context) error {
		var err error
		if now, err = r.metrics(ctx, node); err != nil {
			return err
		}
		if now.Reconciles <= since.Reconciles {
			return fmt.Errorf("%d reconciles so far", now.Reconciles)
		}
		return nil
	})
	if err != nil {
		r.fatalf("%v", err)
	}
	return now
}

func (r *rig) node(name string) (sandbox.Node, error) {
	for _, n := range r.s.Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return sandbox.Node{}, fmt.Errorf("no node %s in the sandbox", name)
}

// stopOVSDB stops node's Open_vSwitch database (the ovsdb-server of conf.db), by the pid
// file the sandbox keeps in the node's directory; ovs-vswitchd and ovn-controller keep
// running without it, as on a host whose database crashed.
func (r *rig) stopOVSDB(ctx context.Context, node string) {
	r.tb.Helper()
	n, err := r.node(node)
	if err != nil {
		r.fatalf("%v", err)
	}
	pidFile := filepath.Join(r.s.Dir, n.Dir, "ovsdb.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		r.fatalf("the Open_vSwitch database of %s: %v", node, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		r.fatalf("pid file %s holds %q", pidFile, data)
	}
	// The sandbox starts each daemon as the leader of its own process group.
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		r.fatalf("stop the Open_vSwitch database of %s (pid %d): %v", node, pid, err)
	}
	socket := strings.TrimPrefix(n.OVSEndpoint, "unix:")
	err = testenv.Eventually(ctx, 30*time.Second, "the Open_vSwitch database of "+node+" to exit", func(context.Context) error {
		if syscall.Kill(pid, 0) == nil {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/status", pid)); err == nil && !rigZombie(pid) {
				return fmt.Errorf("pid %d still runs", pid)
			}
		}
		if _, err := os.Stat(socket); err == nil {
			return fmt.Errorf("its socket %s is still there", socket)
		}
		return nil
	})
	if err != nil {
		r.fatalf("%v", err)
	}
}

// rigZombie reports whether pid has exited and waits to be reaped.
func rigZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// "pid (comm) S …": the state follows the command's closing parenthesis.
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] == 'Z'
}
