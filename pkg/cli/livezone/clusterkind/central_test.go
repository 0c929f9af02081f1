package clusterkind_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestFindCentralNB finds upstream's ovnkube-db on the real API server in each layout
// upstream deploys it in, and says what is missing when it is not there.
func TestFindCentralNB(t *testing.T) {
	k := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	find := func(t *testing.T, ns string) *clusterkind.Workload {
		t.Helper()
		w, err := clusterkind.FindCentralNB(ctx, k.Client, ns)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	t.Run("Deployment", func(t *testing.T) {
		ns := k.Namespace(t)
		createDeployment(ctx, t, k.Client, clusterkindtest.CentralDB(ns, ""), 0)
		w := find(t, ns)
		if w.Kind != "Deployment" || w.Namespace != ns || w.Name != "ovnkube-db" || w.Selector.MatchLabels["name"] != "ovnkube-db" {
			t.Errorf("found %+v, want Deployment %s/ovnkube-db selecting name=ovnkube-db", w, ns)
		}
	})

	t.Run("raft StatefulSet", func(t *testing.T) {
		ns := k.Namespace(t)
		createStatefulSet(ctx, t, k.Client, clusterkindtest.CentralDBRaft(ns, "", 3), 0)
		if w := find(t, ns); w.Kind != "StatefulSet" || w.String() != "StatefulSet "+ns+"/ovnkube-db" || w.Selector.MatchLabels["name"] != "ovnkube-db" {
			t.Errorf("found %+v (%s), want StatefulSet %s/ovnkube-db selecting name=ovnkube-db", w, w, ns)
		}
	})

	t.Run("both: the one with ready pods", func(t *testing.T) {
		ns := k.Namespace(t)
		createDeployment(ctx, t, k.Client, clusterkindtest.CentralDB(ns, ""), 0)
		createStatefulSet(ctx, t, k.Client, clusterkindtest.CentralDBRaft(ns, "", 3), 2)
		if w := find(t, ns); w.Kind != "StatefulSet" {
			t.Errorf("found %+v, want the StatefulSet, whose pods are ready", w)
		}
	})

	t.Run("both ready: the Deployment", func(t *testing.T) {
		ns := k.Namespace(t)
		createDeployment(ctx, t, k.Client, clusterkindtest.CentralDB(ns, ""), 1)
		createStatefulSet(ctx, t, k.Client, clusterkindtest.CentralDBRaft(ns, "", 3), 3)
		if w := find(t, ns); w.Kind != "Deployment" {
			t.Errorf("found %+v, want the Deployment, upstream's default", w)
		}
	})

	t.Run("neither", func(t *testing.T) {
		ns := k.Namespace(t)
		_, err := clusterkind.FindCentralNB(ctx, k.Client, ns)
		want := "no Deployment or StatefulSet ovnkube-db in namespace " + ns + ", which serves OVN-Kubernetes' central NB when ovnkube-node serves none: see kubectl -n " + ns + " get deployments,statefulsets, or read the zones with --nb ENDPOINT"
		if err == nil || err.Error() != want {
			t.Errorf("error %v\nwant %s", err, want)
		}
	})

	t.Run("a user who may not read them", func(t *testing.T) {
		ns := k.Namespace(t)
		createDeployment(ctx, t, k.Client, clusterkindtest.CentralDB(ns, ""), 1)
		user := "no-db-" + ns
		allowGetDaemonSets(ctx, t, k, ns, user)
		cs, err := kubernetes.NewForConfig(k.ConfigAs(user))
		if err != nil {
			t.Fatal(err)
		}
		_, err = clusterkind.FindCentralNB(ctx, cs, ns)
		prefix := "look for OVN-Kubernetes' central NB (Deployment or StatefulSet ovnkube-db in namespace " + ns + "): "
		suffix := "ask for get on deployments and statefulsets in namespace " + ns + ", or read the zones with --nb ENDPOINT"
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.HasSuffix(err.Error(), suffix) || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("error %v\nwant it to start with %q, say why and end with %q", err, prefix, suffix)
		}
	})

	t.Run("Detect names it", func(t *testing.T) {
		ns := k.Namespace(t)
		create(ctx, t, k.Client, clusterkindtest.Centralized(ns))
		createStatefulSet(ctx, t, k.Client, clusterkindtest.CentralDBRaft(ns, "", 3), 3)
		c, err := clusterkind.Detect(ctx, k.Client, k.Namespace(t))
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != clusterkind.Upstream || c.Interconnect || c.CentralNB == nil || c.CentralNB.Kind != "StatefulSet" || c.CentralNB.Namespace != ns {
			t.Errorf("detected %+v (central NB %+v), want upstream in %s without interconnect, its NB in StatefulSet ovnkube-db", c, c.CentralNB, ns)
		}
		want := "OVN-Kubernetes, one central NB served by StatefulSet " + ns + "/ovnkube-db (DaemonSet " + ns + "/ovnkube-node)"
		if got := c.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	})

	t.Run("Detect without ovnkube-db still tells the kind", func(t *testing.T) {
		ns := k.Namespace(t)
		create(ctx, t, k.Client, clusterkindtest.Centralized(ns))
		c, err := clusterkind.Detect(ctx, k.Client, k.Namespace(t))
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != clusterkind.Upstream || c.Namespace != ns || c.Interconnect || c.CentralNB != nil {
			t.Errorf("detected %+v, want upstream in %s without interconnect and no central NB found", c, ns)
		}
	})
}

// createDeployment creates d with ready pods, as its controller would report them.
func createDeployment(ctx context.Context, t *testing.T, cs kubernetes.Interface, d *appsv1.Deployment, ready int32) {
	t.Helper()
	d, err := cs.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.Replicas, d.Status.ReadyReplicas = *d.Spec.Replicas, ready
	if _, err := cs.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createStatefulSet creates sts with ready pods, as its controller would report them.
func createStatefulSet(ctx context.Context, t *testing.T, cs kubernetes.Interface, sts *appsv1.StatefulSet, ready int32) {
	t.Helper()
	sts, err := cs.AppsV1().StatefulSets(sts.Namespace).Create(ctx, sts, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sts.Status.Replicas, sts.Status.ReadyReplicas = *sts.Spec.Replicas, ready
	if _, err := cs.AppsV1().StatefulSets(sts.Namespace).UpdateStatus(ctx, sts, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
