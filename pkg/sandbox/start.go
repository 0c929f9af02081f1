package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// binaries are the programs the sandbox runs.
type binaries struct {
	etcd, apiserver, ovsdbServer, ovsdbTool, agent string
}

// findBinaries checks every program is there before anything starts, so a missing
// one is a single line saying how to get it.
func findBinaries(opts Options) (binaries, error) {
	var b binaries
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
		for name, dst := range map[string]*string{"ovsdb-server": &b.ovsdbServer, "ovsdb-tool": &b.ovsdbTool} {
			p, err := root.Program(name)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			*dst = p
		}
	}
	if !isExecutable(opts.AgentPath) {
		problems = append(problems, fmt.Sprintf("agent binary %q not found: run `make build`", opts.AgentPath))
	}
	b.agent = opts.AgentPath
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
	s := &Sandbox{
		Dir:        dir,
		Kubeconfig: filepath.Join(dir, kubeconfigFile),
		Settings:   filepath.Join(dir, settingsFile),
		Nodes:      newNodes(dir),
	}
	if err := s.startAll(ctx, bins, progress); err != nil {
		stopErr := stopDaemons(context.WithoutCancel(ctx), dir, io.Discard, stopStages...)
		return nil, fmt.Errorf("%w\nthe sandbox's logs are in %s; `make demo-down` removes it", errors.Join(err, stopErr), dir)
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
	fmt.Fprintln(progress, "starting an NB ovsdb-server per node")
	if err := s.startNBs(ctx, bins); err != nil {
		return err
	}
	fmt.Fprintln(progress, "starting an ovnk-agent per node")
	return s.startAgents(ctx, bins.agent)
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
