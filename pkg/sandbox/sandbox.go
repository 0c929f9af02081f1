// Package sandbox runs a local Kubernetes cluster for `make demo` and the tests: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, and three simulated nodes
// that are real hosts as far as packets go. Each node is a network namespace, and a
// mount namespace of its own, with the system daemons an OVN-Kubernetes node runs (an
// Open_vSwitch database and ovs-vswitchd on the userspace datapath, the zone's NB and
// SB, ovn-northd, ovn-controller), containerd and kubelet; an underlay namespace bridges
// the nodes and routes to an outside world. The sandbox does what a node's installer
// does (the gateway bridge with the node's address, containerd's loopback plugin),
// builds the images (pkg/images) and installs the agent with `kubectl ovnk install`: the
// agents run as the DaemonSet's pods and wire pods with their CNI plugin, as they would
// in any cluster.
//
// Every process runs detached from the command that started it (a session of its own,
// a pid file and a log in the sandbox directory), so the sandbox keeps running after
// Up returns, and Down, from any later process, stops it. It needs root: it creates
// namespaces and cgroups. docs/demo.md describes the layout.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/poll"
)

// Files at the top of the sandbox directory.
const (
	// markerFile is created first, so a directory is known to be a sandbox (and may be
	// removed by Down) even when Up stopped half-way.
	markerFile = ".ovnk-sandbox"
	// stateFile is written last: a directory without it was never completely started.
	stateFile      = "state.json"
	kubeconfigFile = "kubeconfig"
	settingsFile   = "ovnk.yaml"
	// directSettingsFile is Sandbox.DirectSettings.
	directSettingsFile = "ovnk-direct-nb.yaml"
)

// Down stops the sandbox from the top: the kubelets first (so they restart nothing),
// every pod's processes (by the nodes' cgroups), the containerds and their shims, then
// each node's daemons from the top (the programs before the databases they use), the
// controllers, the API server, and etcd last so the API server does not log its loss.
// pods.pid and n*/agent.pid are the pods daemon and agents of a sandbox started before
// the nodes ran kubelets.
var (
	kubeletStage    = []string{"n*/kubelet.pid", "pods.pid", "n*/agent.pid"}
	containerdStage = []string{"n*/containerd.pid"}
	afterPodsStages = [][]string{
		{"n*/controller.pid", "n*/northd.pid"},
		{"n*/vswitchd.pid"},
		{"n*/ovsdb.pid", "n*/nb.pid", "n*/sb.pid", "forwarder.pid", "whoami.pid"},
		{"kube-controller-manager.pid", "kube-scheduler.pid"},
		{"kube-apiserver.pid"},
		{"etcd.pid"},
	}
)

// stopAll stops every process of the sandbox in dir and releases what the nodes held
// on the host (cgroups, mount namespaces, the kernel settings kubelet changed). Every
// step is tried whatever failed before.
func stopAll(ctx context.Context, dir string, progress io.Writer) error {
	errs := []error{stopDaemons(ctx, dir, progress, kubeletStage)}
	for _, n := range newNodes(dir) {
		errs = append(errs, removeCgroup(ctx, n.cgroupRoot()))
	}
	errs = append(errs, stopDaemons(ctx, dir, progress, containerdStage))
	// containerd's shims run on their own once containerd is gone; their command
	// lines name their containerd's socket, in the sandbox directory.
	errs = append(errs, killNamingDir(ctx, dir, "containerd-shim"))
	errs = append(errs, stopDaemons(ctx, dir, progress, afterPodsStages...))
	errs = append(errs, killInMountNSes(ctx, dir))
	errs = append(errs, releaseMountNSes(dir), restoreKernelSettings(dir))
	return errors.Join(errs...)
}

// nodeCount is how many nodes the sandbox simulates.
const nodeCount = 3

// NodeNames returns the names of the sandbox's Nodes.
func NodeNames() []string {
	names := make([]string, nodeCount)
	for i := range names {
		names[i] = fmt.Sprintf("ovnk-node-%d", i+1)
	}
	return names
}

