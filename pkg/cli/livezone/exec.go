package livezone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ovn"
)

// DefaultExecTimeout bounds finding a node's agent pod and reading its dump when
// ExecSource.Timeout is 0. The dump itself gives up after 30s (ovnk-agent dump).
const DefaultExecTimeout = time.Minute

const (
	// agentBinary is the agent's command, in the DaemonSet and in its image.
	agentBinary = "ovnk-agent"
	// maxDumpBytes caps the dump read into memory. A large zone's dump is several
	// megabytes; the cap only stops a runaway output from exhausting the plugin.
	maxDumpBytes = 256 << 20
	// stderrTailBytes is how much of the end of the command's standard error is kept:
	// enough for the error the agent prints last.
	stderrTailBytes = 4 << 10
	// stderrTailLines is how many of its last lines an error message quotes.
	stderrTailLines = 3
)

// ExecSource reads a zone by running `ovnk-agent dump` in the node's agent pod, through
// pods/exec, as `kubectl exec` would.
type ExecSource struct {
	Factory *cmdutil.Factory
	// Timeout bounds finding the pod and running the dump; 0 means DefaultExecTimeout.
	Timeout time.Duration
}

// Dump finds the agent pod on node, runs the dump in its agent container against the NB
// address the container runs with, and decodes the JSON it prints.
func (s *ExecSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultExecTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := s.Factory.Connect()
	if err != nil {
		return nil, err
	}
	pod, err := agentPod(ctx, conn.Clientset, s.Factory.Settings.AgentNamespace, node)
	if err != nil {
		return nil, conn.Explain(err)
	}
	container, err := agentContainer(pod)
	if err != nil {
		return nil, err
	}
	argv := []string{agentCommand(container), "dump", "--nb-address", nbAddress(container), "--node-name", node}
	stdout := cappedBuffer{max: maxDumpBytes}
	stderr := tailBuffer{max: stderrTailBytes}
	if err := execIn(ctx, conn.Config, conn.Clientset, pod, container.Name, argv, &stdout, &stderr); err != nil {
		return nil, execError(pod, strings.Join(argv[:2], " "), err, stderr.lastLines(stderrTailLines))
	}
	if stdout.overflow {
		return nil, fmt.Errorf("the dump from pod %s/%s is larger than %d MiB: read the zone straight from its NB with --nb", pod.Namespace, pod.Name, maxDumpBytes>>20)
	}
	var d ovn.Dump
	if err := json.Unmarshal(stdout.buf.Bytes(), &d); err != nil {
		return nil, fmt.Errorf("decode the dump of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return &d, nil
}

// agentPod returns the agent pod running on node, or an error that says why there is
// none to exec into: no such node, no agent there, or an agent not running and ready.
func agentPod(ctx context.Context, cs kubernetes.Interface, namespace, node string) (*corev1.Pod, error) {
	list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{manifests.LabelName: manifests.AgentName}).String(),
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list the ovnk agent pods in namespace %s: %w", namespace, err)
	}
	if len(list.Items) == 0 {
		if err := nodeExists(ctx, cs, node); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no ovnk agent pod on node %s in namespace %s: is the agent installed (kubectl ovnk install) and scheduled there?", node, namespace)
	}
	pod := pickPod(list.Items)
	if pod.Status.Phase != corev1.PodRunning {
		return nil, fmt.Errorf("ovnk agent pod %s/%s on node %s is %s, not Running%s: see kubectl -n %s describe pod %s",
			pod.Namespace, pod.Name, node, phase(pod), why(pod), pod.Namespace, pod.Name)
	}
	if !podReady(pod) {
		return nil, fmt.Errorf("ovnk agent pod %s/%s on node %s is running but not ready%s: see kubectl -n %s logs %s",
			pod.Namespace, pod.Name, node, why(pod), pod.Namespace, pod.Name)
	}
	return pod, nil
}

// nodeExists returns nil if the node exists, else an error listing the nodes there are.
func nodeExists(ctx context.Context, cs kubernetes.Interface, node string) error {
	_, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get node %s: %w", node, err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("no node %s (and listing the nodes failed: %w)", node, err)
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("no node %s; the cluster has no nodes", node)
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	return fmt.Errorf("no node %s; nodes are %s", node, strings.Join(names, ", "))
}

