package livezone_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestExecSource reads zones the way the plugin does in a real cluster: pods/exec on the
// real API server, proxied to a stand-in kubelet that runs the real ovnk-agent binary
// against a real NB.
func TestExecSource(t *testing.T) {
	testenv.NeedBinaries(t, "go")
	testenv.NeedOVN(t)
	k := testenv.SharedKube(t)
	ns := k.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	image := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(image, "ovnk-agent"), "github.com/ovnk/ovnk/cmd/ovnk-agent")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build ovnk-agent: %v\n%s", err, out)
	}
	kubelet := testenv.StartKubelet(t, image)
	nb := zone(ctx, t, "node1")
	// The DaemonSet mounts the NB socket's directory and names the socket
	// ovnnb_db.sock; the test NB's socket is nb.sock, in a directory of its own.
	if err := os.Symlink(nb.Socket, filepath.Join(nb.Dir, manifests.NBSocketName)); err != nil {
		t.Fatal(err)
	}
	f := factory(k, ns)
	src := &livezone.ExecSource{Factory: f}

	t.Run("dump equals the NB", func(t *testing.T) {
		node := ns + "-ready"
		addNode(ctx, t, k, node, kubelet)
		pod := addAgentPod(ctx, t, k, ns, node, nb.Dir, running, ready)
		got, err := src.Dump(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		want := directDump(ctx, t, nb, node)
		if len(want.Tables["Logical_Router"]) == 0 || len(want.Tables["Logical_Switch_Port"]) == 0 {
			t.Fatalf("the zone is empty: %v", want.Tables)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the dump through exec differs from the NB's:\n got %v\nwant %v", got, want)
		}
		wantExec := testenv.Exec{
			Namespace: ns, Pod: pod.Name, Container: pod.Spec.Containers[0].Name,
			Command: []string{"ovnk-agent", "dump", "--nb-address", "unix:" + filepath.Join(nb.Dir, manifests.NBSocketName), "--node-name", node},
		}
		if execs := kubelet.Execs(); !slices.ContainsFunc(execs, func(e testenv.Exec) bool { return reflect.DeepEqual(e, wantExec) }) {
			t.Errorf("the kubelet served %+v, not %+v", execs, wantExec)
		}
	})

	t.Run("failing command", func(t *testing.T) {
		node := ns + "-no-nb"
		addNode(ctx, t, k, node, kubelet)
		noNB := t.TempDir()
		pod := addAgentPod(ctx, t, k, ns, node, noNB, running, ready)
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "ovnk-agent dump in pod "+ns+"/"+pod.Name+": command terminated with exit code 1: error: connect to NB unix:"+
			filepath.Join(noNB, manifests.NBSocketName)+": ")
		if !strings.Contains(err.Error(), "no such file or directory") {
			t.Errorf("the agent's reason is missing: %v", err)
		}
	})

	t.Run("unknown node", func(t *testing.T) {
		addNode(ctx, t, k, ns+"-known", kubelet)
		node := ns + "-nowhere"
		_, err := src.Dump(ctx, node)
		nodes, lerr := k.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if lerr != nil {
			t.Fatal(lerr)
		}
		var names []string
		for _, n := range nodes.Items {
			names = append(names, n.Name)
		}
		slices.Sort(names)
		requireOneLine(t, err, "no node "+node+"; nodes are "+strings.Join(names, ", "))
	})

	t.Run("no agent on the node", func(t *testing.T) {
		node := ns + "-bare"
		addNode(ctx, t, k, node, kubelet)
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "no ovnk agent pod on node "+node+" in namespace "+ns+": is the agent installed (kubectl ovnk install) and scheduled there?")
	})

	t.Run("agent pending", func(t *testing.T) {
		node := ns + "-pending"
		addNode(ctx, t, k, node, kubelet)
		pod := addAgentPod(ctx, t, k, ns, node, nb.Dir, pulling)
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "ovnk agent pod "+ns+"/"+pod.Name+" on node "+node+" is Pending, not Running (container agent: ImagePullBackOff: Back-off pulling image): see kubectl -n "+ns+" describe pod "+pod.Name)
	})

	t.Run("agent not ready", func(t *testing.T) {
		node := ns + "-unready"
		addNode(ctx, t, k, node, kubelet)
		pod := addAgentPod(ctx, t, k, ns, node, nb.Dir, running, unready)
		_, err := src.Dump(ctx, node)
		requireOneLine(t, err, "ovnk agent pod "+ns+"/"+pod.Name+" on node "+node+" is running but not ready (ContainersNotReady: containers with unready status: [agent]): see kubectl -n "+ns+" logs "+pod.Name)
	})
}

