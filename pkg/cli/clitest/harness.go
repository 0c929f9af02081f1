package clitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

// cleanupTimeout bounds the requests that set up a test or clean up after it.
const cleanupTimeout = 30 * time.Second

// Commands builds the commands under test for a Factory and the clock their views are
// drawn at.
type Commands func(f *cmdutil.Factory, now func() time.Time) []*cobra.Command

// Harness runs commands in-process, as `kubectl ovnk …` runs them, against the test
// package's shared API server (testenv.SharedKube), and creates the objects they read.
// It is not the real root (cli.NewRootCommandWith), which imports the command packages
// and draws views at the wall clock; the views here are drawn at Now.
type Harness struct {
	// T is the test the harness reports to and cleans up after; a subtest that uses
	// the harness sets it.
	T    *testing.T
	Kube *testenv.Kube
	// C is a client of the API server, for setting the cluster up and checking what
	// the commands did.
	C client.Client
	// Kubeconfig is the file the commands take the cluster from: Kube's, unless a test
	// points them elsewhere.
	Kubeconfig string
	// Now is the commands' clock; Width and TTY are the terminal they see.
	Now   func() time.Time
	Width int
	TTY   bool
	// Prefix goes before the arguments of Run, MustRun and CheckCompletions: the command
	// under test, e.g. "network".
	Prefix []string
	// AgentNamespace is the commands' --agent-namespace: where they look for the agent's
	// objects, such as its configuration (AgentConfig).
	AgentNamespace string

	commands Commands
}

// NewHarness is a Harness of the commands, at the wall clock, on a 200-column
// terminal that is not a TTY.
func NewHarness(t *testing.T, commands Commands) *Harness {
	t.Helper()
	k := testenv.SharedKube(t)
	return &Harness{T: t, Kube: k, C: NewClient(t, k), Kubeconfig: k.Kubeconfig, Now: time.Now, Width: 200, commands: commands}
}

// Run runs `kubectl ovnk PREFIX args…` and returns what it printed and its error.
func (h *Harness) Run(args ...string) (stdout, stderr string, err error) {
	h.T.Helper()
	return h.runRoot(append(append([]string{}, h.Prefix...), args...))
}

// runRoot runs a root command holding the commands under test, with args.
func (h *Harness) runRoot(args []string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	root := h.root(Terminal{TTY: h.TTY, Width: h.Width}, &out, &errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// root is a root command holding the commands under test, writing to out and errOut
// as term.
func (h *Harness) root(term Terminal, out, errOut io.Writer) *cobra.Command {
	f := NewFactory(h.Kubeconfig, term, nil, out, errOut)
	f.Settings = &cmdutil.Settings{AgentNamespace: h.AgentNamespace}
	root := &cobra.Command{
		Use:           "kubectl-ovnk",
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ovnk"},
	}
	f.Kube.AddFlags(root.PersistentFlags())
	root.AddCommand(h.commands(f, h.Now)...)
	root.SetOut(out)
	root.SetErr(errOut)
	return root
}

// MustRun runs the command like Run and fails the test if it fails.
func (h *Harness) MustRun(args ...string) string {
	h.T.Helper()
	out, stderr, err := h.Run(args...)
	if err != nil {
		h.T.Fatalf("kubectl ovnk %s: %v\nstderr: %s", strings.Join(append(append([]string{}, h.Prefix...), args...), " "), err, stderr)
	}
	return out
}

// Completion is what completing Args must offer (Want) and must not (Not).
type Completion struct {
	Args, Want, Not []string
}

// CheckCompletions runs `__complete PREFIX args…` for each case, in a subtest named by
// its arguments, and checks the candidates offered.
func (h *Harness) CheckCompletions(t *testing.T, cases []Completion) {
	for _, tc := range cases {
		t.Run(strings.Join(tc.Args, " "), func(t *testing.T) {
			h.T = t
			got := h.completions(tc.Args)
			for _, w := range tc.Want {
				if !slices.Contains(got, w) {
					t.Errorf("completions %v lack %q", got, w)
				}
			}
			for _, n := range tc.Not {
				if slices.Contains(got, n) {
					t.Errorf("completions %v offer %q", got, n)
				}
			}
		})
	}
}

// completions runs `__complete PREFIX args…` and returns the candidates, without
// cobra's trailing directive line.
func (h *Harness) completions(args []string) []string {
	h.T.Helper()
	out, _, err := h.runRoot(append(append([]string{cobra.ShellCompRequestCmd}, h.Prefix...), args...))
	if err != nil {
		h.T.Fatal(err)
	}
	var got []string
	for _, l := range Lines(out) {
		if !strings.HasPrefix(l, ":") {
			got = append(got, l)
		}
	}
	return got
}

// Ctx is a context for one request of the test, cancelled when the test ends.
func (h *Harness) Ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	h.T.Cleanup(cancel)
	return ctx
}

// Create creates obj and deletes it when the test ends.
func (h *Harness) Create(obj client.Object) {
	h.T.Helper()
	if err := h.C.Create(h.Ctx(), obj); err != nil {
		h.T.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	h.DeleteLater(obj)
}

// DeleteLater deletes obj (as it is named now), if it exists, when the test ends.
func (h *Harness) DeleteLater(obj client.Object) {
	t := h.T
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := h.C.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// Namespace creates a namespace with a random name (or the given name) and labels, and
// removes the UserDefinedNetworks in it when the test ends.
func (h *Harness) Namespace(name string, labels map[string]string) string {
	h.T.Helper()
	if name == "" {
		name = h.Kube.Namespace(h.T)
		if len(labels) > 0 {
			ns := &corev1.Namespace{}
			if err := h.C.Get(h.Ctx(), client.ObjectKey{Name: name}, ns); err != nil {
				h.T.Fatal(err)
			}
			for k, v := range labels {
				metav1.SetMetaDataLabel(&ns.ObjectMeta, k, v)
			}
			if err := h.C.Update(h.Ctx(), ns); err != nil {
				h.T.Fatal(err)
			}
		}
	} else {
		h.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	}
	t := h.T
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if err := h.C.DeleteAllOf(ctx, &ovnkv1.UserDefinedNetwork{}, client.InNamespace(name)); err != nil {
			t.Errorf("delete the networks of %s: %v", name, err)
		}
	})
	return name
}

// AgentConfig gives the commands an agent installed with config as its config file:
// the ConfigMap `kubectl ovnk install` writes, in a namespace of its own, which becomes
// AgentNamespace. It returns the namespace.
func (h *Harness) AgentConfig(config string) string {
	h.T.Helper()
	ns := h.Namespace("", nil)
	h.Create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: manifests.DefaultConfigMapName},
		Data:       map[string]string{manifests.AgentConfigKey: config},
	})
	h.AgentNamespace = ns
	return ns
}

