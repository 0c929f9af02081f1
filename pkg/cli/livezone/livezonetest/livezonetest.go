// Package livezonetest runs the live views (topology, routes) in tests against real
// servers: an NB ovsdb-server holding a compiled zone, and the package's test API server
// with the nodes the zone names. It runs the plugin's whole command tree, so the tests
// that use it are external test packages (topologycmd_test, routescmd_test).
package livezonetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/uuid"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// ZoneNB starts an NB and writes into it the zone of node compiled from st, in one
// transaction, as an agent's first reconcile would, with UUIDs the same in every run.
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
	c := nbtest.Connect(t, nb)
	ops, err := ovn.InsertOps(c, res.Rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixUUIDs(ops); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ovn.Transact(ctx, c, ops); err != nil {
		t.Fatalf("write zone %s: %v", node, err)
	}
	return nb
}

// fixUUIDs makes the NB give each inserted row a UUID derived from its table and
// identity, the same in every run. ovn-nbctl leaves rows it sorts as equal (NAT rules
// with one type, gateway port and external IP) in an order that follows from their
// UUIDs, and so do the views: the golden files can pin that order only if the UUIDs
// stay the same.
func fixUUIDs(ops []ovsdb.Operation) error {
	for i, op := range ops {
		if op.Op != ovsdb.OperationInsert {
			continue
		}
		ids, _ := op.Row["external_ids"].(ovsdb.OvsMap)
		id, _ := ids.GoMap[rows.IDKey].(string)
		if id == "" {
			return fmt.Errorf("a %s row to insert has no external_ids:%s to derive its UUID from: %v", op.Table, rows.IDKey, op.Row)
		}
		ops[i].UUID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(op.Table+"/"+id)).String()
	}
	return nil
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
	// cudnGreen is topologytest.Layer2Upgrade's network.
	cudnGreen = `
apiVersion: k8s.ovn.org/v1
kind: ClusterUserDefinedNetwork
metadata:
  name: green
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: green
  network:
    topology: Layer2
    layer2:
      role: Primary
      subnets:
      - 203.203.0.0/24
      - 2010:100:200::/60
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
	c := clitest.NewClient(t, k)
	var objects []client.Object
	for _, st := range []*cluster.State{topologytest.Layer3(), topologytest.OKEP5094(), topologytest.Layer2Upgrade()} {
		for _, n := range st.Nodes {
			objects = append(objects, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}})
		}
	}
	objects = append(objects, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test12"}})
	for _, manifest := range []struct {
		yaml string
		into client.Object
	}{{cudnBlue, &ovnkv1.ClusterUserDefinedNetwork{}}, {cudnGreen, &ovnkv1.ClusterUserDefinedNetwork{}}, {udnNamespaceScoped, &ovnkv1.UserDefinedNetwork{}}} {
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

// Run runs `kubectl ovnk <args>`, the plugin's whole command tree with its flags and
// settings, against k on the terminal term. It returns what the command printed and its
// error. env is the environment the command sees; settings files come only from it.
func Run(t *testing.T, k *testenv.Kube, term clitest.Terminal, env map[string]string, args ...string) (string, error) {
	t.Helper()
	return RunWith(t, k.Kubeconfig, term, env, args...)
}

// RunWith is Run with the cluster taken from the kubeconfig file (which need not exist:
// a command that reads no cluster runs anyway).
func RunWith(t *testing.T, kubeconfig string, term clitest.Terminal, env map[string]string, args ...string) (string, error) {
	t.Helper()
	vars := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	maps.Copy(vars, env)
	var out bytes.Buffer
	root := cli.NewRootCommandWith(clitest.NewFactory(kubeconfig, term, vars, &out, io.Discard))
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// Plain is a pipe of the default width: no colour. Wide is a pipe wide enough that
// nothing wraps.
var (
	Plain = clitest.Terminal{Width: 80}
	Wide  = clitest.Terminal{Width: 400}
)

// JSON runs `kubectl ovnk <args> -o json` on a Plain pipe and decodes what it prints
// into a V.
func JSON[V any](t *testing.T, k *testenv.Kube, args ...string) V {
	t.Helper()
	out, err := Run(t, k, Plain, nil, append(slices.Clip(args), "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var v V
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("-o json is not a %T: %v\n%s", v, err, out)
	}
	return v
}

// Golden is a command line whose output a golden file pins.
type Golden struct {
	Name string
	Args []string
}

// Goldens runs each command line at 80 and 200 columns, plain and on a terminal, and
// compares the output with testdata/PREFIX-NAME-WIDTH[-colour].golden. Every line fits
// the terminal, and the coloured output is the plain one with colour. The output on an
// 80-column terminal with NO_COLOR is pinned too (PREFIX-NAME-80-tty.golden), to read
// the terminal's layout without escapes.
func Goldens(t *testing.T, k *testenv.Kube, prefix string, goldens []Golden) {
	t.Helper()
	run := func(t *testing.T, term clitest.Terminal, args ...string) (string, error) {
		return Run(t, k, term, nil, args...)
	}
	GoldensWith(t, prefix+"-", goldens, run)
	for _, g := range goldens {
		clitest.Goldens(t, prefix+"-"+g.Name, []clitest.GoldenTerminal{clitest.NoColour80}, func(t *testing.T, term clitest.Terminal) string {
			out, err := run(t, term, g.Args...)
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
	}
}

// GoldensWith is Goldens with the command lines run by run, and the golden files
// named testdata/PREFIXNAME-WIDTH[-colour].golden.
func GoldensWith(t *testing.T, prefix string, goldens []Golden, run func(t *testing.T, term clitest.Terminal, args ...string) (string, error)) {
	t.Helper()
	for _, g := range goldens {
		for _, width := range []int{80, 200} {
			for _, tty := range []bool{false, true} {
				name := fmt.Sprintf("%s-%d", g.Name, width)
				if tty {
					name += "-colour"
				}
				t.Run(name, func(t *testing.T) {
					term := clitest.Terminal{TTY: tty, Width: width}
					out, err := run(t, term, g.Args...)
					if err != nil {
						t.Fatal(err)
					}
					clitest.FitsTerminal(t, out, term)
					if tty {
						// A terminal's layout differs from a pipe's (tables are fitted
						// there only): colour must add nothing but escapes to it.
						term.NoColor = true
						plain, err := run(t, term, g.Args...)
						if err != nil {
							t.Fatal(err)
						}
						if ansi.Strip(out) != plain {
							t.Errorf("the coloured output is not the output with NO_COLOR, coloured:\n%s", out)
						}
					}
					clitest.Golden(t, prefix+name, out)
				})
			}
		}
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
