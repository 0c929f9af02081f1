package clusterkind_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestDetect runs Detect against the real API server as DaemonSets come and go. The
// subtests run in order, each removing what it created: Detect looks across the whole
// cluster.
func TestDetect(t *testing.T) {
	k := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agentNS := k.Namespace(t)

	detect := func(t *testing.T, cs kubernetes.Interface) clusterkind.Cluster {
		t.Helper()
		c, err := clusterkind.Detect(ctx, cs, agentNS)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("neither", func(t *testing.T) {
		if c := detect(t, k.Client); c.Kind != clusterkind.None {
			t.Errorf("detected %v on a cluster without either", c)
		}
	})

	t.Run("upstream interconnect", func(t *testing.T) {
		ns := k.Namespace(t)
		create(ctx, t, k.Client, clusterkindtest.Upstream(ns, ""))
		c := detect(t, k.Client)
		want := clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: ns, DaemonSet: "ovnkube-node", Interconnect: true}
		if c.Kind != want.Kind || c.Namespace != want.Namespace || c.DaemonSet != want.DaemonSet || c.Interconnect != want.Interconnect {
			t.Errorf("detected %+v, want %+v", c, want)
		}
		if c.PodSelector == nil || c.PodSelector.MatchLabels["app"] != "ovnkube-node" {
			t.Errorf("pod selector %v, want the DaemonSet's (app=ovnkube-node)", c.PodSelector)
		}
	})

	t.Run("upstream with a central NB", func(t *testing.T) {
		ns := k.Namespace(t)
		create(ctx, t, k.Client, clusterkindtest.Centralized(ns))
		if c := detect(t, k.Client); c.Kind != clusterkind.Upstream || c.Namespace != ns || c.Interconnect {
			t.Errorf("detected %+v, want OVN-Kubernetes in %s without interconnect", c, ns)
		}
	})

	t.Run("upstream's namespace is preferred", func(t *testing.T) {
		create(ctx, t, k.Client, clusterkindtest.Upstream(k.Namespace(t), ""))
		known := namespace(ctx, t, k.Client, "openshift-ovn-kubernetes")
		create(ctx, t, k.Client, clusterkindtest.OpenShift(known, ""))
		if c := detect(t, k.Client); c.Namespace != known || !c.Interconnect {
			t.Errorf("detected %+v, want the DaemonSet in %s", c, known)
		}
	})

	t.Run("the agent wins", func(t *testing.T) {
		create(ctx, t, k.Client, clusterkindtest.Upstream(k.Namespace(t), ""))
		create(ctx, t, k.Client, agentDaemonSet(t, agentNS))
		c := detect(t, k.Client)
		if want := (clusterkind.Cluster{Kind: clusterkind.OVNK, Namespace: agentNS, DaemonSet: manifests.AgentName}); c.Kind != want.Kind || c.Namespace != want.Namespace || c.DaemonSet != want.DaemonSet {
			t.Errorf("detected %+v, want %+v", c, want)
		}
	})

	t.Run("a user who may read only upstream's namespace", func(t *testing.T) {
		known := namespace(ctx, t, k.Client, "ovn-kubernetes")
		create(ctx, t, k.Client, clusterkindtest.Upstream(known, ""))
		user := "reader-" + agentNS
		allowGetDaemonSets(ctx, t, k, known, user)
		cs, err := kubernetes.NewForConfig(k.ConfigAs(user))
		if err != nil {
			t.Fatal(err)
		}
		if c := detect(t, cs); c.Kind != clusterkind.Upstream || c.Namespace != known {
			t.Errorf("detected %+v, want OVN-Kubernetes in %s", c, known)
		}
	})

	t.Run("a user who may read only upstream's namespace, empty", func(t *testing.T) {
		known := namespace(ctx, t, k.Client, "ovn-kubernetes")
		user := "empty-reader-" + agentNS
		allowGetDaemonSets(ctx, t, k, known, user)
		cs, err := kubernetes.NewForConfig(k.ConfigAs(user))
		if err != nil {
			t.Fatal(err)
		}
		_, err = clusterkind.Detect(ctx, cs, agentNS)
		want := "look for the ovnk agent's DaemonSet " + agentNS + "/ovnk-agent: "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "ask for get on daemonsets in namespace "+agentNS) {
			t.Errorf("error %v\nwant it to start with %q and say what to ask for", err, want)
		}
	})

	t.Run("a user who may read no DaemonSets", func(t *testing.T) {
		cs, err := kubernetes.NewForConfig(k.ConfigAs("nobody-" + agentNS))
		if err != nil {
			t.Fatal(err)
		}
		_, err = clusterkind.Detect(ctx, cs, agentNS)
		want := `look for OVN-Kubernetes' DaemonSet ovnkube-node: daemonsets.apps "ovnkube-node" is forbidden: User "nobody-` + agentNS + `" cannot list resource "daemonsets"`
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "ask for list on daemonsets in all namespaces, or get in ovn-kubernetes and openshift-ovn-kubernetes") {
			t.Errorf("error %v\nwant it to start with %q and say what to ask for", err, want)
		}
	})
}

// create creates ds and deletes it when the test ends.
func create(ctx context.Context, t *testing.T, cs kubernetes.Interface, ds *appsv1.DaemonSet) {
	t.Helper()
	if _, err := cs.AppsV1().DaemonSets(ds.Namespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cs.AppsV1().DaemonSets(ds.Namespace).Delete(context.Background(), ds.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete DaemonSet %s/%s: %v", ds.Namespace, ds.Name, err)
		}
	})
}

// namespace creates a namespace of a fixed name if it is not there yet; it is left for
// the next subtest that needs it.
func namespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

func agentDaemonSet(t *testing.T, ns string) *appsv1.DaemonSet {
	t.Helper()
	objs, err := manifests.Agent(manifests.AgentOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			return ds
		}
	}
	t.Fatal("the agent manifests hold no DaemonSet")
	return nil
}

// allowGetDaemonSets lets user get DaemonSets in namespace ns, and nothing else, and
// waits until the API server's authorizer says so.
func allowGetDaemonSets(ctx context.Context, t *testing.T, k *testenv.Kube, ns, user string) {
	t.Helper()
	cs := k.Client
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as, err := kubernetes.NewForConfig(k.ConfigAs(user))
	if err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 30*time.Second, "the role binding in force", func(ctx context.Context) error {
		_, err := as.AppsV1().DaemonSets(ns).Get(ctx, clusterkind.UpstreamDaemonSet, metav1.GetOptions{})
		if apierrors.IsForbidden(err) {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
