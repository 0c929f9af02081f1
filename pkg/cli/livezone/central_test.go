package livezone_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestCentralSource reads zones as the plugin does on a cluster running upstream
// OVN-Kubernetes with one central NB: pods/exec on the real API server, proxied to a
// stand-in kubelet that runs the real ovsdb-client against a real NB, in ovnkube-db
// pods laid out as upstream's Deployment and raft StatefulSet lay out theirs.
func TestCentralSource(t *testing.T) {
	root := testenv.NeedOVN(t)
	k := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	kubelet := ovsdbClientKubelet(t, root)
	nb := zone(ctx, t, "node1")
	nodeRoot := nodeRootWith(t, map[string]string{"var/run/ovn": nb.Socket})
	socket := "unix:" + filepath.Join(nodeRoot, "var/run/ovn", manifests.NBSocketName)

	// execsIn are the execs the kubelet served in pod's NB container.
	execsIn := func(kubelet *testenv.Kubelet, pod *corev1.Pod) []testenv.Exec {
		return slices.DeleteFunc(kubelet.Execs(), func(e testenv.Exec) bool {
			return e.Namespace != pod.Namespace || e.Pod != pod.Name || e.Container != "nb-ovsdb"
		})
	}

	t.Run("found with no configuration, read once for every node", func(t *testing.T) {
		ns := k.Namespace(t)
		nodes := []string{ns + "-db", ns + "-a", ns + "-b"}
		for _, n := range nodes {
			addNode(ctx, t, k, n, kubelet)
		}
		createDaemonSet(ctx, t, k, clusterkindtest.Centralized(ns))
		db := clusterkindtest.CentralDB(ns, nodeRoot)
		createWorkload(ctx, t, k, db)
		pod := createPod(ctx, t, k, clusterkindtest.DeploymentPod(db, nodes[0]), upstreamRunning)

		src := livezone.For(factory(k, k.Namespace(t)), "")
		dumps := make([]*ovn.Dump, len(nodes))
		errs := make([]error, len(nodes))
		var wg sync.WaitGroup
		for i, n := range nodes {
			wg.Go(func() { dumps[i], errs[i] = src.Dump(ctx, n) })
		}
		wg.Wait()
		for i, n := range nodes {
			if errs[i] != nil {
				t.Fatalf("node %s: %v", n, errs[i])
			}
			requireDumpOfNB(t, dumps[i], nbtest.Dump(t, nb, n))
		}
		execs := execsIn(kubelet, pod)
		want := []string{"ovsdb-client", "--timeout=30", "query", socket}
		if len(execs) != 1 || len(execs[0].Command) != 5 || !slices.Equal(execs[0].Command[:4], want) {
			t.Errorf("the kubelet served %+v in %s; want one exec of %v", execs, pod.Name, want)
		}
	})

	t.Run("raft StatefulSet: a ready member", func(t *testing.T) {
		ns := k.Namespace(t)
		node := ns + "-raft"
		addNode(ctx, t, k, node, kubelet)
		sts := clusterkindtest.CentralDBRaft(ns, nodeRoot, 3)
		createWorkload(ctx, t, k, sts)
		createPod(ctx, t, k, clusterkindtest.StatefulSetPod(sts, 0, node), notReady)
		member := createPod(ctx, t, k, clusterkindtest.StatefulSetPod(sts, 1, node), upstreamRunning)
		createPod(ctx, t, k, clusterkindtest.StatefulSetPod(sts, 2, node), upstreamRunning)
		got, err := centralSource(k, ns).Dump(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		requireDumpOfNB(t, got, nbtest.Dump(t, nb, node))
		if execs := execsIn(kubelet, member); len(execs) != 1 {
			t.Errorf("execs in %s: %+v; want one, in the first ready member", member.Name, execs)
		}
	})

	t.Run("no ovnkube-db", func(t *testing.T) {
		ns := k.Namespace(t)
		_, err := centralSource(k, ns).Dump(ctx, "any")
		requireOneLine(t, err, "no Deployment or StatefulSet ovnkube-db in namespace "+ns+", which serves OVN-Kubernetes' central NB when ovnkube-node serves none: ")
	})

	t.Run("no pod", func(t *testing.T) {
		ns := k.Namespace(t)
		createWorkload(ctx, t, k, clusterkindtest.CentralDB(ns, nodeRoot))
		_, err := centralSource(k, ns).Dump(ctx, "any")
		requireOneLine(t, err, "no pod of Deployment "+ns+"/ovnkube-db, which serves OVN-Kubernetes' central NB, in namespace "+ns+" (selector name=ovnkube-db): see kubectl -n "+ns+" describe deployment ovnkube-db")
	})

	t.Run("no ready pod", func(t *testing.T) {
		ns := k.Namespace(t)
		node := ns + "-unready"
		addNode(ctx, t, k, node, kubelet)
		sts := clusterkindtest.CentralDBRaft(ns, nodeRoot, 3)
		createWorkload(ctx, t, k, sts)
		pod := createPod(ctx, t, k, clusterkindtest.StatefulSetPod(sts, 0, node), notReady)
		_, err := centralSource(k, ns).Dump(ctx, node)
		requireOneLine(t, err, "no ready pod of StatefulSet "+ns+"/ovnkube-db, which serves OVN-Kubernetes' central NB: pod "+pod.Name+" is Running but not ready (ContainersNotReady: containers with unready status: [nb-ovsdb]): see kubectl -n "+ns+" describe pod "+pod.Name)
		if execs := execsIn(kubelet, pod); len(execs) != 0 {
			t.Errorf("exec'd into a pod that is not ready: %+v", execs)
		}
	})

	t.Run("the first failure answers every node", func(t *testing.T) {
		bare := testenv.StartKubelet(t, t.TempDir())
		ns := k.Namespace(t)
		node := ns + "-no-client"
		addNode(ctx, t, k, node, bare)
		db := clusterkindtest.CentralDB(ns, nodeRoot)
		createWorkload(ctx, t, k, db)
		pod := createPod(ctx, t, k, clusterkindtest.DeploymentPod(db, node), upstreamRunning)
		src := centralSource(k, ns)
		_, first := src.Dump(ctx, node)
		requireOneLine(t, first, "container nb-ovsdb of pod "+ns+"/"+pod.Name+" has no ovsdb-client: ")
		_, second := src.Dump(ctx, "other")
		if second == nil || second.Error() != first.Error() {
			t.Errorf("second read: %v; want the first's error %v", second, first)
		}
		if execs := execsIn(bare, pod); len(execs) != 1 {
			t.Errorf("execs %+v; want one for both reads", execs)
		}
	})

	t.Run("exec not allowed", func(t *testing.T) {
		ns := k.Namespace(t)
		node := ns + "-no-exec"
		addNode(ctx, t, k, node, kubelet)
		db := clusterkindtest.CentralDB(ns, nodeRoot)
		createWorkload(ctx, t, k, db)
		pod := createPod(ctx, t, k, clusterkindtest.DeploymentPod(db, node), upstreamRunning)
		user := "viewer-" + ns
		allowReadingPods(ctx, t, k, ns, user)
		viewer := factory(k, ns)
		*viewer.Kube.Impersonate = user
		// Detect found the workload (the user may read it): only its pods are read here.
		found := &clusterkind.Workload{Kind: "Deployment", Namespace: ns, Name: db.Name, Selector: db.Spec.Selector}
		src := &livezone.CentralSource{Factory: viewer, Cluster: clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: ns, DaemonSet: clusterkind.UpstreamDaemonSet, CentralNB: found}}
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "reading the NB runs ovsdb-client in container nb-ovsdb of pod "+ns+"/"+pod.Name+" through pods/exec, which is not allowed: ")
		if !strings.HasSuffix(err.Error(), "ask for create on pods/exec in namespace "+ns+", or read the zone with --nb ENDPOINT") {
			t.Errorf("the error does not say what to ask for: %v", err)
		}
	})

	t.Run("a caller whose context ends does not end the read", func(t *testing.T) {
		ns := k.Namespace(t)
		node := ns + "-wait"
		addNode(ctx, t, k, node, kubelet)
		db := clusterkindtest.CentralDB(ns, nodeRoot)
		createWorkload(ctx, t, k, db)
		pod := createPod(ctx, t, k, clusterkindtest.DeploymentPod(db, node), upstreamRunning)
		src := centralSource(k, ns)
		done, stop := context.WithCancel(ctx)
		stop()
		if _, err := src.Dump(done, node); err == nil || !strings.Contains(err.Error(), "waiting for the read of the central NB") {
			t.Fatalf("a caller with its context ended: %v, want the error of its wait", err)
		}
		got, err := src.Dump(ctx, node)
		if err != nil {
			t.Fatalf("the next caller: %v", err)
		}
		requireDumpOfNB(t, got, nbtest.Dump(t, nb, node))
		if execs := execsIn(kubelet, pod); len(execs) != 1 {
			t.Errorf("the kubelet served %d execs in %s, want the one read both callers shared", len(execs), pod.Name)
		}
	})
}

