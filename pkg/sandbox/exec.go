package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Target says where Command runs a program: in a pod, on a node, in the outside world
// or in the underlay. Exactly one field is set.
type Target struct {
	// Pod is "namespace/name" of a pod the sandbox has wired.
	Pod string
	// Node is a node's name.
	Node string
	// Outside selects the outside world, where the who-am-i server runs.
	Outside bool
	// Underlay selects the underlay, which bridges the nodes and routes to the outside.
	Underlay bool
}

func (t Target) String() string {
	switch {
	case t.Pod != "":
		return "pod " + t.Pod
	case t.Node != "":
		return "node " + t.Node
	case t.Outside:
		return "the outside world"
	default:
		return "the underlay"
	}
}

// Command returns the command that runs argv inside target's network namespace (the
// program sees the host's file systems and processes, as in a pod with host mounts).
// On a node the OVS and OVN tools of the OVN root are first on PATH and find the node's
// servers by themselves: `ovs-vsctl show`, `ovn-nbctl show`, `ovn-sbctl show`,
// `ovs-appctl -t ovs-vswitchd …` need no options. A pod with no running container yet
// is an error saying so.
func (s *Sandbox) Command(ctx context.Context, t Target, argv ...string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command to run")
	}
	set := 0
	for _, b := range []bool{t.Pod != "", t.Node != "", t.Outside, t.Underlay} {
		if b {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("name one place to run %s in: a pod, a node, the outside world or the underlay", argv[0])
	}
	var netns string
	var env []string
	switch {
	case t.Pod != "":
		var err error
		if netns, err = s.PodNetns(ctx, t.Pod); err != nil {
			return nil, err
		}
	case t.Node != "":
		i := s.nodeIndex(t.Node)
		if i < 0 {
			return nil, fmt.Errorf("no node %s in the sandbox: its nodes are %s", t.Node, strings.Join(NodeNames(), ", "))
		}
		n := s.Nodes[i]
		netns = n.Netns
		env = s.nodeEnv(n)
	case t.Outside:
		netns = s.Outside
	default:
		netns = s.Underlay
	}
	if !netnsExists(netns) {
		return nil, fmt.Errorf("%s has no network namespace %s: is the sandbox in %s running? (`ovnk-sandbox status`)", t, netns, s.Dir)
	}
	cmd := exec.CommandContext(ctx, "nsenter", nsenterArgv(netns, argv...)[1:]...)
	cmd.Env = mergeEnv(os.Environ(), env)
	return cmd, nil
}

// mergeEnv returns base with the variables of extra set, each key once: the command's
// environment may also go to execve directly, where a duplicate key's first value
// would win.
func mergeEnv(base, extra []string) []string {
	out := make([]string, 0, len(base)+len(extra))
	set := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// nodeEnv is the environment of programs run on node n: OVS's and OVN's tools find
// the node's servers, and the OVN root's tools come first on PATH.
func (s *Sandbox) nodeEnv(n Node) []string {
	return append(ovsEnv(s.nodeDir(n)),
		"OVN_NB_DB="+n.NBEndpoint, "OVN_SB_DB="+n.SBEndpoint,
		"PATH="+filepath.Join(s.OVNRoot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func (s *Sandbox) nodeIndex(name string) int {
	for i, n := range s.Nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}

// PodNetns returns the network namespace of the pod ref ("namespace/name") as a path:
// that of one of its running containers' processes (podPID).
func (s *Sandbox) PodNetns(ctx context.Context, ref string) (string, error) {
	pid, err := s.podPID(ctx, ref)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("/proc/%d/ns/net", pid), nil
}

// podPID returns the process of one of the running containers of the pod ref
// ("namespace/name"), found through the containerd of the pod's node (kubelet names
// the containers in the pod's status).
func (s *Sandbox) podPID(ctx context.Context, ref string) (int, error) {
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return 0, fmt.Errorf("pod %q: name it as NAMESPACE/NAME", ref)
	}
	cfg, err := s.restConfig()
	if err != nil {
		return 0, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, fmt.Errorf("kubernetes client: %w", err)
	}
	pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("no pod %s", ref)
	}
	if err != nil {
		return 0, fmt.Errorf("get pod %s: %w", ref, err)
	}
	i := s.nodeIndex(pod.Spec.NodeName)
	if i < 0 {
		return 0, fmt.Errorf("pod %s is not scheduled to a node of the sandbox yet (phase %s)", ref, pod.Status.Phase)
	}
	var ids []string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			if id, ok := strings.CutPrefix(cs.ContainerID, "containerd://"); ok {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("pod %s on %s has no running container yet (phase %s): `kubectl describe pod -n %s %s` says why", ref, pod.Spec.NodeName, pod.Status.Phase, namespace, name)
	}
	pids, err := s.taskPIDs(ctx, s.Nodes[i])
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if pid, ok := pids[id]; ok {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("pod %s: the containerd of %s runs none of its containers %s", ref, pod.Spec.NodeName, strings.Join(ids, ", "))
}

// ContainerCount is how many containers node n's containerd holds, running or not
// (pods' sandboxes included).
func (s *Sandbox) ContainerCount(ctx context.Context, n Node) (int, error) {
	out, err := s.ctr(ctx, n, "containers", "list", "--quiet")
	return len(strings.Fields(out)), err
}

// taskPIDs maps the running containers of node n's containerd to their processes.
func (s *Sandbox) taskPIDs(ctx context.Context, n Node) (map[string]int, error) {
	out, err := s.ctr(ctx, n, "tasks", "list")
	if err != nil {
		return nil, err
	}
	pids := map[string]int{}
	for _, line := range strings.Split(out, "\n")[1:] { // TASK PID STATUS
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "RUNNING" {
			if pid, err := strconv.Atoi(f[1]); err == nil && pid > 0 {
				pids[f[0]] = pid
			}
		}
	}
	return pids, nil
}
