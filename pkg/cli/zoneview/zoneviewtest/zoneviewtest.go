// Package zoneviewtest runs the live views (topology, routes) in tests against real
// servers: an NB ovsdb-server holding a compiled zone, and the package's test API server
// with the nodes the zone names.
package zoneviewtest

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output (review the diff before committing)")

// ZoneNB starts an NB and writes into it the zone of node compiled from st, in one
// transaction, as an agent's first reconcile would.
func ZoneNB(t *testing.T, st *cluster.State, node string) *testenv.NB {
	t.Helper()
	res, err := topology.Compile(st, node)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCompiled) > 0 {
		t.Fatalf("zone %s: networks not compiled: %v", node, res.NotCompiled)
	}
	nb := testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ops, err := ovn.InsertOps(c, res.Rows)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ovn.Transact(ctx, c, ops); err != nil {
		t.Fatalf("write zone %s: %v", node, err)
	}
	return nb
}

// The networks of the fixtures as the API server holds them: the CUDN blue of
// topologytest.Layer3 and the UDN namespace-scoped of topologytest.OKEP5094.
const (
	cudnBlue = `
apiVersion: k8s.ovn.org/v1
kind: ClusterUserDefinedNetwork
metadata:
  name: blue
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: blue
  network:
    topology: Layer3
    layer3:
      role: Primary
      subnets:
      - cidr: 10.10.0.0/16
        hostSubnet: 24
      - cidr: 2014:100:200::/48
        hostSubnet: 64
`
	udnNamespaceScoped = `
apiVersion: k8s.ovn.org/v1
kind: UserDefinedNetwork
metadata:
  name: namespace-scoped
  namespace: test12
spec:
  topology: Layer2
  layer2:
    role: Primary
    subnets:
    - 203.203.0.0/16
    - 2010:100:200::/60
`
)

// Cluster returns the package's API server holding the nodes of topologytest's Layer3
// and OKEP5094 clusters (node1-3, ovn-control-plane, ovn-worker, ovn-worker2) and
// their user-defined networks. Every test of a package shares it; Cluster creates
// what is missing.
func Cluster(t *testing.T) *testenv.Kube {
	t.Helper()
	k := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(k.RESTConfig, client.Options{Scheme: cmdutil.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var objects []client.Object
	for _, st := range []*cluster.State{topologytest.Layer3(), topologytest.OKEP5094()} {
		for _, n := range st.Nodes {
			objects = append(objects, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}})
		}
	}
	objects = append(objects, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test12"}})
	for _, manifest := range []struct {
		yaml string
		into client.Object
	}{{cudnBlue, &ovnkv1.ClusterUserDefinedNetwork{}}, {udnNamespaceScoped, &ovnkv1.UserDefinedNetwork{}}} {
		if err := yaml.UnmarshalStrict([]byte(manifest.yaml), manifest.into); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, manifest.into)
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	return k
}

// Annotate sets an annotation on a node, and removes it when the test ends.
func Annotate(t *testing.T, k *testenv.Kube, node, key, value string) {
	t.Helper()
	patch := func(value any) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
		if err != nil {
			return err
		}
		_, err = k.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, data, metav1.PatchOptions{})
		return err
	}
	if err := patch(value); err != nil {
		t.Fatalf("annotate node %s: %v", node, err)
	}
	t.Cleanup(func() {
		if err := patch(nil); err != nil {
			t.Errorf("remove annotation %s of node %s: %v", key, node, err)
		}
	})
}

// Terminal is where a run's output goes: a terminal (coloured) or not, of some width.
type Terminal struct {
	TTY   bool
	Width int
}

// Run runs the command newCmd builds, as `kubectl ovnk <args>` would with the root's
// flags and settings, against k. It returns standard output and the command's error.
// env is the environment the command sees; settings files come only from it.
func Run(t *testing.T, k *testenv.Kube, term Terminal, env map[string]string, newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) (string, error) {
	t.Helper()
	vars := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	for key, v := range env {
		vars[key] = v
	}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	kube := genericclioptions.NewConfigFlags(true)
	*kube.KubeConfig = k.Kubeconfig
	f := &cmdutil.Factory{
		IOStreams:     streams,
		Kube:          kube,
		Getenv:        func(key string) string { return vars[key] },
		IsTerminal:    func(any) bool { return term.TTY },
		TerminalWidth: func(any) int { return term.Width },
	}
	root := &cobra.Command{
		Use:           "kubectl-ovnk",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			settings, err := cmdutil.LoadSettings(cmd.Flags(), f.Getenv)
			if err != nil {
				return err
			}
			f.Settings = settings
			return nil
		},
	}
	f.Kube.AddFlags(root.PersistentFlags())
	cmdutil.AddSettingsFlags(root.PersistentFlags())
	root.AddCommand(newCmd(f))
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// Golden compares got with testdata/NAME.golden; with -update it rewrites the file.
func Golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it, then review it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (-update rewrites it; review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// RequireLines checks that each line, with runs of spaces collapsed, is a line of out:
// listings printed elsewhere (OKEP-5094, ovn-nbctl) must appear as they read there.
func RequireLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		have[Normalize(l)] = true
	}
	var missing []string
	for _, l := range lines {
		if !have[Normalize(l)] {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		t.Errorf("output lacks the lines\n  %s\noutput:\n%s", strings.Join(missing, "\n  "), out)
	}
}

// Normalize collapses runs of white space, so table columns compare as words.
func Normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

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