// centralSource reads the central NB of the upstream deployment in namespace ns, as
// Detect finds it without interconnect when it could not name ovnkube-db: the source
// looks for it.
func centralSource(k *testenv.Kube, ns string) *livezone.CentralSource {
	return &livezone.CentralSource{
		Factory: factory(k, ns),
		Cluster: clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: ns, DaemonSet: clusterkind.UpstreamDaemonSet},
	}
}

// createWorkload creates ovnkube-db, a Deployment or a StatefulSet. It is left in the
// test's namespace: nothing looks for it in another.
func createWorkload(ctx context.Context, t *testing.T, k *testenv.Kube, w any) {
	t.Helper()
	var err error
	switch w := w.(type) {
	case *appsv1.Deployment:
		_, err = k.Client.AppsV1().Deployments(w.Namespace).Create(ctx, w, metav1.CreateOptions{})
	case *appsv1.StatefulSet:
		_, err = k.Client.AppsV1().StatefulSets(w.Namespace).Create(ctx, w, metav1.CreateOptions{})
	default:
		t.Fatalf("not a workload: %T", w)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// notReady is a pod whose containers run but whose NB has not passed its readiness
// probe.
func notReady(p *corev1.Pod) {
	clusterkindtest.Running(p, false)
	p.Status.Conditions[0].Reason = "ContainersNotReady"
	p.Status.Conditions[0].Message = "containers with unready status: [nb-ovsdb]"
}
