// Package packets holds kubectl ovnk and the agents to what real packets do, on the
// cluster of `make demo` (pkg/sandbox): three kubelet nodes, each a network namespace
// with its own OVS (userspace datapath), NB, SB, northd, ovn-controller, containerd and
// the agent's DaemonSet pod, an underlay router and an outside host; pods are real pods
// of the test application, wired by ovnk-cni.
package packets_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/sandboxtest"
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

// startSandbox brings up a sandbox of its own for tb (sandboxtest.Start) with the
// real kubectl and our plugin pointed at it.
func startSandbox(tb testing.TB, agentArgs ...string) *lab {
	tb.Helper()
	kubectl := testenv.KubeBinary(tb, "kubectl")
	s := sandboxtest.Start(tb, agentArgs...)
	return &lab{t: tb, s: s, kubectl: kubectl, env: sandboxtest.KubectlEnv(tb, s)}
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
