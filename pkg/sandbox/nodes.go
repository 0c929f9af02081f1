package sandbox

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"strconv"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/poll"
)

// defaultSubnet is the default network's subnet and each node's prefix length in it.
var defaultSubnet = cluster.Subnet{CIDR: netip.MustParsePrefix("10.244.0.0/16"), HostSubnet: 24}

// clusterSubnets is defaultSubnet in the agent's --cluster-subnets form.
func clusterSubnets() string {
	return fmt.Sprintf("%s/%d", defaultSubnet.CIDR, defaultSubnet.HostSubnet)
}

// Inside a node's namespace, the API server and the agent's HTTP endpoint are on the
// node's own loopback, at the addresses a node of a real cluster would use; the
// forwarder joins them to the host's loopback (tests that build nodes of their own
// use the same).
const (
	NodeAPIServer  = "127.0.0.1:6443"
	NodeAgentHTTP  = "127.0.0.1:9476"
	nodeKubeconfig = "kubeconfig"
)

// newNodes lays out the nodes of the sandbox in dir: node i lives in <dir>/n<i> and in
// the namespace <prefix>n<i>. Everything but the agents' host ports follows from dir,
// so the sandbox's own daemons find the nodes from the directory alone.
func newNodes(dir string) []Node {
	prefix := netnsPrefix(dir)
	nodes := make([]Node, 0, nodeCount)
	for i, name := range NodeNames() {
		n := Node{
			Name:    name,
			Dir:     "n" + strconv.Itoa(i+1),
			Netns:   nodeNetns(prefix, i),
			Address: nodeAddress(i).String(),
			MAC:     nodeMAC(i),
		}
		path := func(file string) string { return filepath.Join(dir, n.Dir, file) }
		n.OVSEndpoint = "unix:" + path(ovsSocket)
		n.NBEndpoint = "unix:" + path(nbSocket)
		n.SBEndpoint = "unix:" + path(sbSocket)
		n.Kubeconfig = path(nodeKubeconfig)
		nodes = append(nodes, n)
	}
	return nodes
}

// Netnses lists the sandbox's network namespaces but the pods': the nodes', the
// underlay's and the outside world's.
func (s *Sandbox) Netnses() []string {
	out := []string{s.Underlay, s.Outside}
	for _, n := range s.Nodes {
		out = append(out, n.Netns)
	}
	return out
}

func (s *Sandbox) agent(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" agent", filepath.Join(n.Dir, "agent"))
}

// object is the Node as kubelet registers it: a name and its hostname label. What
// OVN-Kubernetes' node side publishes about it (chassis, gateway, addresses) the node's
// agent publishes.
func (n Node) object() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   n.Name,
		Labels: map[string]string{corev1.LabelHostname: n.Name},
	}}
}

// agentArgv is the agent's command line for node n, run inside the node's namespace:
// the sandbox's flags, then s.AgentArgs, then extra.
func (s *Sandbox) agentArgv(n Node, extra ...string) []string {
	args := []string{"run",
		"--config=", // no agent.conf: everything is on the command line
		"--kubeconfig", n.Kubeconfig,
		"--node-name", n.Name,
		"--nb-address", n.NBEndpoint,
		"--sb-address", n.SBEndpoint,
		"--ovs-address", n.OVSEndpoint,
		"--gateway-bridge", GatewayBridge,
		"--datapath-type", "netdev",
		"--http-address", NodeAgentHTTP,
		"--cluster-subnets", clusterSubnets(),
		"--leader-election-namespace", manifests.DefaultNamespace,
	}
	args = append(append(args, s.AgentArgs...), extra...)
	return nsenterArgv(n.Netns, append([]string{s.AgentPath}, args...)...)
}

// startAgents starts an agent per node inside its namespace, and waits until every one
// is ready (connected to its NB, its zone reconciled), asking through the forwarder.
func (s *Sandbox) startAgents(ctx context.Context) error {
	return s.inParallel(func(n *Node) error { return s.startAgent(ctx, *n) })
}

func (s *Sandbox) startAgent(ctx context.Context, n Node, extra ...string) error {
	d := s.agent(n)
	// The agent runs ovs-ofctl (found on PATH) for br-ex's flows; the node's tools find
	// the node's servers by this environment.
	if err := d.startDetached(s.nodeDir(n), s.nodeEnv(n), s.agentArgv(n, extra...)...); err != nil {
		return err
	}
	return waitStarted(ctx, d, agentTimeout, fmt.Sprintf("the agent of %s to be ready", n.Name), poll.HTTPOK("http://"+n.HTTPAddress+"/readyz"))
}

// RestartAgent stops node's agent with sig (SIGKILL for a crash, SIGTERM for a clean
// stop), waits until it is gone, and starts it again with the sandbox's flags and
// extra, until it is ready. Nothing else of the node stops: its OVS and ovn-controller
// keep forwarding meanwhile.
func (s *Sandbox) RestartAgent(ctx context.Context, node string, sig syscall.Signal, extra ...string) error {
	i := s.nodeIndex(node)
	if i < 0 {
		return fmt.Errorf("no node %q in the sandbox: its nodes are %v", node, NodeNames())
	}
	n := s.Nodes[i]
	d := s.agent(n)
	if sig != syscall.SIGTERM {
		pid, err := d.readPID()
		if err != nil {
			return err
		}
		if running(pid, s.Dir) {
			signalGroup(pid, sig)
		}
	}
	// As Down stops it: SIGTERM, and SIGKILL after the grace period.
	if err := stopStage(ctx, s.Dir, io.Discard, []string{d.pidFile}); err != nil {
		return fmt.Errorf("stop the agent of %s: %w", node, err)
	}
	return s.startAgent(ctx, n, extra...)
}
