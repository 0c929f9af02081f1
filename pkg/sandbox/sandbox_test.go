package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

// needPrograms returns Options with every program the sandbox runs, building the agent
// and ovnk-sandbox (which runs the sandbox's own daemons) from this checkout, or ends
// the test through testenv.Missing.
func needPrograms(t *testing.T) Options {
	t.Helper()
	testenv.NeedRoot(t, "the sandbox's nodes are network namespaces")
	testenv.NeedBinaries(t, "go", "ip", "nsenter", "curl")
	testenv.NeedOVN(t)
	kubeBin := os.Getenv(testenv.KubeBinEnv)
	if kubeBin == "" {
		kubeBin = testenv.KubeBinDir()
	}
	for _, name := range append(slices.Clone(kubePrograms), "kubectl") {
		if !isExecutable(filepath.Join(kubeBin, name)) {
			testenv.Missing(t, "%s is not in %s (scripts/kube-binaries.sh builds it)", name, kubeBin)
		}
	}
	var binDir string
	for _, name := range Programs {
		binDir = filepath.Dir(testenv.Command(t, name))
	}
	opts := ProgramOptions(binDir, kubeBin)
	opts.Progress = testWriter{t}
	return opts
}

// testWriter sends the sandbox's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// pids reads every pid file of the sandbox, by component name.
func pids(t *testing.T, s *Sandbox) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, c := range s.components() {
		if c.daemon == nil {
			continue // a pod
		}
		pid, err := c.daemon.readPID()
		if err != nil || pid == 0 {
			t.Fatalf("pid of %s: %d, %v", c.daemon.name, pid, err)
		}
		out[c.daemon.name] = pid
	}
	return out
}

func requireReady(ctx context.Context, t *testing.T, s *Sandbox) {
	t.Helper()
	if err := notReady(s.Status(ctx)); err != nil {
		t.Fatalf("sandbox not ready after Up: %v", err)
	}
}

