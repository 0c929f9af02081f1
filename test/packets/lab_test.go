// Package packets holds kubectl ovnk and the agents to what real packets do, on the
// sandbox of `make demo` (pkg/sandbox): three nodes, each a network namespace with its
// own OVS (userspace datapath), NB, SB, northd, ovn-controller and agent, an underlay
// router and an outside host; pods are network namespaces the sandbox wires to br-int.
package packets_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// lab is a running sandbox and the real kubectl with our plugin.
type lab struct {
	t       testing.TB
	s       *sandbox.Sandbox
	kubectl string
	// env points kubectl and the plugin at the sandbox.
	env []string
}

// sandboxOptions are the programs a sandbox runs, built once per test binary; the
// tools it needs must be there.
func sandboxOptions(tb testing.TB) sandbox.Options {
	tb.Helper()
	testenv.NeedRoot(tb, "the sandbox's network namespaces and OVS")
	testenv.NeedBinaries(tb, "ip", "nsenter", "ping", "curl", "python3")
	testenv.NeedOVN(tb)
	var binDir string
	for _, name := range sandbox.Programs {
		binDir = filepath.Dir(testenv.Command(tb, name))
	}
	return sandbox.ProgramOptions(binDir, filepath.Dir(testenv.KubeBinary(tb, "kube-apiserver")))
}

// sandboxDir makes a directory for a sandbox: short, since the NB sockets live in it
// and unix socket paths have 107 bytes.
func sandboxDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "ovnk-sbx-")
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// downSandbox removes the sandbox in dir, failing tb if it cannot.
func downSandbox(tb testing.TB, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := sandbox.Down(ctx, dir, nil); err != nil {
		tb.Errorf("sandbox down: %v", err)
	}
}

// startSandbox brings up a sandbox in a directory of its own (agentArgs go to every
// agent) and removes it when the test or benchmark ends, whether or not it passed; a
// failure first logs how the start went.
func startSandbox(tb testing.TB, agentArgs ...string) *lab {
	tb.Helper()
	opts := sandboxOptions(tb)
	kubectl := testenv.KubeBinary(tb, "kubectl")
	opts.Dir, opts.AgentArgs = sandboxDir(tb), agentArgs
	var progress bytes.Buffer
	opts.Progress = &progress
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := sandbox.Up(ctx, opts)
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("sandbox start:\n%s", progress.String())
			if os.Getenv("OVNK_KEEP_SANDBOX") != "" {
				tb.Logf("sandbox kept in %s (OVNK_KEEP_SANDBOX): remove it with ovnk-sandbox down --dir %s", opts.Dir, opts.Dir)
				return
			}
		}
		downSandbox(tb, opts.Dir)
	})
	if err != nil {
		tb.Fatalf("sandbox up: %v\n%s", err, progress.String())
	}
	tb.Logf("sandbox up in %s", opts.Dir)
	return &lab{
		t: tb, s: s, kubectl: kubectl,
		env: []string{
			"KUBECONFIG=" + s.Kubeconfig,
			"OVNK_PLUGIN_CONFIG=" + s.Settings,
			"PATH=" + filepath.Dir(testenv.Command(tb, "kubectl-ovnk")) + string(os.PathListSeparator) + os.Getenv("PATH"),
			"NO_COLOR=1",
			// Tables and ping's output read the same whatever the caller's terminal
			// and locale.
			"COLUMNS=200",
			"LC_ALL=C",
		},
	}
}

// run runs kubectl (its first argument "ovnk" runs our plugin) and returns its
// standard output; the error carries standard error.
func (l *lab) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, l.kubectl, args...)
	cmd.Env = append(os.Environ(), l.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// must is run that fails the test on an error.
func (l *lab) must(ctx context.Context, args ...string) string {
	l.t.Helper()
	out, err := l.run(ctx, args...)
	if err != nil {
		l.t.Fatal(err)
	}
	return out
}

// exec runs argv in the network namespace of target (a pod, a node, the outside host)
// and returns its combined output.
func (l *lab) exec(ctx context.Context, target sandbox.Target, argv ...string) (string, error) {
	cmd, err := l.s.Command(ctx, target, argv...)
	if err != nil {
		return "", err
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "LC_ALL=C") // ping's and ip's output, parsed here
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("in %s: %s: %w\n%s", target, strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}
