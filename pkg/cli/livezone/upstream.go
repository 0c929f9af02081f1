package livezone

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/ovn"
)

const (
	// ovsdbClient is OVS's database client, which OVN's images carry beside the servers.
	ovsdbClient = "ovsdb-client"
	// ovsdbClientTimeout is how many seconds ovsdb-client may take to connect and read
	// before it gives up by itself, as `ovnk-agent dump` does after 30s.
	ovsdbClientTimeout = "30"
)

// UpstreamSource reads a zone served by upstream OVN-Kubernetes in interconnect mode: it
// runs `ovsdb-client query` — a transaction that can only read — in the container of the
// node's ovnkube-node pod that serves the node's NB, through pods/exec as `kubectl exec`
// would, and decodes what it prints into the Dump the agent's would be.
type UpstreamSource struct {
	Factory *cmdutil.Factory
	// Cluster is the upstream deployment Detect found: the DaemonSet's namespace, name
	// and pod selector.
	Cluster clusterkind.Cluster
	// Timeout bounds finding the pod and reading the NB; 0 means DefaultExecTimeout.
	Timeout time.Duration
}

// Dump finds node's ovnkube-node pod and its NB container, and reads the NB through the
// socket the container serves it on.
func (s *UpstreamSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Timeout, DefaultExecTimeout))
	defer cancel()
	conn, err := s.Factory.Connect()
	if err != nil {
		return nil, err
	}
	pod, err := upstreamPod(ctx, conn.Clientset, s.Cluster, node)
	if err != nil {
		return nil, conn.Explain(err)
	}
	container, err := nbContainer(pod, node)
	if err != nil {
		return nil, err
	}
	result, err := queryNB(ctx, conn, pod, container)
	if err != nil {
		return nil, err
	}
	d, err := ovn.DumpFromQuery(node, result)
	if err != nil {
		return nil, fmt.Errorf("read node %s's zone from container %s of pod %s/%s: %w", node, container.Name, pod.Namespace, pod.Name, err)
	}
	return d, nil
}

// queryNB runs ovn.DumpQuery with ovsdb-client in the pod's container, on the unix
// socket the container serves the NB on, and returns the result it printed.
func queryNB(ctx context.Context, conn *cmdutil.Connection, pod *corev1.Pod, container *corev1.Container) ([]byte, error) {
	query, err := ovn.DumpQuery()
	if err != nil {
		return nil, err
	}
	socket := clusterkind.NBSocket(container)
	argv := []string{ovsdbClient, "--timeout=" + ovsdbClientTimeout, "query", "unix:" + socket, string(query)}
	stdout := cappedBuffer{max: maxDumpBytes}
	stderr := tailBuffer{max: stderrTailBytes}
	if err := execIn(ctx, conn.Config, conn.Clientset, pod, container.Name, argv, &stdout, &stderr); err != nil {
		return nil, upstreamExecError(ctx, conn.Clientset, pod, container.Name, socket, err, stderr.lastLines(stderrTailLines))
	}
	if stdout.overflow {
		return nil, fmt.Errorf("the NB that container %s of pod %s/%s serves is larger than %d MiB: read the zone straight from it with --nb",
			container.Name, pod.Namespace, pod.Name, maxDumpBytes>>20)
	}
	return stdout.buf.Bytes(), nil
}

