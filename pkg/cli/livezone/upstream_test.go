package livezone_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestUpstreamSource reads zones as the plugin does on a cluster running upstream
// OVN-Kubernetes: pods/exec on the real API server, proxied to a stand-in kubelet that
// runs the real ovsdb-client against a real NB, in pods laid out as upstream's and
// OpenShift's ovnkube-node.
func TestUpstreamSource(t *testing.T) {
	root := testenv.NeedOVN(t)
	k := testenv.SharedKube(t)
	ns := k.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	kubelet := ovsdbClientKubelet(t, root)
	nb := zone(ctx, t, "node1")
	// The stand-in kubelet has no container filesystem: the pods' mounts are directories
	// of this machine, under nodeRoot, where the NB socket is linked to upstream's name.
	nodeRoot := nodeRootWith(t, map[string]string{"var/run/ovn": nb.Socket, "run/ovn": nb.Socket})
	ds := clusterkindtest.Upstream(ns, nodeRoot)
	createDaemonSet(ctx, t, k, ds)
	f := factory(k, ns)
	cluster := clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: ns, DaemonSet: ds.Name, Interconnect: true, PodSelector: ds.Spec.Selector}
	src := &livezone.UpstreamSource{Factory: f, Cluster: cluster}

	t.Run("dump equals the NB", func(t *testing.T) {
		node := ns + "-ready"
		addNode(ctx, t, k, node, kubelet)
		pod := createPod(ctx, t, k, clusterkindtest.Pod(ds, node), upstreamRunning)
		got, err := src.Dump(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		requireDumpOfNB(t, got, nbtest.Dump(t, nb, node))
		socket := filepath.Join(nodeRoot, "var/run/ovn", manifests.NBSocketName)
		wantArgs := []string{"ovsdb-client", "--timeout=30", "query", "unix:" + socket}
		served := slices.ContainsFunc(kubelet.Execs(), func(e testenv.Exec) bool {
			return e.Namespace == ns && e.Pod == pod.Name && e.Container == "nb-ovsdb" && len(e.Command) == 5 && slices.Equal(e.Command[:4], wantArgs)
		})
		if !served {
			t.Errorf("the kubelet served %+v, not %v in container nb-ovsdb of %s", kubelet.Execs(), wantArgs, pod.Name)
		}
	})

	t.Run("found with no configuration", func(t *testing.T) {
		node := ns + "-auto"
		addNode(ctx, t, k, node, kubelet)
		createPod(ctx, t, k, clusterkindtest.Pod(ds, node), upstreamRunning)
		// The agent namespace holds no agent DaemonSet: For finds upstream's.
		got, err := livezone.For(f, "").Dump(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		requireDumpOfNB(t, got, nbtest.Dump(t, nb, node))
	})

	t.Run("ovnk's agent comes first", func(t *testing.T) {
		node := ns + "-both"
		addNode(ctx, t, k, node, kubelet)
		createPod(ctx, t, k, clusterkindtest.Pod(ds, node), upstreamRunning)
		agentNS := k.Namespace(t)
		objs, err := manifests.Agent(manifests.AgentOptions{Namespace: agentNS})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if agent, ok := o.(*appsv1.DaemonSet); ok {
				createDaemonSet(ctx, t, k, agent)
			}
		}
		pod := addAgentPod(ctx, t, k, agentNS, node, t.TempDir(), running, ready)
		// The stand-in kubelet's image has ovsdb-client but no ovnk-agent: the error
		// shows which pod For chose.
		_, err = livezone.For(factory(k, agentNS), "").Dump(ctx, node)
		requireOneLine(t, err, "ovnk-agent dump in pod "+agentNS+"/"+pod.Name+": ")
	})

	t.Run("OpenShift's layout", func(t *testing.T) {
		node := ns + "-openshift"
		addNode(ctx, t, k, node, kubelet)
		openshift := clusterkindtest.OpenShift(ns, nodeRoot)
		createPod(ctx, t, k, clusterkindtest.Pod(openshift, node), upstreamRunning)
		got, err := src.Dump(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		requireDumpOfNB(t, got, nbtest.Dump(t, nb, node))
		wantSocket := "unix:" + filepath.Join(nodeRoot, "run/ovn", manifests.NBSocketName)
		if !slices.ContainsFunc(kubelet.Execs(), func(e testenv.Exec) bool { return e.Container == "nbdb" && slices.Contains(e.Command, wantSocket) }) {
			t.Errorf("no exec in container nbdb reading %s: %+v", wantSocket, kubelet.Execs())
		}
	})

	t.Run("a pod found by its name", func(t *testing.T) {
		node := ns + "-unlabelled"
		addNode(ctx, t, k, node, kubelet)
		pod := clusterkindtest.Pod(ds, node)
		pod.Labels = nil
		createPod(ctx, t, k, pod, upstreamRunning)
		got, err := src.Dump(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		requireDumpOfNB(t, got, nbtest.Dump(t, nb, node))
	})

	t.Run("no pod on the node", func(t *testing.T) {
		node := ns + "-bare"
		addNode(ctx, t, k, node, kubelet)
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "no ovnkube-node pod on node "+node+" in namespace "+ns+": is OVN-Kubernetes scheduled there? see kubectl -n "+ns+" get daemonset ovnkube-node")
	})

	t.Run("pod pending", func(t *testing.T) {
		node := ns + "-pending"
		addNode(ctx, t, k, node, kubelet)
		pod := createPod(ctx, t, k, clusterkindtest.Pod(ds, node), func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{
				Name: "nb-ovsdb", Image: clusterkindtest.Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}},
			}}
		})
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "pod "+ns+"/"+pod.Name+" on node "+node+" is Pending, not Running (container nb-ovsdb: ImagePullBackOff: Back-off pulling image): see kubectl -n "+ns+" describe pod "+pod.Name)
	})

	t.Run("NB container crashing", func(t *testing.T) {
		node := ns + "-crashing"
		addNode(ctx, t, k, node, kubelet)
		pod := createPod(ctx, t, k, clusterkindtest.Pod(ds, node), func(p *corev1.Pod) {
			clusterkindtest.Running(p, false)
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"}}
		})
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "container nb-ovsdb of pod "+ns+"/"+pod.Name+" on node "+node+" is not running (CrashLoopBackOff: back-off 5m0s restarting failed container): see kubectl -n "+ns+" logs "+pod.Name+" -c nb-ovsdb")
	})

	t.Run("central NB", func(t *testing.T) {
		node := ns + "-central"
		addNode(ctx, t, k, node, kubelet)
		pod := createPod(ctx, t, k, clusterkindtest.Pod(clusterkindtest.Centralized(ns), node), upstreamRunning)
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "pod "+ns+"/"+pod.Name+" on node "+node+" has no container serving an NB (containers: ovnkube-node, ovn-controller): this OVN-Kubernetes is not in interconnect mode")
	})

	t.Run("no NB socket", func(t *testing.T) {
		node := ns + "-no-socket"
		addNode(ctx, t, k, node, kubelet)
		empty := nodeRootWith(t, nil)
		pod := createPod(ctx, t, k, clusterkindtest.Pod(clusterkindtest.Upstream(ns, empty), node), upstreamRunning)
		_, err := src.Dump(ctx, node)
		socket := filepath.Join(empty, "var/run/ovn", manifests.NBSocketName)
		requireOneLine(t, err, "ovsdb-client query unix:"+socket+" in container nb-ovsdb in pod "+ns+"/"+pod.Name+": command terminated with exit code 1: ")
		if !strings.Contains(err.Error(), "No such file or directory") {
			t.Errorf("ovsdb-client's reason is missing: %v", err)
		}
	})

	t.Run("no ovsdb-client in the image", func(t *testing.T) {
		bare := testenv.StartKubelet(t, t.TempDir())
		node := ns + "-no-client"
		addNode(ctx, t, k, node, bare)
		pod := createPod(ctx, t, k, clusterkindtest.Pod(ds, node), upstreamRunning)
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "container nb-ovsdb of pod "+ns+"/"+pod.Name+" has no ovsdb-client: ")
		if !strings.HasSuffix(err.Error(), "read the zone with --nb ENDPOINT") {
			t.Errorf("the error does not say what to do: %v", err)
		}
	})

	t.Run("exec not allowed", func(t *testing.T) {
		node := ns + "-no-exec"
		addNode(ctx, t, k, node, kubelet)
		pod := createPod(ctx, t, k, clusterkindtest.Pod(ds, node), upstreamRunning)
		user := "viewer-" + ns
		allowReadingPods(ctx, t, k, ns, user)
		viewer := factory(k, ns)
		*viewer.Kube.Impersonate = user
		_, err := (&livezone.UpstreamSource{Factory: viewer, Cluster: cluster}).Dump(ctx, node)
		requireOneLine(t, err, "reading the NB runs ovsdb-client in container nb-ovsdb of pod "+ns+"/"+pod.Name+" through pods/exec, which is not allowed: ")
		if !strings.HasSuffix(err.Error(), "ask for create on pods/exec in namespace "+ns+", or read the zone with --nb ENDPOINT") {
			t.Errorf("the error does not say what to ask for: %v", err)
		}
	})
}

