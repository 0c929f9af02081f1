package networkcmd

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/testenv"
)

// The tests run the commands against the package's real kube-apiserver, with the CRDs
// pkg/manifests embeds (testenv installs them). They run one after another and each
// removes the cluster-scoped objects and networks it made, because `network list`
// shows the whole cluster.

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// harness runs `kubectl ovnk network …` in-process against the shared API server.
type harness struct {
	t          *testing.T
	kube       *testenv.Kube
	c          client.Client
	kubeconfig string
	// now is the commands' clock; width and tty are the terminal they see.
	now   func() time.Time
	width int
	tty   bool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	k := testenv.SharedKube(t)
	return &harness{t: t, kube: k, c: clitest.NewClient(t, k), kubeconfig: k.Kubeconfig, now: time.Now, width: 200}
}

// run runs `network args…` and returns what it printed and its error.
func (h *harness) run(args ...string) (stdout, stderr string, err error) {
	h.t.Helper()
	return h.runRoot(append([]string{"network"}, args...)...)
}

// runRoot runs a root command holding only `network`, with args. It is not the real
// root (cli.NewRootCommandWith), which imports this package and builds `network` with
// the wall clock; the views here are drawn at the harness's clock.
func (h *harness) runRoot(args ...string) (stdout, stderr string, err error) {
	h.t.Helper()
	var out, errOut bytes.Buffer
	f := clitest.NewFactory(h.kubeconfig, clitest.Terminal{TTY: h.tty, Width: h.width}, nil, &out, &errOut)
	f.Settings = &cmdutil.Settings{}
	root := &cobra.Command{
		Use:           "kubectl-ovnk",
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ovnk"},
	}
	f.Kube.AddFlags(root.PersistentFlags())
	root.AddCommand(newNetworkCmd(f, h.now))
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// mustRun runs the command and fails the test if it fails.
func (h *harness) mustRun(args ...string) string {
	h.t.Helper()
	out, stderr, err := h.run(args...)
	if err != nil {
		h.t.Fatalf("kubectl ovnk network %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	return out
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// namespace creates a namespace with a random name (or the given name) and labels, and
// removes the networks in it when the test ends.
func (h *harness) namespace(name string, labels map[string]string) string {
	h.t.Helper()
	if name == "" {
		name = h.kube.Namespace(h.t)
		if len(labels) > 0 {
			ns := &corev1.Namespace{}
			if err := h.c.Get(h.ctx(), client.ObjectKey{Name: name}, ns); err != nil {
				h.t.Fatal(err)
			}
			for k, v := range labels {
				metav1.SetMetaDataLabel(&ns.ObjectMeta, k, v)
			}
			if err := h.c.Update(h.ctx(), ns); err != nil {
				h.t.Fatal(err)
			}
		}
	} else {
		h.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
	}
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.c.DeleteAllOf(ctx, &ovnkv1.UserDefinedNetwork{}, client.InNamespace(name)); err != nil {
			h.t.Errorf("delete the networks of %s: %v", name, err)
		}
	})
	return name
}

// create creates obj and deletes it when the test ends.
func (h *harness) create(obj client.Object) {
	h.t.Helper()
	if err := h.c.Create(h.ctx(), obj); err != nil {
		h.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	h.deleteLater(obj)
}

// deleteLater deletes obj (as it is named now) when the test ends.
func (h *harness) deleteLater(obj client.Object) {
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			h.t.Errorf("delete %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

// cudnLater deletes the ClusterUserDefinedNetwork name, if it exists, when the test ends.
func (h *harness) cudnLater(name string) {
	h.deleteLater(&ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// node creates a Node whose agent reported report (network name -> "" or the reason
// its zone has not programmed it); a nil report is a node without the annotation.
func (h *harness) node(name string, report map[string]string) {
	h.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if report != nil {
		v, err := cluster.ZoneStatusCodec.Format(report)
		if err != nil {
			h.t.Fatal(err)
		}
		n.Annotations = map[string]string{cluster.AnnotationZoneStatus: v}
	}
	h.create(n)
}

// pod creates a pod in ns, with k8s.ovn.org/pod-networks entries on the given NADs
// ("<namespace>/<name>") when any are given.
func (h *harness) pod(ns, name string, nads ...string) *corev1.Pod {
	h.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: "node-x", Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}}},
	}
	if len(nads) > 0 {
		ifaces := map[string]cluster.PodInterface{}
		for i, nad := range nads {
			ifaces[nad] = podInterface(h.t, i)
		}
		v, err := cluster.PodNetworksCodec.Format(ifaces)
		if err != nil {
			h.t.Fatal(err)
		}
		p.Annotations = map[string]string{cluster.AnnotationPodNetworks: v}
	}
	h.create(p)
	return p
}

// exists reports whether the network object exists.
func (h *harness) exists(obj client.Object) bool {
	h.t.Helper()
	err := h.c.Get(h.ctx(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		h.t.Fatal(err)
	}
	return err == nil
}

// networkCount counts every CUDN and UDN of the cluster.
func (h *harness) networkCount() int {
	h.t.Helper()
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	var udns ovnkv1.UserDefinedNetworkList
	if err := h.c.List(h.ctx(), &cudns); err != nil {
		h.t.Fatal(err)
	}
	if err := h.c.List(h.ctx(), &udns); err != nil {
		h.t.Fatal(err)
	}
	return len(cudns.Items) + len(udns.Items)
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// tableRow returns the row of a plain table whose first column is name, split into
// its cells (cells are separated by at least two spaces).
func tableRow(t *testing.T, table, name string) []string {
	t.Helper()
	for _, l := range lines(table) {
		fields := splitCells(l)
		if len(fields) > 0 && fields[0] == name {
			return fields
		}
	}
	t.Fatalf("no row %q in:\n%s", name, table)
	return nil
}

func splitCells(line string) []string {
	var out []string
	for _, f := range strings.Split(line, "  ") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