// Sandbox is a started sandbox: where its files are, where its servers listen, and
// its network namespaces. Up writes it to state.json in the directory.
type Sandbox struct {
	// Dir is the sandbox directory, absolute, symbolic links resolved.
	Dir string `json:"dir"`
	// Kubeconfig is an admin kubeconfig for the API server (credentials embedded), for
	// use from the host.
	Kubeconfig string `json:"kubeconfig"`
	// Settings is the kubectl ovnk settings file (select it with OVNK_PLUGIN_CONFIG): the
	// agent's namespace, so live views read each node's zone through its agent pod as on
	// any cluster. DirectSettings also maps every node to its NB, for live views that
	// read the NBs directly, a fallback for when the agents cannot be reached.
	Settings       string `json:"settings"`
	DirectSettings string `json:"directSettings"`
	// EtcdURL is etcd's client URL.
	EtcdURL string `json:"etcdURL"`
	// APIServer is the API server's URL on the host's loopback.
	APIServer string `json:"apiServer"`
	// Underlay is the network namespace whose bridge joins the nodes' uplinks and which
	// routes to Outside.
	Underlay string `json:"underlay"`
	// Outside is the network namespace standing in for the internet.
	Outside string `json:"outside"`
	// WhoAmIURL is the outside who-am-i server: it answers with the source address it
	// saw.
	WhoAmIURL string `json:"whoAmIURL"`
	// Nodes are the simulated nodes.
	Nodes []Node `json:"nodes"`
	// AgentArgs are the agent settings beyond the sandbox's own (Options.AgentArgs), in
	// the agent's config file.
	AgentArgs []string `json:"agentArgs,omitempty"`
	// Plugin is the kubectl-ovnk that installed the agent, and installs it again when
	// RollOutAgent changes its settings.
	Plugin string `json:"plugin"`
	// OVNRoot is the OVN root the nodes run (pkg/ovnroot): its bin/ goes first on the
	// PATH of the agents and of commands run on a node.
	OVNRoot string `json:"ovnRoot"`
}

// Node is one simulated node: its namespace, its servers and its agent.
type Node struct {
	Name string `json:"name"`
	// Dir is the node's directory, relative to the sandbox directory: short, since the
	// unix sockets of its servers live there. It is the OVS_RUNDIR and OVN_RUNDIR of
	// the node's programs.
	Dir string `json:"dir"`
	// Netns is the node's network namespace (a name for `ip netns`).
	Netns string `json:"netns"`
	// Address is the node's address on the underlay, with its prefix length; the
	// gateway bridge br-ex holds it.
	Address string `json:"address"`
	// MAC is the gateway bridge's MAC.
	MAC string `json:"mac"`
	// OVSEndpoint is the Open_vSwitch database's OVSDB endpoint, unix:<path>.
	OVSEndpoint string `json:"ovsEndpoint"`
	// NBEndpoint is the zone's NB, unix:<path>.
	NBEndpoint string `json:"nbEndpoint"`
	// SBEndpoint is the zone's SB, unix:<path>.
	SBEndpoint string `json:"sbEndpoint"`
	// Kubeconfig is the node's kubeconfig, valid inside Netns: the server is
	// https://127.0.0.1:6443 there, forwarded to the API server on the host.
	Kubeconfig string `json:"kubeconfig"`
	// HTTPAddress is a host address forwarded to the agent's /healthz, /readyz and
	// /metrics, which it serves inside Netns.
	HTTPAddress string `json:"httpAddress"`
}

