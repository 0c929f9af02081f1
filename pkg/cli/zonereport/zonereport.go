// Package zonereport tells, for every node, which networks and connects its zone has
// programmed: as ovnk's agent on the node reports it (the node's ovnk.io/zone-status),
// or, on a cluster run by upstream OVN-Kubernetes, whose nodes write no such report, as
// the zone itself shows it.
package zonereport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
)

// concurrentReads bounds how many zones are read at once: each read is an exec in a
// pod on the node, which the API server and the kubelets serve.
const concurrentReads = 8

// zoneReadTimeout bounds one zone's read, so that one node whose pod does not answer
// costs the command this, not the rest of its time.
const zoneReadTimeout = 10 * time.Second

// ConditionNodesSelected is the condition upstream OVN-Kubernetes keeps on a network
// when it renders user-defined networks only on the nodes that need them (dynamic UDN
// node allocation, OKEP-5552): a node with no pod on the network need not hold it.
const ConditionNodesSelected = "NodesSelected"

// Read returns every node's zone report, sorted by node name, and warnings for the
// user. The agents' reports are used whenever a node has one. On a cluster run by
// upstream OVN-Kubernetes whose nodes have none, each node's zone is read instead
// (topology.NotProgrammed judges it), for every network and every connect of cncs; a
// node whose zone cannot be read says why in its report. When no zone can be read, or
// what the zones should hold cannot be listed, the nodes are left without reports (the
// networks' conditions decide then) and a warning says why.
func Read(ctx context.Context, f *cmdutil.Factory, nodes []corev1.Node, cncs []ovnkv1.ClusterNetworkConnect) ([]cluster.ZoneReport, []string) {
	return read(ctx, f, liveZones{livezone.For(f, "")}, nodes, cncs)
}

// zones reads a node's zone.
type zones interface {
	Rows(ctx context.Context, node string) (*rows.Set, error)
}

// liveZones reads zones where livezone.For finds them.
type liveZones struct{ src livezone.Source }

func (z liveZones) Rows(ctx context.Context, node string) (*rows.Set, error) {
	d, err := z.src.Dump(ctx, node)
	if err != nil {
		return nil, err
	}
	set, err := d.Rows()
	if err != nil {
		return nil, fmt.Errorf("read node %s's zone: %w", node, err)
	}
	return set, nil
}

// read is Read, with the zones read from src.
func read(ctx context.Context, f *cmdutil.Factory, src zones, nodes []corev1.Node, cncs []ovnkv1.ClusterNetworkConnect) ([]cluster.ZoneReport, []string) {
	reports := cluster.ReadZoneReports(nodes)
	if len(nodes) == 0 || cluster.AnyReported(reports) {
		return reports, nil
	}
	conn, err := f.Connect()
	if err != nil {
		return reports, nil
	}
	// Which cluster it is decides only whether zones are read: a failed look leaves
	// the reports as they are, as on a cluster of neither kind, and says so.
	cl, err := clusterkind.Detect(ctx, conn.Clientset, f.Settings.AgentNamespace)
	if err != nil {
		return reports, []string{fmt.Sprintf("which OVN-Kubernetes runs the cluster is unknown, so no node's zone is read for its readiness: %v", conn.Explain(err))}
	}
	if cl.Kind != clusterkind.Upstream {
		return reports, nil
	}
	want, warnings, err := expected(ctx, conn.Client, cncs)
	if err != nil {
		return reports, append(warnings, fmt.Sprintf("cannot tell what the nodes' zones should hold, so readiness comes from the networks' conditions: %v", err))
	}
	if len(want.networks) == 0 && len(want.connects) == 0 {
		return reports, warnings // nothing to look for: no exec on any node
	}
	derived := readZones(ctx, f, src, nodes, want)
	if i := slices.IndexFunc(derived, func(z cluster.ZoneReport) bool { return z.Err == nil }); i < 0 {
		return reports, append(warnings, fmt.Sprintf("cannot read the nodes' zones, so readiness comes from the networks' conditions: %v", derived[0].Err))
	}
	return derived, warnings
}

// Reader reads the zone reports of one command, and says each warning once on the
// command's standard error however often it reads (a watch reads on every change).
type Reader struct {
	f      *cmdutil.Factory
	warned map[string]bool
}

// NewReader is the reader of f's command.
func NewReader(f *cmdutil.Factory) *Reader { return &Reader{f: f, warned: map[string]bool{}} }

// Read is Read's reports, its warnings said.
func (r *Reader) Read(ctx context.Context, nodes []corev1.Node, cncs []ovnkv1.ClusterNetworkConnect) []cluster.ZoneReport {
	reports, warnings := Read(ctx, r.f, nodes, cncs)
	if ctx.Err() != nil {
		return reports // the command is ending (Ctrl-C): what failed is no news
	}
	for _, w := range warnings {
		if !r.warned[w] {
			r.warned[w] = true
			fmt.Fprintf(r.f.ErrOut, "Warning: %s\n", w)
		}
	}
	return reports
}

