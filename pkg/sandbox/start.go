package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ovnk/ovnk/pkg/images"
	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// binaries are the programs the sandbox runs.
type binaries struct {
	etcd, apiserver, controllerManager, scheduler, kubelet string
	// agent, cni, pause and testApp go into the images the nodes run; plugin installs
	// the agent; helper runs the sandbox's own daemons.
	agent, cni, pause, testApp, plugin, helper string
	// agentArgs are Options.AgentArgs.
	agentArgs []string
	// root is the OVN release the nodes run; programs are its launchers, by name.
	root     ovnroot.Root
	programs map[string]string
}

// program returns the launcher of a program of the OVN root.
func (b binaries) program(name string) string { return b.programs[name] }

// ovnPrograms are the OVS and OVN programs a node runs or its installer uses.
var ovnPrograms = []string{"ovsdb-server", "ovsdb-tool", "ovs-vsctl", "ovs-vswitchd", "ovn-northd", "ovn-controller"}

// hostPrograms are the host's programs the sandbox needs: namespaces and links, each
// node's containerd (with runc and ctr), and busybox for the test pods' shell.
var hostPrograms = map[string]string{
	"ip":         "iproute2",
	"nsenter":    "util-linux",
	"unshare":    "util-linux",
	"containerd": "containerd",
	"ctr":        "containerd",
	"runc":       "runc",
}

// kubePrograms are the programs of OVNK_KUBE_BIN the sandbox runs.
var kubePrograms = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"}

// findBinaries checks every program is there before anything starts, so a missing
// one is a single line saying how to get it.
func findBinaries(opts Options) (binaries, error) {
	b := binaries{programs: map[string]string{}}
	var problems []string
	if opts.KubeBinDir == "" {
		problems = append(problems, "no directory for the Kubernetes binaries: set OVNK_KUBE_BIN to what `scripts/deps.sh` prints (make demo does)")
	} else {
		dsts := []*string{&b.etcd, &b.apiserver, &b.controllerManager, &b.scheduler, &b.kubelet}
		for i, name := range kubePrograms {
			p := filepath.Join(opts.KubeBinDir, name)
			if !isExecutable(p) {
				problems = append(problems, fmt.Sprintf("%s is missing: scripts/kube-binaries.sh builds it", p))
				continue
			}
			*dsts[i] = p
		}
	}
	if root, err := ovnroot.Find(); err != nil {
		problems = append(problems, err.Error())
	} else {
		b.root = root
		for _, name := range ovnPrograms {
			p, err := root.Program(name)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			b.programs[name] = p
		}
	}
	for _, name := range slices.Sorted(maps.Keys(hostPrograms)) {
		if _, err := exec.LookPath(name); err != nil {
			problems = append(problems, fmt.Sprintf("%s is not on PATH: install the Debian package %s (scripts/deps.sh does)", name, hostPrograms[name]))
		}
	}
	if !isExecutable(loopbackPlugin) {
		problems = append(problems, fmt.Sprintf("%s is missing (containerd calls it for every pod): install the Debian package containernetworking-plugins (scripts/deps.sh does)", loopbackPlugin))
	}
	if !isExecutable(images.BusyboxPath) {
		problems = append(problems, fmt.Sprintf("%s is missing (the test pods' shell): install the Debian package busybox-static (scripts/deps.sh does)", images.BusyboxPath))
	}
	for _, p := range []struct{ path, what string }{
		{opts.AgentPath, "agent binary"},
		{opts.CNIPath, "CNI plugin ovnk-cni"},
		{opts.PausePath, "pause binary ovnk-pause"},
		{opts.TestAppPath, "test application ovnk-testapp"},
		{opts.PluginPath, "kubectl plugin kubectl-ovnk (it installs the agent)"},
		{opts.HelperPath, "ovnk-sandbox binary (it runs the sandbox's own daemons)"},
	} {
		if !isExecutable(p.path) {
			problems = append(problems, fmt.Sprintf("%s %q not found: run `make build`", p.what, p.path))
		}
	}
	b.agent, b.cni, b.pause, b.testApp = opts.AgentPath, opts.CNIPath, opts.PausePath, opts.TestAppPath
	b.plugin, b.helper, b.agentArgs = opts.PluginPath, opts.HelperPath, opts.AgentArgs
	if len(problems) > 0 {
		return b, errors.New(strings.Join(problems, "\n"))
	}
	return b, nil
}

// loopbackPlugin is the CNI loopback plugin of Debian's containernetworking-plugins.
const loopbackPlugin = "/usr/lib/cni/loopback"

// copyFile copies src to dst with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := os.WriteFile(dst, data, perm); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Deadlines of the start. They are generous: CI machines with two cores start
// kube-apiserver in tens of seconds while other jobs run.
const (
	etcdTimeout      = 60 * time.Second
	apiserverTimeout = 3 * time.Minute
	nbTimeout        = 30 * time.Second
)

