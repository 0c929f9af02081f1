package networkcmd

import (
	"os"
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
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

// The tests run the commands against the package's real kube-apiserver, with the CRDs
// pkg/manifests embeds (testenv installs them). They run one after another and each
// removes the cluster-scoped objects and networks it made, because `network list`
// shows the whole cluster.

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

// harness runs `kubectl ovnk network …` in-process against the shared API server.
type harness struct {
	*clitest.Harness
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := clitest.NewHarness(t, func(f *cmdutil.Factory, now func() time.Time) []*cobra.Command {
		return []*cobra.Command{newNetworkCmd(f, now)}
	})
	h.Prefix = []string{"network"}
	// The cluster's ranges come from an agent installed with install's default config.
	h.AgentConfig(manifests.DefaultAgentConfig)
	return &harness{h}
}

// cudnLater deletes the ClusterUserDefinedNetwork name, if it exists, when the test ends.
func (h *harness) cudnLater(name string) {
	h.DeleteLater(&ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// pod creates a pod in ns, with k8s.ovn.org/pod-networks entries on the given NADs
// ("<namespace>/<name>") when any are given.
func (h *harness) pod(ns, name string, nads ...string) *corev1.Pod {
	h.T.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: "node-x", Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}}},
	}
	if len(nads) > 0 {
		ifaces := map[string]cluster.PodInterface{}
		for i, nad := range nads {
			ifaces[nad] = podInterface(h.T, i)
		}
		v, err := cluster.PodNetworksCodec.Format(ifaces)
		if err != nil {
			h.T.Fatal(err)
		}
		p.Annotations = map[string]string{cluster.AnnotationPodNetworks: v}
	}
	h.Create(p)
	return p
}

// exists reports whether the network object exists.
func (h *harness) exists(obj client.Object) bool {
	h.T.Helper()
	err := h.C.Get(h.Ctx(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		h.T.Fatal(err)
	}
	return err == nil
}

// networkCount counts every CUDN and UDN of the cluster.
func (h *harness) networkCount() int {
	h.T.Helper()
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	var udns ovnkv1.UserDefinedNetworkList
	if err := h.C.List(h.Ctx(), &cudns); err != nil {
		h.T.Fatal(err)
	}
	if err := h.C.List(h.Ctx(), &udns); err != nil {
		h.T.Fatal(err)
	}
	return len(cudns.Items) + len(udns.Items)
}