// expectation is what the zones should hold.
type expectation struct {
	networks []*cluster.Network
	// dynamic names the networks upstream renders only on the nodes that need them
	// (ConditionNodesSelected).
	dynamic map[string]bool
	// pods are the pods on a network, by node then network name.
	pods     map[string]map[string][]*cluster.Pod
	connects []string
}

// expected reads the networks as the leader reads their specs, and the pods attached
// to them. A user who may not list pods gets the zones judged without them, and a
// warning saying so.
func expected(ctx context.Context, c client.Reader, cncs []ovnkv1.ClusterNetworkConnect) (expectation, []string, error) {
	var want expectation
	cudns, udns, err := netview.ListAll(ctx, c)
	if err != nil {
		return want, nil, err
	}
	var namespaces corev1.NamespaceList
	if err := c.List(ctx, &namespaces); err != nil {
		return want, nil, fmt.Errorf("list namespaces: %w", err)
	}
	cudnPtrs, udnPtrs := ptrs(cudns), ptrs(udns)
	// A network whose spec pkg/cluster cannot read (a topology it does not model, such
	// as Localnet) is left out: no report names it, and its conditions decide its
	// state (netview.Network.Summarize).
	want.networks, _ = cluster.SpecNetworks(cluster.Inputs{Namespaces: namespaces.Items, CUDNs: cudnPtrs, UDNs: udnPtrs})
	want.dynamic = map[string]bool{}
	for _, n := range netview.FromLists(&ovnkv1.ClusterUserDefinedNetworkList{Items: cudns}, &ovnkv1.UserDefinedNetworkList{Items: udns}) {
		if meta.FindStatusCondition(n.Conditions(), ConditionNodesSelected) != nil {
			want.dynamic[n.OVNName()] = true
		}
	}
	for _, cnc := range cncs {
		want.connects = append(want.connects, cnc.Name)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods); err != nil {
		return want, []string{fmt.Sprintf("cannot list pods, so the nodes' zones are judged without checking that the pods are wired (ask for list on pods): %v", err)}, nil
	}
	nads := cluster.NewNADNetworks(cudnPtrs, udnPtrs, namespaces.Items)
	want.pods = map[string]map[string][]*cluster.Pod{}
	for i := range pods.Items {
		// A pod whose annotation cannot be read is left out: it is the pod's
		// problem, not the zone's.
		p, _ := nads.Pod(&pods.Items[i])
		if p == nil {
			continue
		}
		if want.pods[p.Node] == nil {
			want.pods[p.Node] = map[string][]*cluster.Pod{}
		}
		for network := range p.Networks {
			want.pods[p.Node][network] = append(want.pods[p.Node][network], p)
		}
	}
	return want, nil, nil
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// readZones reads every node's zone, concurrentReads at a time, and judges it; on a
// terminal a progress line counts the zones read.
func readZones(ctx context.Context, f *cmdutil.Factory, src zones, nodes []corev1.Node, want expectation) []cluster.ZoneReport {
	out := make([]cluster.ZoneReport, len(nodes))
	progress := f.ProgressLine()
	defer progress.Finish()
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, concurrentReads)
	var wg sync.WaitGroup
	for i := range nodes {
		if why := notReady(&nodes[i]); why != "" {
			// Its pod may still be Running (DaemonSet pods tolerate an unreachable
			// node), and an exec there would only wait for the timeout.
			out[i] = cluster.ZoneReport{Node: nodes[i].Name, FromZone: true, Err: errors.New(why)}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = judge(ctx, src, nodes[i].Name, want)
			mu.Lock()
			defer mu.Unlock()
			done++
			if progress.Terminal() {
				progress.Show(fmt.Sprintf("Reading the nodes' zones: %d/%d", done, len(nodes)))
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b cluster.ZoneReport) int { return strings.Compare(a.Node, b.Node) })
	return out
}

// notReady says why node is not Ready, "" when it is.
func notReady(node *corev1.Node) string {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return ""
			}
			return fmt.Sprintf("the node is not Ready (%s)", cmp.Or(c.Reason, string(c.Status)))
		}
	}
	return "the node has no Ready condition yet"
}

// judge reads node's zone and reports on every network and connect wanted.
func judge(ctx context.Context, src zones, node string, want expectation) cluster.ZoneReport {
	z := cluster.ZoneReport{Node: node, FromZone: true}
	ctx, cancel := context.WithTimeout(ctx, zoneReadTimeout)
	defer cancel()
	set, err := src.Rows(ctx, node)
	if err != nil {
		z.Err = err
		return z
	}
	idx := rows.NewIndex(set)
	z.Reported = true
	z.Report = make(map[string]string, len(want.networks)+len(want.connects))
	for _, n := range want.networks {
		pods := want.pods[node][n.Name]
		why := topology.NotProgrammed(idx, n, node, pods)
		if why != "" && len(pods) == 0 && want.dynamic[n.Name] && !topology.HasNetwork(idx, n, node) {
			// Not rendered on a node none of its pods needs: as it should be.
			why = ""
		}
		z.Report[n.Name] = why
	}
	for _, cnc := range want.connects {
		z.Report[cluster.ConnectZoneStatusKey(cnc)] = topology.ConnectNotProgrammed(idx, cnc)
	}
	return z
}