// start creates the sandbox in dir, which is missing or empty.
func start(ctx context.Context, dir string, bins binaries, progress io.Writer) (*Sandbox, error) {
	begin := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create sandbox directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, markerFile), []byte("an ovnk sandbox: `ovnk-sandbox down` stops it and removes this directory\n"), 0o644); err != nil {
		return nil, fmt.Errorf("mark sandbox directory: %w", err)
	}
	prefix := netnsPrefix(dir)
	s := &Sandbox{
		Dir:            dir,
		Kubeconfig:     filepath.Join(dir, kubeconfigFile),
		Settings:       filepath.Join(dir, settingsFile),
		DirectSettings: filepath.Join(dir, directSettingsFile),
		Underlay:       underlayNetns(prefix),
		Outside:        outsideNetns(prefix),
		WhoAmIURL:      "http://" + whoAmIAddr + "/",
		Nodes:          newNodes(dir),
		AgentArgs:      bins.agentArgs,
		Plugin:         bins.plugin,
		OVNRoot:        bins.root.Dir,
	}
	if err := s.startAll(ctx, bins, progress); err != nil {
		stopErr := stopAll(context.WithoutCancel(ctx), dir, io.Discard)
		netErr := deleteNetworks(context.WithoutCancel(ctx), dir)
		return nil, fmt.Errorf("%w\nthe sandbox's logs are in %s; `make demo-down` removes it", errors.Join(err, stopErr, netErr), dir)
	}
	if err := s.writeFiles(); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "sandbox in %s is up (%s)\n", dir, time.Since(begin).Round(100*time.Millisecond))
	return s, nil
}

func (s *Sandbox) startAll(ctx context.Context, bins binaries, progress io.Writer) error {
	fmt.Fprintln(progress, "starting etcd")
	if err := s.startEtcd(ctx, bins.etcd); err != nil {
		return err
	}
	fmt.Fprintln(progress, "starting kube-apiserver")
	if err := s.startAPIServer(ctx, bins.apiserver); err != nil {
		return err
	}
	fmt.Fprintln(progress, "installing the CRDs; starting kube-controller-manager and kube-scheduler")
	if err := s.createClusterObjects(ctx); err != nil {
		return err
	}
	if err := s.startControllers(ctx, bins); err != nil {
		return err
	}
	fmt.Fprintf(progress, "creating the namespaces: the nodes' %s (network and mount), the underlay %s and the outside world %s\n",
		strings.Join(nodeNetnses(s.Nodes), ", "), s.Underlay, s.Outside)
	if err := s.createNetworks(ctx); err != nil {
		return err
	}
	if err := s.createMountNSes(ctx); err != nil {
		return err
	}
	fmt.Fprintf(progress, "starting the who-am-i server at %s\n", s.WhoAmIURL)
	if err := s.startWhoAmI(ctx, bins.helper); err != nil {
		return err
	}
	fmt.Fprintln(progress, "starting every node's Open_vSwitch database, ovs-vswitchd, NB, SB, ovn-northd and ovn-controller")
	if err := s.inParallel(func(n *Node) error { return s.startNodeServers(ctx, bins, *n) }); err != nil {
		return err
	}
	fmt.Fprintln(progress, "starting the forwarder between the host's loopback and the nodes")
	if err := s.startForwarder(ctx, bins.helper); err != nil {
		return err
	}
	fmt.Fprintln(progress, "writing the images: the agent's, pause and the test application")
	built, err := s.writeImages(bins)
	if err != nil {
		return err
	}
	if err := s.saveKernelSettings(); err != nil {
		return err
	}
	fmt.Fprintln(progress, "starting every node's containerd and kubelet")
	if err := s.inParallel(func(n *Node) error { return s.startKubeNode(ctx, bins, *n, built) }); err != nil {
		return err
	}
	fmt.Fprintf(progress, "installing the agent with `kubectl ovnk install --image %s` and waiting for it on every node\n", images.AgentImage)
	return s.installAgents(ctx)
}

// startKubeNode gives node n its containerd (with the images) and kubelet.
func (s *Sandbox) startKubeNode(ctx context.Context, bins binaries, n Node, built []images.Built) error {
	// What a node's containerd package brings: the loopback plugin containerd calls for
	// every pod besides the cluster's network plugin (which the agent installs).
	if err := copyFile(loopbackPlugin, filepath.Join(s.nodeRoot(n), "cni-bin", "loopback"), 0o755); err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	if err := s.startContainerd(ctx, n); err != nil {
		return err
	}
	if err := s.importImages(ctx, n, built); err != nil {
		return err
	}
	return s.startKubelet(ctx, bins.kubelet, n)
}

// writeImages writes the images' OCI archives into the sandbox directory.
func (s *Sandbox) writeImages(bins binaries) ([]images.Built, error) {
	return images.WriteAll(filepath.Join(s.Dir, "images"), images.Inputs{
		Agent:   bins.agent,
		CNI:     bins.cni,
		Pause:   bins.pause,
		TestApp: bins.testApp,
		Busybox: images.BusyboxPath,
		OVNRoot: bins.root,
	})
}

func nodeNetnses(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Netns
	}
	return out
}

// retryOnPortClash runs try (start a daemon, wait for it) again when it failed because
// its port was taken meanwhile.
func retryOnPortClash(try func() (*daemon, error)) error {
	for attempt := 1; ; attempt++ {
		d, err := try()
		if err == nil || d == nil || attempt == procutil.StartAttempts || !portTaken(d) {
			return err
		}
	}
}

// portTaken reports whether a daemon exited because its address was in use.
func portTaken(d *daemon) bool {
	return d.exitedEarly() != nil && procutil.PortTaken(d.logFile)
}

// inParallel runs fn for every node at once and joins their errors.
func (s *Sandbox) inParallel(fn func(n *Node) error) error {
	errs := make([]error, len(s.Nodes))
	var wg sync.WaitGroup
	for i := range s.Nodes {
		wg.Go(func() { errs[i] = fn(&s.Nodes[i]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
