package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ovnk/ovnk/pkg/images"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/poll"
)

// The agents run as the cluster runs them anywhere: the DaemonSet of pkg/manifests,
// applied by `kubectl ovnk install`, one pod per node in the host's network. What the
// sandbox's nodes need beyond the defaults is in the agent's config file: the API
// server (the agent is the cluster's network, so it cannot reach the API server through
// a Service), the userspace datapath and the default network's subnets.

// agentConfigFile is the agent's config file the sandbox installs, in its directory.
const agentConfigFile = "agent.conf"

// agentConfig is the agent's config file (INI, docs/agent-config.md): the sandbox's
// settings, then those of args (--key=value flags of `ovnk-agent run`, kept by
// Options.AgentArgs), a later key overriding an earlier one.
func agentConfig(args []string) (string, error) {
	keys := []string{"api-server", "datapath-type", "gateway-bridge", "cluster-subnets"}
	values := map[string]string{
		"api-server":      "https://" + nodeAPIServer,
		"datapath-type":   "netdev",
		"gateway-bridge":  GatewayBridge,
		"cluster-subnets": clusterSubnets(),
	}
	for _, a := range args {
		kv, ok := strings.CutPrefix(a, "--")
		k, v, hasValue := strings.Cut(kv, "=")
		if !ok || !hasValue || k == "" || strings.Contains(k, ".") {
			return "", fmt.Errorf("agent argument %q: want --key=value for a key of the [default] section (docs/agent-config.md)", a)
		}
		if _, seen := values[k]; !seen {
			keys = append(keys, k)
		}
		values[k] = v
	}
	var b strings.Builder
	b.WriteString("# Written by ovnk-sandbox and installed with `kubectl ovnk install --config`.\n[default]\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, values[k])
	}
	return b.String(), nil
}

// installAgents applies the agent's manifests with the plugin, as an operator would,
// and waits until the DaemonSet runs a ready agent on every node.
func (s *Sandbox) installAgents(ctx context.Context) error {
	if err := s.install(ctx, appsv1.RollingUpdateDaemonSetStrategyType); err != nil {
		return err
	}
	return s.waitAgents(ctx, nil)
}

// install writes the agent's config file from s.AgentArgs and runs `kubectl ovnk
// install` with it and the update strategy.
func (s *Sandbox) install(ctx context.Context, strategy appsv1.DaemonSetUpdateStrategyType) error {
	config, err := agentConfig(s.AgentArgs)
	if err != nil {
		return err
	}
	path := filepath.Join(s.Dir, agentConfigFile)
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return fmt.Errorf("write the agent's config file: %w", err)
	}
	_, err = run(ctx, nil, s.Plugin, "install", "--kubeconfig", s.Kubeconfig, "--agent-namespace", manifests.DefaultNamespace,
		"--image", images.AgentImage, "--config", path, "--update-strategy", string(strategy))
	if err != nil {
		return fmt.Errorf("install the agent: %w", err)
	}
	return nil
}

// RollOutAgent changes the agent's settings (args, as Options.AgentArgs) and rolls the
// change out to node alone, as docs/upgrade.md has an operator do it: the DaemonSet is
// applied with the OnDelete strategy, so no agent is replaced by itself, and the node's
// agent pod is deleted; the DaemonSet starts the new one there. The other nodes keep
// their agents (with the old settings) until their pods are deleted too. It returns
// once the node runs a ready agent again.
func (s *Sandbox) RollOutAgent(ctx context.Context, node string, args ...string) error {
	client, pod, err := s.agentPod(ctx, node)
	if err != nil {
		return err
	}
	s.AgentArgs = append(s.AgentArgs, args...)
	if err := s.install(ctx, appsv1.OnDeleteDaemonSetStrategyType); err != nil {
		return err
	}
	if err := s.writeFiles(); err != nil { // later RollOutAgents keep these settings
		return err
	}
	if err := client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete agent pod %s: %w", pod.Name, err)
	}
	return s.waitAgents(ctx, map[string]bool{string(pod.UID): true})
}

// agentTimeout bounds the wait for every node's agent to be ready.
const agentTimeout = 3 * time.Minute

