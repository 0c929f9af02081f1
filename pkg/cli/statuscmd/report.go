package statuscmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// Report is what `kubectl ovnk status` shows; `-o json` and `-o yaml` print it as is,
// and its field names are stable for scripts.
type Report struct {
	// Ready is true when every node's agent is ready and every network is ready on
	// every node; a cluster without nodes is not ready.
	Ready bool `json:"ready"`
	// Cluster says which OVN-Kubernetes runs the cluster (clusterkind.Detect); nil
	// when it could not be told. Under upstream OVN-Kubernetes a node's agent is its
	// ovnkube-node pod.
	Cluster *clusterkind.Cluster `json:"cluster,omitempty"`
	// Nodes are the cluster's nodes, by name.
	Nodes []NodeStatus `json:"nodes"`
	// Networks are the user-defined networks (ClusterUserDefinedNetworks and
	// UserDefinedNetworks), by name (Name).
	Networks []NetworkStatus `json:"networks"`
	// NetworksError says why the networks could not be listed (their CRDs are not
	// installed); the agents are reported all the same.
	NetworksError string `json:"networksError,omitempty"`
}

// NodeStatus is one node's agent, as its heartbeat Lease (ovnk-agent-<node> in the
// agent's namespace) and its agent pod tell; on a cluster run by upstream
// OVN-Kubernetes, as its ovnkube-node pod tells (Agent, Ready, NotReadyReason and Pod
// alone are set).
type NodeStatus struct {
	Node string `json:"node"`
	// Agent is false when the node has no heartbeat Lease: no agent ever ran there
	// (upstream: no ovnkube-node pod).
	Agent bool `json:"agent"`
	// Ready: the heartbeat is fresh (renewed within its lease duration), the agent is
	// connected to its NB, reaches its node's Open vSwitch database (if it does the
	// node's own part) and reconciled the zone at least once, and the node's agent pod,
	// if there is one, is Ready.
	Ready bool `json:"ready"`
	// NotReadyReason says why the agent is not ready; empty when it is.
	NotReadyReason string `json:"notReadyReason,omitempty"`
	// Version is the agent's build version.
	Version string `json:"version,omitempty"`
	// Leader is true when the agent's fresh heartbeat says it holds the leader Lease.
	Leader bool `json:"leader"`
	// NBConnected is whether the agent reaches its node's OVN northbound database.
	NBConnected bool `json:"nbConnected"`
	// LastReconcile is the time of the zone's last successful reconcile, as of the
	// last heartbeat (at most one renewal, 10s, old).
	LastReconcile *time.Time `json:"lastReconcile,omitempty"`
	// LastError is the error of the zone's last reconcile; empty when it succeeded.
	LastError string `json:"lastError,omitempty"`
	// Heartbeat is when the agent last renewed its Lease.
	Heartbeat *time.Time `json:"heartbeat,omitempty"`
	// Pod is the node's agent pod, when the agent runs as the DaemonSet (upstream:
	// its ovnkube-node pod).
	Pod string `json:"pod,omitempty"`
}

// NetworkStatus is one network's readiness on every node, from each Node's
// ovnk.io/zone-status report.
type NetworkStatus struct {
	// Network is the OVN network name: cluster_udn_<name> or <namespace>_<name>.
	Network string `json:"network"`
	// Kind and Name name the object; Name is the network's user-facing name
	// (netview.Network.Ref: namespace/name for a UserDefinedNetwork), the one
	// `network describe` takes.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Status is Ready, Pending, or the reason the leader refused the network (its
	// NetworkCreated condition's, e.g. SubnetOverlap); Reason says why when it is not
	// Ready (netview.Network.Status).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// ReadyNodes of TotalNodes have programmed the network in their zone; both 0 when
	// FromConditions.
	ReadyNodes int `json:"readyNodes"`
	TotalNodes int `json:"totalNodes"`
	// FromConditions says that Status comes from the conditions upstream's cluster
	// manager sets on the network: no node reports on its zone and the zones could not
	// be read (netview.Network.Summarize).
	FromConditions bool `json:"fromConditions,omitempty"`
	// FromZones says that no agent reports on the nodes' zones (a cluster run by
	// upstream OVN-Kubernetes) and the counts come from reading the zones themselves.
	FromZones bool `json:"fromZones,omitempty"`
	// NotReady are the other nodes, by name, each with its reason.
	NotReady []NodeReason `json:"notReady,omitempty"`
}

// NodeReason is why a network is not ready on a node.
type NodeReason struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// Pending lists what is not ready, one short phrase each, agents first: the message of
// --wait's timeout.
func (r Report) Pending() []string {
	if len(r.Nodes) == 0 {
		return []string{"the cluster has no nodes"}
	}
	var out []string
	for _, n := range r.Nodes {
		if !n.Ready {
			out = append(out, fmt.Sprintf("agent on %s (%s)", n.Node, n.NotReadyReason))
		}
	}
	if r.NetworksError != "" {
		out = append(out, "networks: "+r.NetworksError)
	}
	for _, nw := range r.Networks {
		switch {
		case nw.Status != netview.StatusReady && nw.Status != netview.StatusPending:
			out = append(out, fmt.Sprintf("network %s (%s)", nw.Name, nw.Status))
		case len(nw.NotReady) > 0:
			out = append(out, fmt.Sprintf("network %s on %s", nw.Name, nodeNames(nw.NotReady)))
		case nw.FromConditions && nw.Status != netview.StatusReady:
			out = append(out, fmt.Sprintf("network %s (%s)", nw.Name, nw.Reason))
		}
	}
	return out
}

