package upgradecmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
)

// assessment is one look at the upgrade: l2upgrade's report, and what it could not take
// into account.
type assessment struct {
	Report l2upgrade.Report
	// Warnings name the nodes and Layer2 networks the cluster state left out (a node
	// without its node id yet, a network without its network id) and the heartbeat
	// Leases that could not be read, one line each.
	Warnings []string
}

// inputs are what an assessment is computed from, besides the zones.
type inputs struct {
	cluster cluster.Inputs
	// leases are the heartbeat Leases in the agent namespace.
	leases []coordinationv1.Lease
	// leaseErr says why the Leases could not be listed; nil when they were.
	leaseErr error
	// namespace is the agent namespace, where the Leases are.
	namespace string
	// idProblems say why networks' ids could not be read from their NADs, or the NADs
	// not listed, one line each.
	idProblems []string
}

// assess gathers the inputs from the API server, reads every node's zone through src
// and assesses the upgrade.
func assess(ctx context.Context, c client.Reader, src livezone.Source, namespace string) (assessment, error) {
	in, err := gather(ctx, c, namespace)
	if err != nil {
		return assessment{}, err
	}
	st, buildErrs := cluster.Build(in.cluster)
	agents := agentPhases(in.leases)
	nodes := make([]string, len(st.Nodes))
	for i, n := range st.Nodes {
		nodes[i] = n.Name
	}
	zones := readZones(ctx, src, nodes, agents)
	a := assessment{Report: l2upgrade.Assess(st, zones), Warnings: warnings(in, buildErrs)}
	// Empty lists print as [] in JSON, not null.
	if a.Report.Nodes == nil {
		a.Report.Nodes = []l2upgrade.NodeReport{}
	}
	if a.Report.Networks == nil {
		a.Report.Networks = []l2upgrade.NetworkReport{}
	}
	return a, nil
}

// gather lists what cluster.Build needs for the Layer2 upgrade — every Node, Namespace,
// Pod, ClusterUserDefinedNetwork and UserDefinedNetwork — and the heartbeat Leases in
// the agent namespace. The default network is left unconfigured: Build then leaves it
// out, which does not matter to Layer2 networks.
func gather(ctx context.Context, c client.Reader, namespace string) (*inputs, error) {
	in := &inputs{namespace: namespace}
	var nodes corev1.NodeList
	var namespaces corev1.NamespaceList
	var pods corev1.PodList
	for _, l := range []struct {
		what string
		list client.ObjectList
	}{{"nodes", &nodes}, {"namespaces", &namespaces}, {"pods", &pods}} {
		if err := c.List(ctx, l.list); err != nil {
			return nil, fmt.Errorf("list %s: %w", l.what, err)
		}
	}
	cudns, udns, err := netview.ListAll(ctx, c)
	if err != nil {
		return nil, err
	}
	// Upstream OVN-Kubernetes keeps the networks' ids on their NADs: a network is
	// assessed with those when its object has none.
	nads, warning, err := netview.ListNADs(ctx, c)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		in.idProblems = append(in.idProblems, warning)
	}
	in.cluster = cluster.Inputs{Nodes: nodes.Items, Namespaces: namespaces.Items, Pods: pods.Items}
	for _, n := range netview.FromLists(&ovnkv1.ClusterUserDefinedNetworkList{Items: cudns}, &ovnkv1.UserDefinedNetworkList{Items: udns}) {
		n, err := n.WithIDs(nads)
		if err != nil {
			in.idProblems = append(in.idProblems, oneLine(err.Error()))
		}
		if n.Cluster() {
			in.cluster.CUDNs = append(in.cluster.CUDNs, n.CUDN)
		} else {
			in.cluster.UDNs = append(in.cluster.UDNs, n.UDN)
		}
	}
	// Without the Leases (no agent namespace, no access) the agents' phases are
	// unknown; nodes are then judged by their annotations, pods and zones.
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases, client.InNamespace(namespace)); err != nil {
		in.leaseErr = err
	} else {
		in.leases = leases.Items
	}
	return in, nil
}

