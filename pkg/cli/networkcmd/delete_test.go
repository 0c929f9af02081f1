package networkcmd

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
)

// TestDeleteRefusedWhilePodsUseTheNetwork covers each way a pod uses a network, and the
// pods that do not count.
func TestDeleteRefusedWhilePodsUseTheNetwork(t *testing.T) {
	h := newHarness(t)

	t.Run("primary UserDefinedNetwork: the pods of its namespace", func(t *testing.T) {
		h.T = t
		ns := h.Namespace("", nil)
		h.MustRun("create", "prim", "-n", ns, "--subnet", "10.10.0.0/16")
		for i := range 5 {
			h.pod(ns, fmt.Sprintf("web-%d", i))
		}
		_, _, err := h.Run("delete", ns+"/prim")
		clitest.OneLine(t, err, fmt.Sprintf("network %s/prim is in use by 5 pods (%s/web-0, %s/web-1, %s/web-2 and 2 more): delete them first, or pass --force to delete the network anyway", ns, ns, ns, ns))
		if !h.exists(&ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prim"}}) {
			t.Fatal("the refused delete deleted the network")
		}
		out := h.MustRun("delete", "prim", "-n", ns, "--force")
		if want := fmt.Sprintf("userdefinednetwork.k8s.ovn.org \"prim\" deleted from %s namespace\n", ns); out != want {
			t.Errorf("delete --force printed %q, want %q", out, want)
		}
		if h.exists(&ovnkv1.UserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prim"}}) {
			t.Error("delete --force left the network")
		}
	})

	t.Run("finished and host-network pods do not count", func(t *testing.T) {
		h.T = t
		ns := h.Namespace("", nil)
		h.MustRun("create", "prim", "-n", ns, "--subnet", "10.10.0.0/16")
		done := h.pod(ns, "job")
		done.Status.Phase = corev1.PodSucceeded
		if err := h.C.Status().Update(h.Ctx(), done); err != nil {
			t.Fatal(err)
		}
		host := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
			Spec:       corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/agent"}}},
		}
		h.Create(host)
		h.MustRun("delete", ns+"/prim")
	})

	t.Run("secondary UserDefinedNetwork: pods with an interface on it", func(t *testing.T) {
		h.T = t
		ns := h.Namespace("", nil)
		h.MustRun("create", "sec", "-n", ns, "--subnet", "10.20.0.0/16", "--role", "secondary")
		h.pod(ns, "plain")                            // in the namespace, but not attached
		h.pod(ns, "elsewhere", "other-ns/sec")        // a NAD of that name in another namespace
		h.pod(ns, "attached", ns+"/sec", "other/net") // attached, among others
		_, _, err := h.Run("delete", ns+"/sec")
		clitest.OneLine(t, err, fmt.Sprintf("network %s/sec is in use by 1 pod (%s/attached)", ns, ns))
		h.MustRun("delete", ns+"/sec", "--force")
	})

	t.Run("primary ClusterUserDefinedNetwork: the pods of the namespaces it serves", func(t *testing.T) {
		h.T = t
		served := h.Namespace("", map[string]string{"tenant": "del-primary"})
		unserved := h.Namespace("", nil)
		h.cudnLater("del-primary")
		h.MustRun("create", "del-primary", "--cluster", "--namespace-selector", "tenant=del-primary", "--subnet", "10.30.0.0/16")
		h.pod(unserved, "bystander")
		if out := h.MustRun("describe", "del-primary"); !strings.Contains(squeeze(out), "Kind: ClusterUserDefinedNetwork") {
			t.Errorf("describe without --cluster did not find the only network of that name:\n%s", out)
		}
		h.pod(served, "db")
		_, _, err := h.Run("delete", "del-primary")
		clitest.OneLine(t, err, fmt.Sprintf("network del-primary is in use by 1 pod (%s/db)", served))
		out := h.MustRun("delete", "del-primary", "--force")
		if out != "clusteruserdefinednetwork.k8s.ovn.org \"del-primary\" deleted\n" {
			t.Errorf("delete printed %q", out)
		}
	})

	t.Run("secondary ClusterUserDefinedNetwork: its NAD in the namespaces it serves", func(t *testing.T) {
		h.T = t
		served := h.Namespace("", nil)
		shadowed := h.Namespace("", nil)
		h.cudnLater("del-sec")
		h.MustRun("create", "del-sec", "--cluster", "--namespaces", served+","+shadowed, "--subnet", "10.40.0.0/16", "--role", "secondary")
		// In shadowed a UserDefinedNetwork of the same name takes the NAD name.
		h.MustRun("create", "del-sec", "-n", shadowed, "--subnet", "10.41.0.0/16", "--role", "secondary")
		h.pod(shadowed, "on-the-udn", shadowed+"/del-sec")
		h.MustRun("delete", "del-sec", "--cluster") // no pod on the cluster network yet
		h.MustRun("create", "del-sec", "--cluster", "--namespaces", served+","+shadowed, "--subnet", "10.40.0.0/16", "--role", "secondary")
		h.pod(served, "on-the-cudn", served+"/del-sec")
		_, _, err := h.Run("delete", "del-sec", "--cluster")
		clitest.OneLine(t, err, fmt.Sprintf("network del-sec is in use by 1 pod (%s/on-the-cudn)", served))
		if !strings.Contains(h.MustRun("describe", "del-sec", "--cluster"), "del-sec") {
			t.Error("the refused delete removed the cluster network")
		}
	})
}