// requireOneLine requires err to be one line starting with want.
func requireOneLine(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("no error; want %q", want)
	case strings.Contains(err.Error(), "\n"):
		t.Errorf("the error is more than one line:\n%v", err)
	case !strings.HasPrefix(err.Error(), want):
		t.Errorf("error\n got %q\nwant %q", err, want)
	}
}

// zone starts an NB holding the compiled zone of node in topologytest.Layer3.
func zone(ctx context.Context, t *testing.T, node string) *testenv.NB {
	t.Helper()
	nb := testenv.StartNB(t)
	res, err := topology.Compile(topologytest.Layer3(), node)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := (&ovn.Reconciler{Client: c}).Reconcile(ctx, res.Rows, nil); err != nil {
		t.Fatal(err)
	}
	return nb
}

// directDump reads the NB with a fresh connection, which starts from the whole database
// and so holds every committed row, and sends the dump through JSON as exec does.
func directDump(ctx context.Context, t *testing.T, nb *testenv.NB, node string) *ovn.Dump {
	t.Helper()
	data, err := json.Marshal(nbtest.Dump(t, nb, node))
	if err != nil {
		t.Fatal(err)
	}
	var back ovn.Dump
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

func factory(k *testenv.Kube, agentNamespace string) *cmdutil.Factory {
	flags := genericclioptions.NewConfigFlags(true)
	*flags.KubeConfig = k.Kubeconfig
	return &cmdutil.Factory{Kube: flags, Settings: &cmdutil.Settings{AgentNamespace: agentNamespace}}
}

// addNode creates a Node served by the stand-in kubelet.
func addNode(ctx context.Context, t *testing.T, k *testenv.Kube, name string, kubelet *testenv.Kubelet) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: kubelet.NodeStatus()}
	if _, err := k.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete node %s: %v", name, err)
		}
	})
}

// A podState sets part of an agent pod's status, as its kubelet would report it.
type podState func(*corev1.PodStatus)

func running(s *corev1.PodStatus) {
	s.Phase = corev1.PodRunning
	s.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "agent", Image: "ghcr.io/ovnk/ovnk-agent:latest",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
	}}
}

func ready(s *corev1.PodStatus) {
	s.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	s.ContainerStatuses[0].Ready = true
}

// unready is a running agent failing its readiness probe (not connected to the NB).
func unready(s *corev1.PodStatus) {
	s.Conditions = []corev1.PodCondition{{
		Type: corev1.PodReady, Status: corev1.ConditionFalse,
		Reason: "ContainersNotReady", Message: "containers with unready status: [agent]",
	}}
}

func pulling(s *corev1.PodStatus) {
	s.Phase = corev1.PodPending
	s.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "agent", Image: "ghcr.io/ovnk/ovnk-agent:latest",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}},
	}}
}

// addAgentPod creates the pod the agent's DaemonSet would create on node, its NB socket
// directory nbSocketDir, with the status states set through the status subresource.
func addAgentPod(ctx context.Context, t *testing.T, k *testenv.Kube, ns, node, nbSocketDir string, states ...podState) *corev1.Pod {
	t.Helper()
	objs, err := manifests.Agent(manifests.AgentOptions{Namespace: ns, NBSocketDir: nbSocketDir})
	if err != nil {
		t.Fatal(err)
	}
	var ds *appsv1.DaemonSet
	for _, o := range objs {
		if d, ok := o.(*appsv1.DaemonSet); ok {
			ds = d
		}
	}
	if ds == nil {
		t.Fatal("the agent manifests hold no DaemonSet")
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: ds.Name + "-",
			Namespace:    ns,
			Labels:       ds.Spec.Template.Labels,
			Annotations:  ds.Spec.Template.Annotations,
		},
		Spec: ds.Spec.Template.Spec,
	}
	pod.Spec.NodeName = node
	pod, err = k.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range states {
		set(&pod.Status)
	}
	if pod, err = k.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}