// agentPhases maps each heartbeat Lease's node to the Layer2 phase its agent reports.
// Leases are matched to nodes by cluster.HeartbeatLeaseName, which the callers apply.
func agentPhases(leases []coordinationv1.Lease) map[string]l2upgrade.Phase {
	out := map[string]l2upgrade.Phase{}
	for i := range leases {
		l := &leases[i]
		if !strings.HasPrefix(l.Name, cluster.HeartbeatLeasePrefix) {
			continue
		}
		s, err := cluster.ParseHeartbeat(l)
		phase := s.Layer2Phase
		if err != nil {
			// Another annotation is malformed; the phase is still the agent's word.
			phase = l.Annotations[cluster.AnnotationLayer2Phase]
		}
		out[l.Name] = l2upgrade.Phase(phase)
	}
	return out
}

// readZones reads the zone of every node through src, zoneReaders at a time, and
// returns what l2upgrade.Assess needs of each: its footprint, or why it could not be
// read, and its agent's phase (agents is keyed by Lease name). It never fails: a zone
// that cannot be read is a Zone with Err.
func readZones(ctx context.Context, src livezone.Source, nodes []string, agents map[string]l2upgrade.Phase) map[string]l2upgrade.Zone {
	zones := make(map[string]l2upgrade.Zone, len(nodes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, zoneReaders)
	for _, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			z := readZone(ctx, src, node)
			z.Agent = agents[cluster.HeartbeatLeaseName(node)]
			mu.Lock()
			zones[node] = z
			mu.Unlock()
		}()
	}
	wg.Wait()
	return zones
}

// readZone reads one node's zone and classifies its router ports.
func readZone(ctx context.Context, src livezone.Source, node string) l2upgrade.Zone {
	if err := ctx.Err(); err != nil {
		return l2upgrade.Zone{Err: err}
	}
	d, err := src.Dump(ctx, node)
	if err != nil {
		return l2upgrade.Zone{Err: err}
	}
	s, err := d.Rows()
	if err != nil {
		return l2upgrade.Zone{Err: fmt.Errorf("read node %s's zone: %w", node, err)}
	}
	fp := l2upgrade.FootprintOf(s.RouterPorts)
	return l2upgrade.Zone{Footprint: &fp}
}

// warnings are what the assessment had to do without, one line each: the nodes the
// cluster state left out (they are not counted), the Layer2 networks it left out
// (their pods do not block), and the heartbeat Leases when they could not be listed.
// The default network, which is not configured here, and other objects do not matter
// to the Layer2 upgrade and are not mentioned.
func warnings(in *inputs, buildErrs []error) []string {
	layer2 := map[cluster.ObjectRef]bool{}
	for _, c := range in.cluster.CUDNs {
		if c.Spec.Network.Topology == ovnkv1.NetworkTopologyLayer2 {
			layer2[cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: c.Name}] = true
		}
	}
	for _, u := range in.cluster.UDNs {
		if u.Spec.Topology == ovnkv1.NetworkTopologyLayer2 {
			layer2[cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: u.Namespace, Name: u.Name}] = true
		}
	}
	// Each object's problems, in the order Build found them, on one line.
	var order []cluster.ObjectRef
	problems := map[cluster.ObjectRef][]string{}
	for _, err := range buildErrs {
		for _, e := range flatten(err) {
			var oe *cluster.ObjectError
			if !errors.As(e, &oe) || (oe.Object.Kind != "Node" && !layer2[oe.Object]) {
				continue
			}
			problem := oneLine(oe.Err.Error())
			if oe.Annotation != "" {
				problem = "annotation " + oe.Annotation + ": " + problem
			}
			if _, ok := problems[oe.Object]; !ok {
				order = append(order, oe.Object)
			}
			if !slices.Contains(problems[oe.Object], problem) {
				problems[oe.Object] = append(problems[oe.Object], problem)
			}
		}
	}
	var out []string
	for _, ref := range order {
		what := "Layer2 network " + networkOf(ref) + " is not assessed, nor are its pods"
		if ref.Kind == "Node" {
			what = "node " + ref.Name + " is not counted"
		}
		out = append(out, what+": "+strings.Join(problems[ref], "; "))
	}
	out = append(out, in.idProblems...)
	if in.leaseErr != nil {
		out = append(out, fmt.Sprintf("the agents' phases are unknown: cannot list the heartbeat Leases in namespace %s (set --agent-namespace to the agent's namespace): %s",
			in.namespace, oneLine(in.leaseErr.Error())))
	}
	return out
}

// flatten splits errors joined with errors.Join (a node's several missing annotations)
// into their parts.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// networkOf is how users name the network object ref stands for.
func networkOf(ref cluster.ObjectRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}