// requireDumpOfNB requires the dump read through a pod to be the one a libovsdb client
// takes of the NB, and the zone not to be empty.
func requireDumpOfNB(t *testing.T, got, want *ovn.Dump) {
	t.Helper()
	if len(want.Tables["Logical_Router"]) == 0 || len(want.Tables["Logical_Switch_Port"]) == 0 {
		t.Fatalf("the zone is empty: %v", want.Tables)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the dump read through the pod differs from the NB's:\n got %v\nwant %v", got, want)
	}
}

// nodeRootWith makes a directory standing for a node's root and links, in each of its
// directories named by links, upstream's NB socket name to the socket given.
func nodeRootWith(t *testing.T, links map[string]string) string {
	t.Helper()
	// Short, for unix socket paths of at most 107 bytes.
	dir, err := os.MkdirTemp("", "node")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for sub, socket := range links {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(socket, filepath.Join(dir, sub, manifests.NBSocketName)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func createDaemonSet(ctx context.Context, t *testing.T, k *testenv.Kube, ds *appsv1.DaemonSet) {
	t.Helper()
	if _, err := k.Client.AppsV1().DaemonSets(ds.Namespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Detect looks across the cluster: a DaemonSet left in a Terminating namespace
	// would be found by the tests that follow.
	t.Cleanup(func() {
		if err := k.Client.AppsV1().DaemonSets(ds.Namespace).Delete(context.Background(), ds.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete DaemonSet %s/%s: %v", ds.Namespace, ds.Name, err)
		}
	})
}

// createPod creates pod with its status set by status, through the status subresource
// as its kubelet would.
func createPod(ctx context.Context, t *testing.T, k *testenv.Kube, pod *corev1.Pod, status func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	pod, err := k.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status(pod)
	if pod, err = k.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}

func upstreamRunning(p *corev1.Pod) { clusterkindtest.Running(p, true) }

// allowReadingPods lets user get and list pods in namespace ns, but not exec into them.
func allowReadingPods(ctx context.Context, t *testing.T, k *testenv.Kube, ns, user string) {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := k.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server's authorizer learns of the binding from its own watch.
	cs, err := kubernetes.NewForConfig(k.ConfigAs(user))
	if err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 30*time.Second, "the role binding in force", func(ctx context.Context) error {
		_, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ovsdbClientKubelet starts a stand-in kubelet whose containers run the programs of an
// image holding the real ovsdb-client of root, as upstream's NB containers do.
func ovsdbClientKubelet(t *testing.T, root ovnroot.Root) *testenv.Kubelet {
	t.Helper()
	client, err := root.Program("ovsdb-client")
	if err != nil {
		t.Fatal(err)
	}
	image := t.TempDir()
	if err := os.Symlink(client, filepath.Join(image, "ovsdb-client")); err != nil {
		t.Fatal(err)
	}
	return testenv.StartKubelet(t, image)
}