// upstreamPod returns the DaemonSet's pod on node, running: the pods its selector
// selects, else those named after it (a pod whose labels were changed by hand still
// serves its node's NB).
func upstreamPod(ctx context.Context, cs kubernetes.Interface, cl clusterkind.Cluster, node string) (*corev1.Pod, error) {
	onNode := fields.OneTermEqualSelector("spec.nodeName", node).String()
	what := fmt.Sprintf("the %s pods in namespace %s", cl.DaemonSet, cl.Namespace)
	opts := metav1.ListOptions{FieldSelector: onNode}
	if cl.PodSelector != nil {
		selector, err := metav1.LabelSelectorAsSelector(cl.PodSelector)
		if err != nil {
			return nil, fmt.Errorf("the selector of DaemonSet %s/%s: %w", cl.Namespace, cl.DaemonSet, err)
		}
		opts.LabelSelector = selector.String()
	}
	list, err := cs.CoreV1().Pods(cl.Namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	pods := list.Items
	if len(pods) == 0 && opts.LabelSelector != "" {
		all, err := cs.CoreV1().Pods(cl.Namespace).List(ctx, metav1.ListOptions{FieldSelector: onNode})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		for _, p := range all.Items {
			if strings.HasPrefix(p.Name, cl.DaemonSet+"-") {
				pods = append(pods, p)
			}
		}
	}
	if len(pods) == 0 {
		if err := nodeExists(ctx, cs, node); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no %s pod on node %s in namespace %s: is OVN-Kubernetes scheduled there? see kubectl -n %s get daemonset %s",
			cl.DaemonSet, node, cl.Namespace, cl.Namespace, cl.DaemonSet)
	}
	pod := pickPod(pods)
	if pod.Status.Phase != corev1.PodRunning {
		return nil, fmt.Errorf("pod %s/%s on node %s is %s, not Running%s: see kubectl -n %s describe pod %s",
			pod.Namespace, pod.Name, node, phase(pod), why(pod), pod.Namespace, pod.Name)
	}
	return pod, nil
}

// containerNames lists the pod's containers, for an error saying none serves the NB.
func containerNames(pod *corev1.Pod) string {
	names := make([]string, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// nbContainer returns the pod's container serving the NB, if it is running. It need not
// be ready: a readiness probe that has not run yet says nothing against reading.
func nbContainer(pod *corev1.Pod, node string) (*corev1.Container, error) {
	c := clusterkind.NBContainer(&pod.Spec)
	if c == nil {
		return nil, fmt.Errorf("pod %s/%s on node %s has no container serving an NB (containers: %s): this OVN-Kubernetes is not in interconnect mode, so its one NB is elsewhere (ovnkube-db); read it with --nb ENDPOINT",
			pod.Namespace, pod.Name, node, containerNames(pod))
	}
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name != c.Name {
			continue
		}
		if st.State.Running != nil {
			return c, nil
		}
		reason := ""
		switch {
		case st.State.Waiting != nil:
			reason = detail("", st.State.Waiting.Reason, st.State.Waiting.Message)
		case st.State.Terminated != nil:
			reason = detail("", st.State.Terminated.Reason, st.State.Terminated.Message)
		}
		return nil, fmt.Errorf("container %s of pod %s/%s on node %s is not running%s: see kubectl -n %s logs %s -c %s",
			c.Name, pod.Namespace, pod.Name, node, reason, pod.Namespace, pod.Name, c.Name)
	}
	return nil, fmt.Errorf("container %s of pod %s/%s on node %s has not started: see kubectl -n %s describe pod %s",
		c.Name, pod.Namespace, pod.Name, node, pod.Namespace, pod.Name)
}

// upstreamExecError says why ovsdb-client could not read the NB, and what to do: the
// user may not exec, the image has no ovsdb-client, or the command itself failed (its
// standard error says why, such as a socket that is not there).
func upstreamExecError(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, container, socket string, err error, stderr string) error {
	where := fmt.Sprintf("container %s of pod %s/%s", container, pod.Namespace, pod.Name)
	switch {
	case execDenied(ctx, cs, pod):
		return fmt.Errorf("reading the NB runs %s in %s through pods/exec, which is not allowed: %w: ask for create on pods/exec in namespace %s, or read the zone with --nb ENDPOINT",
			ovsdbClient, where, err, pod.Namespace)
	case strings.Contains(err.Error(), "executable file not found"):
		return fmt.Errorf("%s has no %s: %w: read the zone with --nb ENDPOINT", where, ovsdbClient, err)
	}
	return execError(pod, fmt.Sprintf("%s query unix:%s in container %s", ovsdbClient, socket, container), err, stderr)
}

// execDenied asks the API server whether the user may not exec into pod. A refused exec
// comes back as the text of a failed upgrade, without its status, so the answer is
// asked for rather than read from the error; an API server that cannot say is taken as
// not denying it.
func execDenied(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) bool {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: pod.Namespace, Verb: "create", Resource: "pods", Subresource: "exec", Name: pod.Name,
		},
	}}
	answer, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	return err == nil && !answer.Status.Allowed
}