// pickPod chooses among the agent pods of one node, of which there are several only
// briefly (a rollout, a pod being deleted): a ready one, else one not being deleted.
func pickPod(pods []corev1.Pod) *corev1.Pod {
	best := &pods[0]
	score := func(p *corev1.Pod) int {
		s := 0
		if p.DeletionTimestamp == nil {
			s++
		}
		if p.Status.Phase == corev1.PodRunning && podReady(p) {
			s += 2
		}
		return s
	}
	for i := range pods {
		if score(&pods[i]) > score(best) {
			best = &pods[i]
		}
	}
	return best
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func phase(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

// why returns what the pod's status says is wrong, as " (…)", or "": a container
// waiting (ImagePullBackOff, CrashLoopBackOff) or terminated, else the pod's reason, else
// its Ready condition's.
func why(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
			return detail(cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message)
		case cs.State.Terminated != nil:
			return detail(cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.Message)
		}
	}
	if p.Status.Reason != "" {
		return detail("", p.Status.Reason, p.Status.Message)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && (c.Reason != "" || c.Message != "") {
			return detail("", c.Reason, c.Message)
		}
	}
	return ""
}

func detail(container, reason, message string) string {
	parts := make([]string, 0, 3)
	if container != "" {
		parts = append(parts, "container "+container)
	}
	for _, s := range []string{reason, oneLine(message)} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

// agentContainer returns the pod's container that runs the agent: the one whose
// command is ovnk-agent, or the pod's only container.
func agentContainer(p *corev1.Pod) (*corev1.Container, error) {
	for i, c := range p.Spec.Containers {
		if len(c.Command) > 0 && path.Base(c.Command[0]) == agentBinary {
			return &p.Spec.Containers[i], nil
		}
	}
	if len(p.Spec.Containers) == 1 {
		return &p.Spec.Containers[0], nil
	}
	names := make([]string, 0, len(p.Spec.Containers))
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	return nil, fmt.Errorf("pod %s/%s has no container running %s (containers: %s): is it an ovnk agent pod?", p.Namespace, p.Name, agentBinary, strings.Join(names, ", "))
}

// agentCommand is the agent binary as the container names it (a path, if the image
// wants one), else the name the image puts on PATH.
func agentCommand(c *corev1.Container) string {
	if len(c.Command) > 0 && path.Base(c.Command[0]) == agentBinary {
		return c.Command[0]
	}
	return agentBinary
}

// nbAddress returns the --nb-address the agent container runs with, so the dump reads
// the NB the agent programs; without one the agent uses its default, and so does this.
func nbAddress(c *corev1.Container) string {
	argv := append(slices.Clone(c.Command), c.Args...)
	for i, a := range argv {
		if v, ok := strings.CutPrefix(a, "--nb-address="); ok {
			return v
		}
		if a == "--nb-address" && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return ovn.DefaultNBEndpoint
}

// execIn runs argv in the pod's container and copies its output to stdout and stderr.
// Like kubectl exec it speaks WebSocket, and falls back to SPDY when the API server (or
// a proxy on the way) cannot upgrade to it.
func execIn(ctx context.Context, rc *rest.Config, cs kubernetes.Interface, pod *corev1.Pod, container string, argv []string, stdout, stderr io.Writer) error {
	req := cs.CoreV1().RESTClient().Post().
		Namespace(pod.Namespace).Resource("pods").Name(pod.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: argv, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(rc, "POST", req.URL())
	if err != nil {
		return fmt.Errorf("prepare an SPDY exec: %w", err)
	}
	// WebSocket upgrades are GET requests (RFC 6455).
	ws, err := remotecommand.NewWebSocketExecutor(rc, "GET", req.URL().String())
	if err != nil {
		return fmt.Errorf("prepare a WebSocket exec: %w", err)
	}
	executor, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return fmt.Errorf("prepare exec: %w", err)
	}
	return executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
}

// execError says which command failed in which pod, and quotes the end of its standard
// error, where the agent prints why.
func execError(pod *corev1.Pod, what string, err error, stderr string) error {
	if stderr == "" {
		return fmt.Errorf("%s in pod %s/%s: %w", what, pod.Namespace, pod.Name, err)
	}
	return fmt.Errorf("%s in pod %s/%s: %w: %s", what, pod.Namespace, pod.Name, err, stderr)
}

// cappedBuffer keeps at most max bytes and notes an overflow, dropping what it held. It
// never fails a write: a failing writer would stall the exec stream instead of ending it.
type cappedBuffer struct {
	max      int
	buf      bytes.Buffer
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.overflow || b.buf.Len()+len(p) > b.max {
		b.overflow = true
		b.buf.Reset()
		return len(p), nil
	}
	return b.buf.Write(p)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max  int
	data []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.data = append(b.data, p...)
	if extra := len(b.data) - b.max; extra > 0 {
		b.data = append(b.data[:0], b.data[extra:]...)
	}
	return len(p), nil
}

// lastLines returns up to n last non-empty lines, joined into one line.
func (b *tailBuffer) lastLines(n int) string {
	var lines []string
	for _, l := range strings.Split(string(b.data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