// Options configure Up.
type Options struct {
	// Dir is the sandbox directory; it is created, or must be empty or hold a sandbox.
	Dir string
	// KubeBinDir holds etcd and the Kubernetes binaries (scripts/deps.sh builds them
	// and prints the directory as OVNK_KUBE_BIN).
	KubeBinDir string
	// AgentPath is the ovnk-agent binary; CNIPath, PausePath and TestAppPath are
	// ovnk-cni, ovnk-pause and ovnk-testapp. They go into the images the nodes run.
	AgentPath, CNIPath, PausePath, TestAppPath string
	// PluginPath is kubectl-ovnk, which installs the agent.
	PluginPath string
	// HelperPath is the ovnk-sandbox binary, which also runs the sandbox's own daemons
	// (the forwarder, the who-am-i server) through hidden subcommands.
	HelperPath string
	// AgentArgs are settings of the agent as --key=value flags, written into the
	// agent's config file after the sandbox's own (a later key wins), e.g.
	// --layer2-topology=v1 for a cluster that starts on the legacy Layer2 topology.
	AgentArgs []string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// Programs are the project's commands a sandbox runs or puts into its images, as `make
// build` names them.
var Programs = []string{"ovnk-agent", "ovnk-cni", "ovnk-pause", "ovnk-testapp", "kubectl-ovnk", "ovnk-sandbox"}

// ProgramOptions are Options naming the Programs in binDir (where `make build` puts
// them) and the Kubernetes binaries in kubeBinDir.
func ProgramOptions(binDir, kubeBinDir string) Options {
	at := func(name string) string { return filepath.Join(binDir, name) }
	return Options{
		KubeBinDir:  kubeBinDir,
		AgentPath:   at("ovnk-agent"),
		CNIPath:     at("ovnk-cni"),
		PausePath:   at("ovnk-pause"),
		TestAppPath: at("ovnk-testapp"),
		PluginPath:  at("kubectl-ovnk"),
		HelperPath:  at("ovnk-sandbox"),
	}
}

// ErrNoSandbox is returned by Load for a directory that holds no started sandbox.
var ErrNoSandbox = errors.New("no sandbox")

// Up starts a sandbox in opts.Dir and returns it once every server is ready. On a
// sandbox that already runs it only checks that every server is ready; one with a
// process gone (a reboot, a kill) is stopped, removed and started anew. If starting
// fails, whatever was started is stopped and the directory is left with the logs.
func Up(ctx context.Context, opts Options) (*Sandbox, error) {
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	dir, err := resolveDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := checkSocketPaths(dir); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("the sandbox needs root: its nodes are network namespaces (run it with sudo)")
	}
	existing, err := Load(dir)
	if err != nil && !errors.Is(err, ErrNoSandbox) {
		return nil, err
	}
	if existing != nil {
		whole, err := existing.checkRunning(ctx)
		if err != nil {
			return nil, err
		}
		if whole {
			fmt.Fprintf(progress, "sandbox in %s is already running\n", dir)
			return existing, nil
		}
	}
	// Only now are the programs needed; a missing one must not cost the old sandbox.
	bins, err := findBinaries(opts)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		fmt.Fprintf(progress, "sandbox in %s has stopped processes: starting it anew\n", dir)
		if err := teardown(ctx, dir, progress); err != nil {
			return nil, err
		}
	} else if err := clearIncomplete(ctx, dir, progress); err != nil {
		return nil, err
	}
	return start(ctx, dir, bins, progress)
}

// Down stops every process of the sandbox in dir, waits until they are gone, deletes
// its network namespaces and removes the directory. No directory means nothing to do
// but deleting namespaces a directory removed by hand left behind; a directory that is
// not a sandbox is refused, never removed.
func Down(ctx context.Context, dir string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	dir, err := resolveDir(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(progress, "no sandbox in %s\n", dir)
		return deleteNetworks(ctx, dir)
	}
	if err := teardown(ctx, dir, progress); err != nil {
		return err
	}
	fmt.Fprintf(progress, "removed the sandbox in %s\n", dir)
	return nil
}

// Load reads the sandbox started in dir; the error wraps ErrNoSandbox when there is
// none (or its start did not complete).
func Load(dir string) (*Sandbox, error) {
	dir, err := resolveDir(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s: start one with `make demo` or `ovnk-sandbox up --dir %s`", ErrNoSandbox, dir, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read sandbox state: %w", err)
	}
	s := &Sandbox{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("sandbox state %s does not parse (%w): remove the sandbox with `ovnk-sandbox down --dir %s`", filepath.Join(dir, stateFile), err, dir)
	}
	return s, nil
}

// Env returns the shell line that points kubectl and kubectl ovnk at the sandbox.
func (s *Sandbox) Env() string {
	return "export KUBECONFIG=" + shellQuote(s.Kubeconfig) + " OVNK_PLUGIN_CONFIG=" + shellQuote(s.Settings)
}

// shellQuote quotes a path for a POSIX shell when it holds anything but the usual
// path characters.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:@,", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resolveDir makes dir absolute and, when it exists, resolves symbolic links: the
// daemons' command lines name this exact path, which is how their pids are recognised.
func resolveDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no sandbox directory given: pass --dir")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("sandbox directory %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// maxSocketPath is the longest unix socket path Linux accepts (sun_path holds 108
// bytes with the terminating NUL).
const maxSocketPath = 107

