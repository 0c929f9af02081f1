package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// binaries are the programs the sandbox runs.
type binaries struct {
	etcd, apiserver, agent, helper string
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

// hostPrograms are the host's programs the sandbox needs for namespaces and links.
var hostPrograms = []string{"ip", "nsenter"}

// findBinaries checks every program is there before anything starts, so a missing
// one is a single line saying how to get it.
func findBinaries(opts Options) (binaries, error) {
	b := binaries{programs: map[string]string{}}
	var problems []string
	if opts.KubeBinDir == "" {
		problems = append(problems, "no directory for etcd and kube-apiserver: set OVNK_KUBE_BIN to what `scripts/deps.sh` prints (make demo does)")
	} else {
		for name, dst := range map[string]*string{"etcd": &b.etcd, "kube-apiserver": &b.apiserver} {
			p := filepath.Join(opts.KubeBinDir, name)
			if !isExecutable(p) {
				problems = append(problems, fmt.Sprintf("%s is missing: scripts/kube-binaries.sh builds it", p))
				continue
			}
			*dst = p
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
	for _, name := range hostPrograms {
		if _, err := exec.LookPath(name); err != nil {
			problems = append(problems, fmt.Sprintf("%s is not on PATH: install iproute2 and util-linux", name))
		}
	}
	if !isExecutable(opts.AgentPath) {
		problems = append(problems, fmt.Sprintf("agent binary %q not found: run `make build`", opts.AgentPath))
	}
	if !isExecutable(opts.HelperPath) {
		problems = append(problems, fmt.Sprintf("ovnk-sandbox binary %q not found (it runs the sandbox's own daemons): run `make build`", opts.HelperPath))
	}
	b.agent, b.helper, b.agentArgs = opts.AgentPath, opts.HelperPath, opts.AgentArgs
	if len(problems) > 0 {
		return b, errors.New(strings.Join(problems, "\n"))
	}
	return b, nil
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
	agentTimeout     = 2 * time.Minute
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
		Dir:        dir,
		Kubeconfig: filepath.Join(dir, kubeconfigFile),
		Settings:   filepath.Join(dir, settingsFile),
		Underlay:   underlayNetns(prefix),
		Outside:    outsideNetns(prefix),
		WhoAmIURL:  "http://" + whoAmIAddr + "/",
		Nodes:      newNodes(dir),
		AgentPath:  bins.agent,
		AgentArgs:  bins.agentArgs,
		OVNRoot:    bins.root.Dir,
	}
	if err := s.startAll(ctx, bins, progress); err != nil {
		stopErr := stopDaemons(context.WithoutCancel(ctx), dir, io.Discard, stopStages...)
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
	fmt.Fprintln(progress, "installing the CRDs, the agents' namespace and the Nodes")
	if err := s.createClusterObjects(ctx); err != nil {
		return err
	}
	fmt.Fprintf(progress, "creating the network namespaces: %s, the underlay %s and the outside world %s\n",
		strings.Join(nodeNetnses(s.Nodes), ", "), s.Underlay, s.Outside)
	if err := s.createNetworks(ctx); err != nil {
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
	fmt.Fprintln(progress, "starting an ovnk-agent per node")
	if err := s.startAgents(ctx); err != nil {
		return err
	}
	fmt.Fprintln(progress, "starting the pods daemon")
	return s.startPods(ctx, bins.helper)
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
