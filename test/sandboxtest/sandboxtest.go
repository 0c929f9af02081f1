// Package sandboxtest starts pkg/sandbox's cluster for tests: three kubelet nodes with
// their OVS, zone and agent pod, built from the commands of this tree, and the real
// kubectl with our plugin pointed at it.
package sandboxtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// Options are the programs a sandbox runs, built once per test binary; the tools it
// needs must be there.
func Options(tb testing.TB) sandbox.Options {
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

// Dir makes a directory for a sandbox: short, since the NB sockets live in it and unix
// socket paths have 107 bytes.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "ovnk-sbx-")
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Down removes the sandbox in dir, failing tb if it cannot.
func Down(tb testing.TB, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := sandbox.Down(ctx, dir, nil); err != nil {
		tb.Errorf("sandbox down: %v", err)
	}
}

// Start brings up a sandbox in a directory of its own (agentArgs go to every agent, as
// Options.AgentArgs) and removes it when the test or benchmark ends, whether or not it
// passed; a failure first logs how the start went. OVNK_KEEP_SANDBOX keeps a failed
// test's sandbox for a look.
func Start(tb testing.TB, agentArgs ...string) *sandbox.Sandbox {
	tb.Helper()
	opts := Options(tb)
	opts.Dir, opts.AgentArgs = Dir(tb), agentArgs
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
		Down(tb, opts.Dir)
	})
	if err != nil {
		tb.Fatalf("sandbox up: %v\n%s", err, progress.String())
	}
	tb.Logf("sandbox up in %s", opts.Dir)
	return s
}

// KubectlEnv points the real kubectl and our plugin (on PATH first) at s, reading zones
// through the agent pods, with output that reads the same whatever the caller's
// terminal and locale.
func KubectlEnv(tb testing.TB, s *sandbox.Sandbox) []string {
	return []string{
		"KUBECONFIG=" + s.Kubeconfig,
		"OVNK_PLUGIN_CONFIG=" + s.Settings,
		"PATH=" + filepath.Dir(testenv.Command(tb, "kubectl-ovnk")) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NO_COLOR=1",
		"COLUMNS=200",
		"LC_ALL=C",
	}
}
