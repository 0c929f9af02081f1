// Package clitest is what the tests of the plugin's commands share: a Factory pointed at
// a test API server and a chosen terminal, a Harness running commands through it,
// golden files, and the checks every command's output, errors and help must pass. It does not import the command tree, so the tests inside
// the command packages can use it.
package clitest

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/test/golden"
	"github.com/ovnk/ovnk/test/testenv"
)

// Terminal is what a command's output goes to: a terminal (coloured) or not, of some
// width (0 when unknown).
type Terminal struct {
	TTY   bool
	Width int
	// NoColor sets NO_COLOR: a terminal's layout without its colour.
	NoColor bool
}

// NewFactory returns a Factory that talks to the API server of kubeconfig, writes to
// out and errOut as the terminal term, and sees the environment env (nil for none). Its
// Settings are left to the caller: the root command loads them, a test that runs a
// subcommand alone sets them.
func NewFactory(kubeconfig string, term Terminal, env map[string]string, out, errOut io.Writer) *cmdutil.Factory {
	kube := genericclioptions.NewConfigFlags(true)
	// A copy, so that a --kubeconfig flag does not change the caller's.
	*kube.KubeConfig = kubeconfig
	return &cmdutil.Factory{
		IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Kube:      kube,
		Getenv: func(key string) string {
			if key == "NO_COLOR" && term.NoColor {
				return "1"
			}
			return env[key]
		},
		IsTerminal:    func(any) bool { return term.TTY },
		TerminalWidth: func(any) int { return term.Width },
	}
}

// NewClient is a client of k's API server that knows the plugin's types.
func NewClient(t testing.TB, k *testenv.Kube) client.Client {
	t.Helper()
	c, err := client.New(k.RESTConfig, client.Options{Scheme: cmdutil.Scheme})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// Golden compares got with testdata/NAME.golden; with -update it rewrites the file.
func Golden(t *testing.T, name, got string) {
	t.Helper()
	golden.File(t, filepath.Join("testdata", name+".golden"), got)
}

// FitsTerminal checks output drawn for term: colour escapes on a terminal only, and
// never with NO_COLOR; on a terminal no line wider than it. Output that is not for a
// terminal is not held to a width: tables there are not fitted
// (cmdutil.Factory.TableWidth).
func FitsTerminal(t *testing.T, out string, term Terminal) {
	t.Helper()
	if coloured, want := strings.Contains(out, "\x1b["), term.TTY && !term.NoColor; coloured != want {
		t.Errorf("escape sequences in the output: %t, want %t (colour only on a terminal, never with NO_COLOR)", coloured, want)
	}
	if !term.TTY {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(line); w > term.Width {
			t.Errorf("line of %d columns, wider than the terminal's %d: %q", w, term.Width, line)
		}
	}
}

// OneLine checks that err is a single line naming each of want.
func OneLine(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one naming %q", want)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line:\n%s", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not name %q", msg, w)
		}
	}
}

// LockedBuffer is a buffer that a command running in another goroutine writes while
// the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Execute runs cmd with args as the plugin would, its output going to out and errOut,
// without usage or error printing (the caller checks the error).
func Execute(ctx context.Context, cmd *cobra.Command, out, errOut io.Writer, args ...string) error {
	cmd.SetArgs(append([]string{}, args...)) // never nil, which would mean os.Args
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.ExecuteContext(ctx)
}

// CreateObjects creates objs and deletes them when the test ends: cluster-wide objects
// are seen by every test of the package. A pod's status phase, which the API server
// ignores on create, is set after; pods go at once on deletion, as no kubelet confirms.
func CreateObjects(ctx context.Context, t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		var phase corev1.PodPhase
		if p, ok := obj.(*corev1.Pod); ok {
			phase = p.Status.Phase
		}
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
		if p, ok := obj.(*corev1.Pod); ok && phase != "" {
			p.Status.Phase = phase
			if err := c.Status().Update(ctx, p); err != nil {
				t.Fatalf("set pod %s %s: %v", p.Name, phase, err)
			}
		}
		t.Cleanup(func() {
			if err := c.Delete(context.Background(), obj, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				t.Errorf("delete %T %s: %v", obj, obj.GetName(), err)
			}
		})
	}
}