// checkSocketPaths refuses a directory whose nodes' sockets would not fit in sun_path.
func checkSocketPaths(dir string) error {
	for _, n := range newNodes(dir) {
		sock := filepath.Join(dir, n.Dir, longestSocket)
		if len(sock) > maxSocketPath {
			return fmt.Errorf("sandbox directory %s is too long: a node's socket %s would be %d bytes, over the %d a unix socket path may have; pass a shorter --dir (or SANDBOX_DIR= to make)",
				dir, sock, len(sock), maxSocketPath)
		}
	}
	return nil
}

// clearIncomplete readies dir for a new sandbox: a missing or empty directory is fine,
// a sandbox whose start never completed is stopped and removed, anything else refused.
func clearIncomplete(ctx context.Context, dir string, progress io.Writer) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read sandbox directory: %w", err)
	}
	fmt.Fprintf(progress, "sandbox in %s never finished starting: removing it\n", dir)
	return teardown(ctx, dir, progress)
}

// teardown stops the sandbox's processes and removes its directory, which must carry
// the sandbox marker: a mistyped --dir never deletes someone's files.
func teardown(ctx context.Context, dir string, progress io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, markerFile)); err != nil {
		return fmt.Errorf("%s is not an ovnk sandbox (it has no %s file), so it is left alone: pass another --dir", dir, markerFile)
	}
	// Everything is tried, whatever fails: a process that will not stop must not leave
	// the others running, nor the namespaces behind. The directory, with the logs and
	// pid files, stays when anything failed, so Down can be run again.
	var errs []error
	if err := stopAll(context.WithoutCancel(ctx), dir, progress); err != nil {
		errs = append(errs, fmt.Errorf("stop the sandbox in %s: %w", dir, err))
	}
	if err := deleteNetworks(context.WithoutCancel(ctx), dir); err != nil {
		errs = append(errs, fmt.Errorf("delete the network namespaces of the sandbox in %s: %w", dir, err))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the sandbox directory: %w", err)
	}
	return nil
}

// checkRunning tells whether the started sandbox is whole: every process running and
// ready (true), or some process gone (false, for Up to start anew). Processes that run
// but do not become ready in time are an error: restarting would lose the user's
// objects, so the user decides.
func (s *Sandbox) checkRunning(ctx context.Context) (bool, error) {
	for _, ns := range s.Netnses() {
		if !netnsExists(ns) {
			return false, nil
		}
	}
	for _, c := range s.components() {
		if c.daemon == nil {
			continue // a pod: only readiness tells
		}
		pid, err := c.daemon.readPID()
		if err != nil {
			return false, err
		}
		if !running(pid, s.Dir) {
			return false, nil
		}
	}
	var last []ComponentStatus
	err := poll.Until(ctx, reuseTimeout, "the running sandbox to be ready", func(ctx context.Context) error {
		last = s.Status(ctx)
		return notReady(last)
	})
	if err != nil {
		return false, fmt.Errorf("the sandbox in %s runs but is not ready: %w; its logs are in that directory (docs/demo.md), and `make demo-down` removes it", s.Dir, notReady(last))
	}
	return true, nil
}

// reuseTimeout bounds how long Up waits for a running sandbox to answer, e.g. one a
// concurrent Up is still starting.
const reuseTimeout = 60 * time.Second

// writeFiles writes the kubectl ovnk settings files and, last, the state file.
func (s *Sandbox) writeFiles() error {
	endpoints := map[string]string{}
	for _, n := range s.Nodes {
		endpoints[n.Name] = n.NBEndpoint
	}
	for _, f := range []struct {
		path, header string
		settings     map[string]any
	}{
		{s.Settings, "kubectl ovnk reads each node's zone through its agent pod.",
			map[string]any{"agent-namespace": manifests.DefaultNamespace}},
		{s.DirectSettings, "kubectl ovnk reads each node's NB directly, not through the agents.",
			map[string]any{"agent-namespace": manifests.DefaultNamespace, "nb-endpoints": endpoints}},
	} {
		data, err := yaml.Marshal(f.settings)
		if err != nil {
			return fmt.Errorf("encode kubectl ovnk settings: %w", err)
		}
		header := "# Written by ovnk-sandbox (OVNK_PLUGIN_CONFIG selects this file): " + f.header + "\n"
		if err := os.WriteFile(f.path, append([]byte(header), data...), 0o644); err != nil {
			return fmt.Errorf("write kubectl ovnk settings: %w", err)
		}
	}
	state, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sandbox state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, stateFile), append(state, '\n'), 0o644); err != nil {
		return fmt.Errorf("write sandbox state: %w", err)
	}
	return nil
}