// waitAgents waits until every node runs a ready agent pod that is none of old (pods
// being replaced), and every node is Ready; while waiting, the error says which nodes
// lack what.
func (s *Sandbox) waitAgents(ctx context.Context, old map[string]bool) error {
	client, err := s.client()
	if err != nil {
		return err
	}
	return poll.Until(ctx, agentTimeout, "an agent ready on every node", func(ctx context.Context) error {
		pods, err := client.CoreV1().Pods(manifests.DefaultNamespace).List(ctx, metav1.ListOptions{
			LabelSelector: manifests.LabelName + "=" + manifests.AgentName,
		})
		if err != nil {
			return err
		}
		ready := map[string]bool{}
		for _, p := range pods.Items {
			if !old[string(p.UID)] && p.DeletionTimestamp == nil && PodReady(&p) {
				ready[p.Spec.NodeName] = true
			}
		}
		var missing []string
		for _, n := range s.Nodes {
			if !ready[n.Name] {
				missing = append(missing, n.Name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("no ready agent pod on %s", strings.Join(missing, ", "))
		}
		return s.nodesReady(ctx, client)
	})
}

// nodesReady says which nodes are not Ready: kubelet reports a node's network ready
// once its agent has installed the CNI configuration.
func (s *Sandbox) nodesReady(ctx context.Context, client kubernetes.Interface) error {
	var problems []string
	for _, n := range s.Nodes {
		node, err := client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			problems = append(problems, n.Name+" has not registered")
			continue
		}
		if err != nil {
			return err
		}
		i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
		if i < 0 || node.Status.Conditions[i].Status != corev1.ConditionTrue {
			why := "no Ready condition yet"
			if i >= 0 {
				why = node.Status.Conditions[i].Message
			}
			problems = append(problems, n.Name+" is not Ready: "+why)
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// PodReady reports whether the pod's Ready condition is true.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// RestartAgent restarts node's agent pod: SIGTERM deletes it as `kubectl delete pod`
// does (a clean stop), SIGKILL kills its process as a crash would (kubelet restarts the
// container in place). It returns once the node has a ready agent again. Nothing else
// of the node stops: its OVS and ovn-controller keep forwarding meanwhile.
// Repeated SIGKILLs within minutes meet kubelet's crash-loop back-off (10 s, then 20,
// 40, …) and may outlast the wait.
func (s *Sandbox) RestartAgent(ctx context.Context, node string, sig syscall.Signal) error {
	if s.nodeIndex(node) < 0 {
		return fmt.Errorf("no node %q in the sandbox: its nodes are %v", node, NodeNames())
	}
	if sig != syscall.SIGTERM && sig != syscall.SIGKILL {
		return fmt.Errorf("restart the agent of %s with %v: want SIGTERM (delete its pod) or SIGKILL (kill its process)", node, sig)
	}
	client, pod, err := s.agentPod(ctx, node)
	if err != nil {
		return err
	}
	old := map[string]bool{}
	switch sig {
	case syscall.SIGTERM:
		old[string(pod.UID)] = true
		if err := client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete agent pod %s: %w", pod.Name, err)
		}
	default:
		restarts := containerRestarts(pod)
		pid, err := s.podPID(ctx, pod.Namespace+"/"+pod.Name)
		if err != nil {
			return err
		}
		if err := syscall.Kill(pid, sig); err != nil {
			return fmt.Errorf("signal the agent of %s (pid %d): %w", node, pid, err)
		}
		// The same pod comes back: wait for kubelet to have restarted its container.
		if err := poll.Until(ctx, agentTimeout, "the agent container of "+node+" to restart", func(ctx context.Context) error {
			p, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if containerRestarts(p) == restarts {
				return errors.New("not restarted yet")
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return s.waitAgents(ctx, old)
}

// containerRestarts is the sum of the pod's containers' restart counts.
func containerRestarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// agentPod is the agent pod on node, with the client that found it.
func (s *Sandbox) agentPod(ctx context.Context, node string) (kubernetes.Interface, *corev1.Pod, error) {
	client, err := s.client()
	if err != nil {
		return nil, nil, err
	}
	pods, err := client.CoreV1().Pods(manifests.DefaultNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: manifests.LabelName + "=" + manifests.AgentName,
		FieldSelector: "spec.nodeName=" + node,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list agent pods: %w", err)
	}
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp == nil {
			return client, &pods.Items[i], nil
		}
	}
	return nil, nil, fmt.Errorf("no agent pod on %s", node)
}

// client is an admin clientset of the sandbox's API server.
func (s *Sandbox) client() (kubernetes.Interface, error) {
	cfg, err := s.restConfig()
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return client, nil
}

// AgentConfigFile is the agent's config file the sandbox installed (with Options.AgentArgs
// and every RollOutAgent's settings), as `kubectl ovnk install --config` read it.
func (s *Sandbox) AgentConfigFile() string { return filepath.Join(s.Dir, agentConfigFile) }

// AgentLog returns the last lines of the log of node's agent, as `kubectl logs --tail`
// does.
func (s *Sandbox) AgentLog(ctx context.Context, node string, lines int64) (string, error) {
	client, pod, err := s.agentPod(ctx, node)
	if err != nil {
		return "", err
	}
	data, err := client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("log of agent pod %s: %w", pod.Name, err)
	}
	return string(data), nil
}