// TestSandbox starts a sandbox, checks what it serves, starts it again (nothing
// changes), kills a kubelet and starts it again (everything is replaced), and takes it
// down (no process, cgroup, mount or changed kernel setting is left).
func TestSandbox(t *testing.T) {
	opts := needPrograms(t)
	opts.Dir = filepath.Join(t.TempDir(), "sbx")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		if err := Down(context.Background(), opts.Dir, nil); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})

	sysctlsBefore := readKernelSettings(t)
	s, err := Up(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	requireReady(ctx, t, s)
	first := pids(t, s)
	for name, pid := range first {
		// Detached: each daemon leads a process group (and session) of its own, so a
		// signal to the test's group or terminal never reaches it.
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
			t.Errorf("%s (pid %d) has process group %d (%v), want its own", name, pid, pgid, err)
		}
	}

	cfg, err := s.restConfig()
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("the API server does not list nodes: %v", err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
		// The leader allocated it an id: the agents do their cluster-wide work.
		if n.Annotations[cluster.AnnotationNodeID] == "" {
			t.Errorf("node %s has no %s: no agent allocated it", n.Name, cluster.AnnotationNodeID)
		}
	}
	slices.Sort(names)
	if want := NodeNames(); !slices.Equal(names, want) {
		t.Errorf("nodes = %v, want %v", names, want)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, manifests.DefaultNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("agents' namespace: %v", err)
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// ovnk's own CRDs and the shared ones (the NAD's), which install creates when absent.
	ours, _ := manifests.CRDs()
	shared, _ := manifests.SharedCRDs()
	var want, got []string
	for _, crd := range append(ours, shared...) {
		want = append(want, crd.Name)
	}
	for _, crd := range crds.Items {
		got = append(got, crd.Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("CRDs installed: %v, want %v", got, want)
	}

	// kubectl ovnk, given the printed environment, reads the zones through the agent
	// pods; the other settings file maps every node to its NB.
	if want := fmt.Sprintf("export KUBECONFIG=%s OVNK_PLUGIN_CONFIG=%s", s.Kubeconfig, s.Settings); s.Env() != want {
		t.Errorf("Env() = %q, want %q", s.Env(), want)
	}
	wantEndpoints := map[string]string{}
	for _, n := range s.Nodes {
		wantEndpoints[n.Name] = n.NBEndpoint
	}
	for file, want := range map[string]map[string]string{s.Settings: nil, s.DirectSettings: wantEndpoints} {
		fs := pflag.NewFlagSet("plugin", pflag.ContinueOnError)
		cmdutil.AddSettingsFlags(fs)
		settings, err := cmdutil.LoadSettings(fs, func(key string) string {
			if key == "OVNK_PLUGIN_CONFIG" {
				return file
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(settings.NBEndpoints) > 0 || len(want) > 0 {
			if !reflect.DeepEqual(settings.NBEndpoints, want) {
				t.Errorf("%s: NB endpoints = %v, want %v", file, settings.NBEndpoints, want)
			}
		}
	}

	checkHosts(ctx, t, s, opts.KubeBinDir)

	// A second Up finds it running and changes nothing.
	again, err := Up(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, s) {
		t.Errorf("second Up returned %+v, want %+v", again, s)
	}
	if got := pids(t, again); !reflect.DeepEqual(got, first) {
		t.Errorf("second Up changed the processes: %v, were %v", got, first)
	}

	// A kubelet killed (as by a crash or a reboot) makes the sandbox stale: Up replaces
	// every process.
	victim := first[s.kubelet(s.Nodes[1]).name]
	if err := syscall.Kill(-victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 10*time.Second, "the killed agent to be gone", func(context.Context) error {
		if running(victim, s.Dir) {
			return errors.New("still running")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	renewed, err := Up(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	requireReady(ctx, t, renewed)
	second := pids(t, renewed)
	for name, pid := range second {
		if pid == first[name] {
			t.Errorf("%s kept pid %d across the restart of a stale sandbox", name, pid)
		}
	}

	if err := Down(ctx, opts.Dir, testWriter{t}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(opts.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Down left %s: %v", opts.Dir, err)
	}
	if left, err := netnsesWithPrefix(netnsPrefix(s.Dir)); err != nil || len(left) > 0 {
		t.Errorf("Down left network namespaces %v (%v)", left, err)
	}
	controllers, err := cgroupControllers()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range s.Nodes {
		for _, c := range controllers {
			if _, err := os.Stat(filepath.Join(c, n.cgroupRoot())); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Down left cgroup %s (%v)", filepath.Join(c, n.cgroupRoot()), err)
			}
		}
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err != nil || strings.Contains(string(mounts), s.Dir) {
		t.Errorf("Down left mounts under %s (%v)", s.Dir, err)
	}
	if after := readKernelSettings(t); !reflect.DeepEqual(after, sysctlsBefore) {
		t.Errorf("kernel settings after Down = %v, want those from before the kubelets %v", after, sysctlsBefore)
	}
	for _, set := range []map[string]int{first, second} {
		for name, pid := range set {
			// A process this test started stays a zombie until the test reaps it: poll.
			err := testenv.Eventually(ctx, 10*time.Second, fmt.Sprintf("%s (pid %d) to be gone", name, pid), func(context.Context) error {
				if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
					return fmt.Errorf("kill -0 %d: %v", pid, err)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}
	}
}

// readKernelSettings reads the sysctls kubelet changes.
func readKernelSettings(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range kernelSettings {
		data, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = strings.TrimSpace(string(data))
	}
	return out
}

// checkHosts checks what the sandbox builds as the nodes' installer, with no help from
// the agents: the namespaces, each node's address on br-ex and its Open_vSwitch
// identity, the route through the underlay to the outside world, and the forwarder that
// takes the node's kubeconfig to the API server.
func checkHosts(ctx context.Context, t *testing.T, s *Sandbox, kubeBin string) {
	t.Helper()
	for _, ns := range s.Netnses() {
		if !netnsExists(ns) {
			t.Errorf("network namespace %s does not exist", ns)
		}
	}
	in := func(target Target, argv ...string) string {
		t.Helper()
		cmd, err := s.Command(ctx, target, argv...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Errorf("%s in %s: %v: %s", strings.Join(argv, " "), target, err, stderr)
		}
		return string(out)
	}
	// The outside world answers from the underlay, which it sees as its gateway.
	if got := in(Target{Underlay: true}, "curl", "-sS", "--max-time", "5", s.WhoAmIURL); got != outsideGateway+"\n" {
		t.Errorf("who-am-i from the underlay answered %q, want %q", got, outsideGateway+"\n")
	}
	for _, n := range s.Nodes {
		node := Target{Node: n.Name}
		if got := in(node, "ip", "-br", "addr", "show", GatewayBridge); !strings.Contains(got, " "+n.Address) {
			t.Errorf("%s's %s: %q, want address %s", n.Name, GatewayBridge, got, n.Address)
		}
		// The node's OVS tools find its servers by themselves (exec --node).
		if got := strings.Trim(strings.TrimSpace(in(node, "ovs-vsctl", "get", "Open_vSwitch", ".", "external_ids:system-id")), `"`); len(got) != 36 {
			t.Errorf("%s's system-id is %q, want a UUID", n.Name, got)
		}
		if got := in(node, "ovs-appctl", "-t", "ovs-vswitchd", "version"); !strings.Contains(got, "Open vSwitch") {
			t.Errorf("ovs-appctl -t ovs-vswitchd version on %s printed %q", n.Name, got)
		}
		// From the node through the underlay's routing: the node's own address.
		want := netip.MustParsePrefix(n.Address).Addr().String() + "\n"
		if got := in(node, "curl", "-sS", "--max-time", "5", s.WhoAmIURL); got != want {
			t.Errorf("who-am-i from %s answered %q, want %q", n.Name, got, want)
		}
		// The node's kubeconfig, inside the node, reaches the API server through the
		// forwarder, and the serving certificate covers 127.0.0.1.
		got := in(node, filepath.Join(kubeBin, "kubectl"), "--kubeconfig", n.Kubeconfig, "get", "node", n.Name, "-o", "name")
		if got != "node/"+n.Name+"\n" {
			t.Errorf("kubectl in %s with its kubeconfig printed %q, want node/%s", n.Name, got, n.Name)
		}
	}
}

// TestDirChecks covers what is refused before anything starts.
func TestDirChecks(t *testing.T) {
	ctx := context.Background()

	long := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	_, err := Up(ctx, Options{Dir: long})
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("Up in a %d-byte directory: %v, want an error saying it is too long", len(long), err)
	}
	if _, err := os.Stat(long); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Up in a too long directory created it: %v", err)
	}

	foreign := t.TempDir()
	precious := filepath.Join(foreign, "notes.txt")
	if err := os.WriteFile(precious, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Down(ctx, foreign, nil); err == nil || !strings.Contains(err.Error(), "not an ovnk sandbox") {
		t.Errorf("Down of a directory that is no sandbox: %v, want a refusal", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Errorf("Down touched a directory that is no sandbox: %v", err)
	}

	if err := Down(ctx, filepath.Join(t.TempDir(), "none"), nil); err != nil {
		t.Errorf("Down with no sandbox: %v, want nothing to do", err)
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, ErrNoSandbox) {
		t.Errorf("Load of an empty directory: %v, want ErrNoSandbox", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/ovnk/.sandbox/kubeconfig": "/home/me/ovnk/.sandbox/kubeconfig",
		"/home/me/my ovnk/kubeconfig":       "'/home/me/my ovnk/kubeconfig'",
		"/home/me/it's/kubeconfig":          `'/home/me/it'\''s/kubeconfig'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