// Counts returns how many agents and networks are ready.
func (r Report) Counts() (readyAgents, readyNetworks int) {
	for _, n := range r.Nodes {
		if n.Ready {
			readyAgents++
		}
	}
	for _, nw := range r.Networks {
		if nw.Status == netview.StatusReady {
			readyNetworks++
		}
	}
	return readyAgents, readyNetworks
}

func nodeNames(rs []NodeReason) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Node
	}
	return strings.Join(names, ", ")
}

// inputs are the objects a Report is computed from.
type inputs struct {
	namespace string // the agent's
	// cluster is what runs the cluster; nil when unknown. Under upstream, pods are
	// its ovnkube-node pods and there are no Leases.
	cluster *clusterkind.Cluster
	nodes   []corev1.Node
	leases  []coordinationv1.Lease
	pods    []corev1.Pod // the agent's
	cudns   []ovnkv1.ClusterUserDefinedNetwork
	udns    []ovnkv1.UserDefinedNetwork
	// networksErr is why the networks could not be listed.
	networksErr error
	// reports are the nodes' zone reports (zonereport.Read).
	reports []cluster.ZoneReport
}

// gather lists the inputs: every Node, the Leases and agent pods in the agent's
// namespace (under upstream OVN-Kubernetes, cl says, its ovnkube-node pods), every
// ClusterUserDefinedNetwork and UserDefinedNetwork. A cluster without the network
// CRDs still has agents to show: that error is kept in the inputs.
func gather(ctx context.Context, c client.Reader, namespace string, cl *clusterkind.Cluster) (*inputs, error) {
	in := &inputs{namespace: namespace, cluster: cl}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var leases coordinationv1.LeaseList
	var pods corev1.PodList
	if cl != nil && cl.Kind == clusterkind.Upstream {
		sel, err := metav1.LabelSelectorAsSelector(cl.PodSelector)
		if err != nil {
			return nil, fmt.Errorf("DaemonSet %s/%s's selector: %w", cl.Namespace, cl.DaemonSet, err)
		}
		if err := c.List(ctx, &pods, client.InNamespace(cl.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("list %s pods in namespace %s: %w", cl.DaemonSet, cl.Namespace, err)
		}
	} else {
		if err := c.List(ctx, &leases, client.InNamespace(namespace)); err != nil {
			return nil, fmt.Errorf("list leases in namespace %s: %w", namespace, err)
		}
		agentPods := client.MatchingLabels{manifests.LabelName: manifests.AgentName, manifests.LabelPartOf: "ovnk"}
		if err := c.List(ctx, &pods, client.InNamespace(namespace), agentPods); err != nil {
			return nil, fmt.Errorf("list agent pods in namespace %s: %w", namespace, err)
		}
	}
	cudns, udns, err := netview.ListAll(ctx, c)
	switch {
	case errors.Is(err, netview.ErrNoNetworkAPI):
		in.networksErr = err
	case err != nil:
		return nil, err
	}
	in.nodes, in.leases, in.pods, in.cudns, in.udns = nodes.Items, leases.Items, pods.Items, cudns, udns
	return in, nil
}

// build computes the Report at now.
func build(in *inputs, now time.Time) Report {
	leases := map[string]*coordinationv1.Lease{}
	for i := range in.leases {
		leases[in.leases[i].Name] = &in.leases[i]
	}
	pods := map[string][]*corev1.Pod{}
	for i := range in.pods {
		p := &in.pods[i]
		pods[p.Spec.NodeName] = append(pods[p.Spec.NodeName], p)
	}
	nodes := slices.Clone(in.nodes)
	slices.SortFunc(nodes, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })

	r := Report{Nodes: []NodeStatus{}, Networks: []NetworkStatus{}, Cluster: in.cluster}
	upstream := in.cluster != nil && in.cluster.Kind == clusterkind.Upstream
	for _, n := range nodes {
		if upstream {
			r.Nodes = append(r.Nodes, upstreamNodeStatus(n.Name, pods[n.Name], in.cluster))
			continue
		}
		r.Nodes = append(r.Nodes, nodeStatus(n.Name, leases[cluster.HeartbeatLeaseName(n.Name)], pods[n.Name], in.namespace, now))
	}
	if in.networksErr != nil {
		r.NetworksError = in.networksErr.Error()
	}
	for i := range in.cudns {
		r.Networks = append(r.Networks, networkStatus(netview.Network{CUDN: &in.cudns[i]}, in.reports))
	}
	for i := range in.udns {
		r.Networks = append(r.Networks, networkStatus(netview.Network{UDN: &in.udns[i]}, in.reports))
	}
	slices.SortFunc(r.Networks, func(a, b NetworkStatus) int { return strings.Compare(a.Name, b.Name) })
	r.Ready = len(r.Pending()) == 0
	return r
}