// Node creates a Node with annotations (nil for none).
func (h *Harness) Node(name string, annotations map[string]string) {
	h.T.Helper()
	h.Create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}})
}

// ZoneStatus is the annotations of a node whose agent reported report: network name,
// or cluster.ConnectZoneStatusKey, to "" when its zone programmed it or the reason it
// has not.
func ZoneStatus(t testing.TB, report map[string]string) map[string]string {
	t.Helper()
	v, err := cluster.ZoneStatusCodec.Format(report)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{cluster.AnnotationZoneStatus: v}
}

// View is a command whose output a golden file holds.
type View struct {
	Name string
	Args []string
}

// GoldenViews runs each view at 80 and 200 columns, without and with colour, and
// compares its output with testdata/NAME-WIDTH.golden (NAME-WIDTH-colour.golden); each
// output must also fit its terminal.
func (h *Harness) GoldenViews(t *testing.T, views []View) {
	for _, v := range views {
		for _, width := range []int{80, 200} {
			for _, tty := range []bool{false, true} {
				name := fmt.Sprintf("%s-%d", v.Name, width)
				if tty {
					name += "-colour"
				}
				t.Run(name, func(t *testing.T) {
					h.T, h.Width, h.TTY = t, width, tty
					out := h.MustRun(v.Args...)
					Golden(t, name, out)
					FitsTerminal(t, out, Terminal{TTY: tty, Width: width})
				})
			}
		}
	}
}

// Lines returns the non-empty lines of s.
func Lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// TableRow returns the row of a plain table whose first cell is name, split into its
// cells (cells are at least two spaces apart).
func TableRow(t testing.TB, table, name string) []string {
	t.Helper()
	for _, l := range Lines(table) {
		var cells []string
		for _, c := range strings.Split(l, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 && cells[0] == name {
			return cells
		}
	}
	t.Fatalf("no row %q in:\n%s", name, table)
	return nil
}

// CheckHelp checks that each command and its subcommands have examples, and that every
// example runs `kubectl ovnk` (a line continuing one that ends in a backslash aside).
func CheckHelp(t *testing.T, cmds ...*cobra.Command) {
	t.Helper()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		continued := false
		for _, line := range strings.Split(c.Example, "\n") {
			l := strings.TrimSpace(line)
			if l != "" && !continued && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "kubectl ovnk ") {
				t.Errorf("%s: example line %q does not run kubectl ovnk", c.CommandPath(), l)
			}
			continued = strings.HasSuffix(l, `\`)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, c := range cmds {
		walk(c)
	}
}
