package tracecmd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/livezone/livezonetest"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// traceCluster is a topologytest cluster as the plugin finds it: its nodes, namespaces
// and pods in the package's API server, with the annotations their agents would have
// written, and each node's compiled zone in an NB of its own, named by a settings file.
type traceCluster struct {
	k *testenv.Kube
	// env is the environment of a command that reads the zones from the NBs.
	env map[string]string
}

// newTraceCluster puts st in the API server (what is there already stays: every test
// of the package shares the server, and the fixtures' nodes and pods do not overlap)
// and starts its zones.
func newTraceCluster(t *testing.T, st *cluster.State) *traceCluster {
	t.Helper()
	k := testenv.SharedKube(t)
	c := clitest.NewClient(t, k)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var objects []client.Object
	var settings strings.Builder
	settings.WriteString("nb-endpoints:\n")
	for _, n := range st.Nodes {
		primary, err := cluster.PrimaryIfAddrCodec.Format(n.PrimaryIfAddrs)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Annotations: map[string]string{
			cluster.AnnotationNodeChassisID:     n.ChassisID,
			cluster.AnnotationNodePrimaryIfAddr: primary,
		}}})
		fmt.Fprintf(&settings, "  %s: %q\n", n.Name, livezonetest.ZoneNB(t, st, n.Name).Endpoint)
	}
	networks := map[string]*cluster.Network{}
	for _, n := range st.Networks {
		networks[n.Name] = n
	}
	namespaces := map[string]bool{}
	for _, p := range st.Pods {
		annotation := map[string]cluster.PodInterface{}
		for name, iface := range p.Networks {
			nad := cluster.DefaultNetworkName
			if name != cluster.DefaultNetworkName {
				nad = p.Namespace + "/" + networks[name].Owner.Name
			}
			annotation[nad] = iface
		}
		value, err := cluster.PodNetworksCodec.Format(annotation)
		if err != nil {
			t.Fatal(err)
		}
		if !namespaces[p.Namespace] {
			namespaces[p.Namespace] = true
			objects = append(objects, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}})
		}
		objects = append(objects, podOn(p.Namespace, p.Name, p.Node, map[string]string{cluster.AnnotationPodNetworks: value}))
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	file := filepath.Join(t.TempDir(), "ovnk.yaml")
	if err := os.WriteFile(file, []byte(settings.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return &traceCluster{k: k, env: map[string]string{"OVNK_PLUGIN_CONFIG": file}}
}

func podOn(ns, name, node string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}},
	}
}

// run runs `kubectl ovnk trace args…` against the cluster on the terminal term.
func (tc *traceCluster) run(t *testing.T, term clitest.Terminal, args ...string) (string, error) {
	t.Helper()
	return livezonetest.Run(t, tc.k, term, tc.env, append([]string{"trace"}, args...)...)
}

// runWithoutCluster runs `kubectl ovnk trace args…` with a kubeconfig that does not
// exist, as on a machine that has only a --save file.
func runWithoutCluster(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return livezonetest.RunWith(t, filepath.Join(t.TempDir(), "no-kubeconfig"), clitest.Terminal{Width: 80}, nil, append([]string{"trace"}, args...)...)
}