// nodeStatus reads a node's heartbeat Lease (nil if there is none) and agent pods.
func nodeStatus(node string, lease *coordinationv1.Lease, pods []*corev1.Pod, namespace string, now time.Time) NodeStatus {
	s := NodeStatus{Node: node}
	pod := readyPod(pods)
	if pod != nil {
		s.Pod = pod.Name
	}
	if lease == nil {
		s.NotReadyReason = fmt.Sprintf("no agent: no heartbeat Lease %s/%s", namespace, cluster.HeartbeatLeaseName(node))
		if pod != nil {
			s.NotReadyReason = fmt.Sprintf("pod %s has not published its heartbeat Lease %s/%s yet", pod.Name, namespace, cluster.HeartbeatLeaseName(node))
		}
		return s
	}
	s.Agent = true
	hb, err := cluster.ParseHeartbeat(lease)
	if err != nil {
		s.NotReadyReason = err.Error()
		return s
	}
	fresh := hb.Fresh(now)
	s.Version, s.Leader, s.NBConnected, s.LastError = hb.Version, hb.Leader && fresh, hb.NBConnected, hb.LastError
	if !hb.LastReconcile.IsZero() {
		s.LastReconcile = &hb.LastReconcile
	}
	if !hb.RenewTime.IsZero() {
		s.Heartbeat = &hb.RenewTime
	}
	switch {
	case hb.RenewTime.IsZero():
		s.NotReadyReason = "the heartbeat Lease was never renewed"
	case !fresh:
		s.NotReadyReason = fmt.Sprintf("heartbeat expired: last renewed %s ago, valid for %s", age(now, hb.RenewTime), duration.HumanDuration(hb.Duration))
	case !hb.NBConnected:
		s.NotReadyReason = "not connected to its OVN northbound database"
	case hb.OVSUnreachable():
		// The last error names the database and says why.
		s.NotReadyReason = "cannot reach its node's Open vSwitch database"
	case hb.NodeProblem != "":
		// The agent works, but its node does not parse (its last error says so too).
		s.NotReadyReason = hb.NodeProblem
	case hb.LastReconcile.IsZero():
		s.NotReadyReason = "the zone has not been reconciled yet"
	case len(pods) > 0 && pod == nil:
		s.NotReadyReason = fmt.Sprintf("pod %s is not Ready", pods[0].Name)
	default:
		s.Ready = true
	}
	return s
}

// upstreamNodeStatus is a node's ovnkube-node pod of cl's DaemonSet: its agent under
// upstream OVN-Kubernetes, ready when the pod is Ready.
func upstreamNodeStatus(node string, pods []*corev1.Pod, cl *clusterkind.Cluster) NodeStatus {
	s := NodeStatus{Node: node, Agent: len(pods) > 0}
	if pod := readyPod(pods); pod != nil {
		s.Pod, s.Ready = pod.Name, true
		return s
	}
	if len(pods) == 0 {
		s.NotReadyReason = fmt.Sprintf("no pod of DaemonSet %s/%s on the node", cl.Namespace, cl.DaemonSet)
		return s
	}
	s.Pod = pods[0].Name
	s.NotReadyReason = "pod " + pods[0].Name + " is not Ready" + whyNotReady(pods[0])
	return s
}

// whyNotReady names the pod's containers that are not ready and why (waiting with a
// reason, terminated, or not ready while running), as ": c1 CrashLoopBackOff, c2 not
// ready"; "" when the status names none (the pod is pending, say).
func whyNotReady(p *corev1.Pod) string {
	var parts []string
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.Ready:
			continue
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			parts = append(parts, c.Name+" "+c.State.Waiting.Reason)
		case c.State.Terminated != nil:
			parts = append(parts, c.Name+" terminated ("+c.State.Terminated.Reason+")")
		default:
			parts = append(parts, c.Name+" not ready")
		}
	}
	if len(parts) == 0 {
		if p.Status.Phase != "" && p.Status.Phase != corev1.PodRunning {
			return " (" + string(p.Status.Phase) + ")"
		}
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// readyPod returns a Ready pod of pods, or nil. During a rolling update a node may have
// two agent pods for a moment; one Ready pod is enough.
func readyPod(pods []*corev1.Pod) *corev1.Pod {
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				return p
			}
		}
	}
	return nil
}

// networkStatus aggregates the nodes' zone reports on one network.
func networkStatus(n netview.Network, reports []cluster.ZoneReport) NetworkStatus {
	sum := n.Summarize(reports)
	s := NetworkStatus{Network: n.OVNName(), Kind: n.Kind(), Name: n.Ref(), TotalNodes: len(sum.Nodes), FromConditions: sum.FromConditions, FromZones: sum.FromZones}
	for _, r := range sum.Nodes {
		if r.Ready {
			s.ReadyNodes++
		} else {
			s.NotReady = append(s.NotReady, NodeReason{Node: r.Node, Reason: r.Reason})
		}
	}
	s.Status, s.Reason = sum.Status, sum.Reason
	return s
}
