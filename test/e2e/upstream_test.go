package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/testenv"
)

func layer3UDN(ns, name, cidr string) *ovnkv1.UserDefinedNetwork {
	return &ovnkv1.UserDefinedNetwork{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: ovnkv1.UserDefinedNetworkSpec{Topology: ovnkv1.NetworkTopologyLayer3, Layer3: &ovnkv1.Layer3Config{
			Role: ovnkv1.NetworkRolePrimary, Subnets: []ovnkv1.Layer3Subnet{{CIDR: ovnkv1.CIDR(cidr)}},
		}},
	}
}

// podConnect is a ClusterNetworkConnect of the pod networks of the
// ClusterUserDefinedNetworks labelled with labels.
func podConnect(name string, labels map[string]string, cidr string, prefix int32) *ovnkv1.ClusterNetworkConnect {
	return &ovnkv1.ClusterNetworkConnect{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: ovnkv1.NetworkSelectors{{
				NetworkSelectionType: ovnkv1.ClusterUserDefinedNetworks,
				ClusterUserDefinedNetworkSelector: &ovnkv1.ClusterUserDefinedNetworkSelector{
					NetworkSelector: metav1.LabelSelector{MatchLabels: labels},
				},
			}},
			ConnectSubnets: []ovnkv1.ConnectSubnet{{CIDR: ovnkv1.ConnectCIDR(cidr), NetworkPrefix: prefix}},
			Connectivity:   []ovnkv1.ConnectivityType{ovnkv1.ConnectivityPodNetwork},
		},
	}
}

// ovnkMarks are the kinds that carry what ovnk writes beyond upstream's keys: the
// agents' and leader's ovnk.io/* annotations and labels, and, on the networks, the ids
// upstream keeps on the NAD alone.
var ovnkMarks = []struct {
	gvk schema.GroupVersionKind
	// ids says the objects' k8s.ovn.org/network-id and tunnel-keys go too.
	ids bool
}{
	{schema.GroupVersionKind{Version: "v1", Kind: "NodeList"}, false},
	{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "LeaseList"}, false},
	{schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinitionList"}, false},
	{schema.GroupVersionKind{Group: "k8s.ovn.org", Version: "v1", Kind: "UserDefinedNetworkList"}, true},
	{schema.GroupVersionKind{Group: "k8s.ovn.org", Version: "v1", Kind: "ClusterUserDefinedNetworkList"}, true},
	{schema.GroupVersionKind{Group: "k8s.ovn.org", Version: "v1", Kind: "ClusterNetworkConnectList"}, false},
}

// ovnkKeys are the keys of m that an upstream cluster would not have.
func ovnkKeys(m map[string]string, ids bool) []string {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, "ovnk.io/") || ids && (k == cluster.AnnotationNetworkID || k == cluster.AnnotationTunnelKeys) {
			keys = append(keys, k)
		}
	}
	return keys
}

// stripOvnk removes, with merge patches (kubelet keeps updating its Node), every mark
// of ovnkMarks, and checks none is left.
func (ec *e2eCluster) stripOvnk(ctx context.Context) {
	ec.t.Helper()
	for _, kind := range ovnkMarks {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kind.gvk)
		if err := ec.c.List(ctx, list); err != nil {
			ec.t.Fatalf("list %s: %v", kind.gvk.Kind, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			drop := func(keys []string) map[string]any {
				m := map[string]any{}
				for _, k := range keys {
					m[k] = nil
				}
				return m
			}
			labels, annotations := ovnkKeys(obj.GetLabels(), false), ovnkKeys(obj.GetAnnotations(), kind.ids)
			if len(labels)+len(annotations) == 0 {
				continue
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": drop(labels), "annotations": drop(annotations)}})
			if err != nil {
				ec.t.Fatal(err)
			}
			if err := ec.c.Patch(ctx, obj, ctrlclient.RawPatch(types.MergePatchType, patch)); err != nil {
				ec.t.Fatalf("strip %v from %s %s: %v", slices.Concat(labels, annotations), obj.GetKind(), obj.GetName(), err)
			}
		}
		if err := ec.c.List(ctx, list); err != nil {
			ec.t.Fatal(err)
		}
		for _, obj := range list.Items {
			if left := slices.Concat(ovnkKeys(obj.GetLabels(), false), ovnkKeys(obj.GetAnnotations(), kind.ids)); len(left) > 0 {
				ec.t.Fatalf("%s %s still has %v", kind.gvk.Kind, obj.GetName(), left)
			}
		}
	}
}

// requireNADIDs checks that the networks' NADs carry the network id, as upstream's do,
// so stripping it from the networks leaves it where upstream keeps it.
func (ec *e2eCluster) requireNADIDs(ctx context.Context, nads ...types.NamespacedName) {
	ec.t.Helper()
	for _, key := range nads {
		err := testenv.Eventually(ctx, 60*time.Second, "network id on NAD "+key.String(), func(ctx context.Context) error {
			nad := &unstructured.Unstructured{}
			nad.SetGroupVersionKind(schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"})
			if err := ec.c.Get(ctx, key, nad); err != nil {
				return err
			}
			if nad.GetAnnotations()[cluster.AnnotationNetworkID] == "" {
				return fmt.Errorf("annotations %v", nad.GetAnnotations())
			}
			return nil
		})
		if err != nil {
			ec.t.Fatal(err)
		}
	}
}

// conditionAllocated is the condition upstream's cluster manager keeps on a network
// object once every node got the network's allocations; ovnk's leader does not set it.
const conditionAllocated = "NetworkAllocationSucceeded"

// publishAllocated sets, on every network object, the NetworkAllocationSucceeded
// condition as upstream's cluster manager does; NetworkCreated, which both set, must be
// True already.
func (ec *e2eCluster) publishAllocated(ctx context.Context) {
	ec.t.Helper()
	var udns ovnkv1.UserDefinedNetworkList
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	if err := ec.c.List(ctx, &udns); err != nil {
		ec.t.Fatal(err)
	}
	if err := ec.c.List(ctx, &cudns); err != nil {
		ec.t.Fatal(err)
	}
	for i := range udns.Items {
		ec.setAllocated(ctx, &udns.Items[i], &udns.Items[i].Status.Conditions)
	}
	for i := range cudns.Items {
		ec.setAllocated(ctx, &cudns.Items[i], &cudns.Items[i].Status.Conditions)
	}
}

func (ec *e2eCluster) setAllocated(ctx context.Context, obj ctrlclient.Object, conds *[]metav1.Condition) {
	ec.t.Helper()
	if !meta.IsStatusConditionTrue(*conds, ovnkv1.ConditionNetworkCreated) {
		ec.t.Fatalf("%s has no NetworkCreated=True: %+v", obj.GetName(), *conds)
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: conditionAllocated, Status: metav1.ConditionTrue, Reason: conditionAllocated,
		Message: "Network allocation succeeded for all synced nodes.",
	})
	if err := ec.c.Status().Update(ctx, obj); err != nil {
		ec.t.Fatalf("set %s on %s: %v", conditionAllocated, obj.GetName(), err)
	}
}

// verdictOf is what a trace's forward path ended with, for comparing two traces.
func verdictOf(res *trace.Result) string {
	v := res.Forward.Verdict
	return fmt.Sprintf("%s pod=%q zone=%q", v.Kind, v.Pod, v.Zone)
}

// TestUpstreamShapedCluster builds zones with the agents, then makes the cluster look
// like upstream OVN-Kubernetes in interconnect mode — an ovnkube-node DaemonSet whose
// nb-ovsdb container serves each node's zone NB, no agent, no ovnk.io/* marks, the
// networks' ids on their NADs alone — and runs every read command through the real
// kubectl with no settings file: the zones are found and read through ovnkube-node, and
// the answers are those the NBs hold and those given before.
func TestUpstreamShapedCluster(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n1, n2 := ec.nodes[0].name, ec.nodes[1].name
	// The connect selects its networks by a label of the user's, as on any upstream
	// cluster (kubectl ovnk connect's own is an ovnk.io/ label, which goes below).
	l2, c3 := layer2CUDN("up-l2", "up-l2", "10.141.0.0/16"), layer3CUDN("up-c3", "up-c3", "10.142.0.0/16")
	connected := map[string]string{"connect-group": "up"}
	l2.Labels, c3.Labels = connected, connected
	ec.create(ctx,
		namespace("up-l3", nil),
		namespace("up-l2", map[string]string{"tenant": "up-l2"}),
		namespace("up-c3", map[string]string{"tenant": "up-c3"}),
		layer3UDN("up-l3", "blue", "10.140.0.0/16"),
		l2, c3,
		podConnect("up-conn", connected, "192.168.0.0/16", 24),
		pod("up-l3", "a", n1), pod("up-l3", "b", n2),
		pod("up-l2", "a", n1), pod("up-l2", "b", n2),
	)
	ec.podIface(ctx, "up-l3", "a", "up-l3/blue")
	ec.podIface(ctx, "up-l3", "b", "up-l3/blue")
	ec.podIface(ctx, "up-l2", "a", "up-l2/up-l2")
	ec.podIface(ctx, "up-l2", "b", "up-l2/up-l2")
	ec.requireZonesMatch(ctx, ec.allCompiled("up-l3_blue", "cluster_udn_up-l2", "cluster_udn_up-c3"))
	ec.requireNADIDs(ctx, types.NamespacedName{Namespace: "up-l3", Name: "blue"}, types.NamespacedName{Namespace: "up-l2", Name: "up-l2"})

	// What packets gave with the agents: delivered within each network, not delivered
	// from the Layer3 network to the Layer2 one.
	traces := [][]string{{"up-l3/a", "up-l3/b"}, {"up-l2/a", "up-l2/b"}, {"up-l3/a", "up-l2/b"}}
	before := map[string]string{}
	for _, tr := range traces {
		before[strings.Join(tr, " ")] = verdictOf(ec.traceJSON(ctx, tr...))
	}
	for key, want := range map[string]string{
		"up-l3/a up-l3/b": fmt.Sprintf("%s pod=%q zone=%q", trace.Delivered, "up-l3/b", n2),
		"up-l2/a up-l2/b": fmt.Sprintf("%s pod=%q zone=%q", trace.Delivered, "up-l2/b", n2),
	} {
		if before[key] != want {
			t.Fatalf("with the agents, trace %s: %s, want %s", key, before[key], want)
		}
	}
	if v := before["up-l3/a up-l2/b"]; strings.HasPrefix(v, string(trace.Delivered)+" ") {
		t.Fatalf("with the agents, trace up-l3/a up-l2/b: %s, want not delivered (the networks are not connected)", v)
	}

	start := time.Now()
	if err := ec.s.ServeZonesAsUpstream(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ec.s.RemoveAgent(ctx); err != nil {
		t.Fatal(err)
	}
	ec.stripOvnk(ctx)
	ec.publishAllocated(ctx)
	t.Logf("the cluster looks upstream's after %s", time.Since(start).Round(time.Second))
	// No settings at all: no file named, none where the plugin looks by default.
	ec.pluginEnv = []string{"OVNK_PLUGIN_CONFIG=", "XDG_CONFIG_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}

	t.Run("topology and routes are the NB's", func(t *testing.T) {
		for _, n := range ec.nodes[:2] {
			snap, err := ovn.Snapshot(ctx, n.nbClient)
			if err != nil {
				t.Fatal(err)
			}
			// The relay in nb-ovsdb serves the zone once it has caught up with the node's NB.
			awaitTopology(ctx, t, ec, "up-l2", n.name, "topology through "+n.name+"'s nb-ovsdb")
			for _, net := range []struct{ name, ovnName string }{{"up-l3/blue", "up-l3_blue"}, {"up-l2", "cluster_udn_up-l2"}} {
				requireTopologyShowsZone(ctx, t, ec, n.name, net.name, net.ovnName, snap)
				requireRoutesShowZone(ctx, t, ec, n.name, net.name, net.ovnName, snap)
			}
		}
	})

	t.Run("trace gives the verdicts it gave with the agents", func(t *testing.T) {
		for _, tr := range traces {
			key := strings.Join(tr, " ")
			if got := verdictOf(ec.traceJSON(ctx, tr...)); got != before[key] {
				t.Errorf("trace %s: %s; with the agents it was %s", key, got, before[key])
			}
		}
	})

	t.Run("network list, describe and connections name the networks", func(t *testing.T) {
		names := strings.Fields(ec.must(ctx, "network", "list", "-A", "-o", "jsonpath={.items[*].metadata.name}"))
		for _, want := range []string{"blue", "up-l2", "up-c3"} {
			if !slices.Contains(names, want) {
				t.Errorf("network list names %v, not %s", names, want)
			}
		}
		// No node reports on its zone: each node's zone is read instead.
		lines := strings.Split(ec.must(ctx, "network", "list", "-A"), "\n")
		for _, net := range []string{"up-l3/blue", "up-l2", "up-c3"} {
			requireRow(t, "network list", lines, net, "3/3", "Ready")
		}
		for _, net := range []string{"up-l3/blue", "up-l2"} {
			out := ec.must(ctx, "network", "describe", net)
			if !strings.Contains(out, "Name:") || !strings.Contains(out, strings.TrimPrefix(net, "up-l3/")) || !strings.Contains(out, "3/3 ready (read from each node's zone") {
				t.Errorf("network describe %s does not name it ready on 3/3 nodes, read from their zones:\n%s", net, out)
			}
		}
		conns := ec.must(ctx, "connections")
		for _, want := range []string{"up-conn", "up-l2", "up-c3"} {
			if !strings.Contains(conns, want) {
				t.Errorf("connections lacks %q:\n%s", want, conns)
			}
		}
		requireRow(t, "connections", strings.Split(conns, "\n"), "up-conn", "3/3")
		// The networks' ids are on their NADs alone: the blocks are found by them.
		describe := ec.must(ctx, "connections", "describe", "up-conn")
		for _, net := range []string{"up-l2", "up-c3"} {
			blocks := slices.ContainsFunc(strings.Split(describe, "\n"), func(line string) bool {
				f := strings.Fields(line)
				return len(f) > 0 && f[0] == net && strings.Contains(line, "192.168.")
			})
			if !blocks {
				t.Errorf("connections describe up-conn shows no block of %s:\n%s", net, describe)
			}
		}
	})

	t.Run("version and status name the cluster kind and its nodes", func(t *testing.T) {
		want := clusterkind.Cluster{Kind: clusterkind.Upstream, Namespace: sandbox.UpstreamNamespace, DaemonSet: sandbox.UpstreamDaemonSet, Interconnect: true}
		var version struct {
			Cluster *clusterkind.Cluster `json:"cluster"`
		}
		if err := json.Unmarshal([]byte(ec.must(ctx, "version", "-o", "json")), &version); err != nil {
			t.Fatal(err)
		}
		if version.Cluster == nil || *version.Cluster != want {
			t.Errorf("version says the cluster is %+v, want %+v", version.Cluster, want)
		}
		var status struct {
			Cluster *clusterkind.Cluster `json:"cluster"`
			Nodes   []struct {
				Node  string `json:"node"`
				Ready bool   `json:"ready"`
				Pod   string `json:"pod"`
			} `json:"nodes"`
			Networks []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"networks"`
		}
		out := ec.must(ctx, "status", "-o", "json")
		if err := json.Unmarshal([]byte(out), &status); err != nil {
			t.Fatalf("status -o json: %v\n%s", err, out)
		}
		if status.Cluster == nil || *status.Cluster != want {
			t.Errorf("status says the cluster is %+v, want %+v", status.Cluster, want)
		}
		var nodes []string
		for _, n := range status.Nodes {
			nodes = append(nodes, n.Node)
			if !n.Ready || !strings.HasPrefix(n.Pod, sandbox.UpstreamDaemonSet+"-") {
				t.Errorf("status: node %+v, want ready with its %s pod", n, sandbox.UpstreamDaemonSet)
			}
		}
		if !slices.Equal(nodes, sandbox.NodeNames()) {
			t.Errorf("status names nodes %v, want %v", nodes, sandbox.NodeNames())
		}
		var ready []string
		for _, n := range status.Networks {
			if n.Status == "Ready" {
				ready = append(ready, n.Name)
			}
		}
		slices.Sort(ready)
		if want := []string{"up-c3", "up-l2", "up-l3/blue"}; !slices.Equal(ready, want) {
			t.Errorf("status: ready networks %v, want %v\n%s", ready, want, out)
		}
		if text := ec.must(ctx, "status"); !strings.Contains(text, "Cluster: "+want.String()) {
			t.Errorf("status does not name the cluster:\n%s", text)
		}
	})

	t.Run("upgrade-status finds the Layer2 network", func(t *testing.T) {
		var report l2upgrade.Report
		out := ec.must(ctx, "upgrade-status", "-o", "json")
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatalf("upgrade-status -o json: %v\n%s", err, out)
		}
		i := slices.IndexFunc(report.Networks, func(n l2upgrade.NetworkReport) bool { return n.Network == "cluster_udn_up-l2" })
		if i < 0 {
			t.Fatalf("upgrade-status does not assess up-l2:\n%s", out)
		}
		if n := report.Networks[i]; len(n.Legacy) != 0 || len(n.TransitRouter) != len(ec.nodes) || !report.Complete {
			t.Errorf("up-l2: %+v, complete %t; want on the transit router on every node, the upgrade complete", n, report.Complete)
		}
	})

	t.Run("a zone missing a pod's port or the connect router is not ready", func(t *testing.T) {
		// Upstream's agent is not there to put them back: the zones stay as broken.
		n2, n3 := ec.nodes[1], ec.nodes[2]
		l2Switch, podPort := "cluster_udn_up.l2_ovn_layer2_switch", "up.l2.up.l2_up-l2_b"
		if _, err := n2.nb.NBCtl(ctx, "lsp-del", podPort); err != nil {
			t.Fatal(err)
		}
		if _, err := n3.nb.NBCtl(ctx, "lr-del", "connect_router_up-conn"); err != nil {
			t.Fatal(err)
		}
		// The relays in nb-ovsdb follow the nodes' NBs.
		err := testenv.Eventually(ctx, 60*time.Second, "the relays serve the broken zones", func(ctx context.Context) error {
			out := ec.must(ctx, "connections")
			if !rowHas(out, "up-conn", "2/3") {
				return fmt.Errorf("connections does not count 2/3 yet:\n%s", out)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(ec.must(ctx, "network", "list", "-A"), "\n")
		requireRow(t, "network list", lines, "up-l2", "2/3", "Pending")
		requireRow(t, "network list", lines, "up-l3/blue", "3/3", "Ready")
		requireRow(t, "network list", lines, "up-c3", "3/3", "Ready")
		wantWhy := fmt.Sprintf("pod up-l2/b has no port on switch %s", l2Switch)
		if out := ec.must(ctx, "network", "describe", "up-l2"); !strings.Contains(out, n2.name) || !strings.Contains(strings.Join(strings.Fields(out), " "), wantWhy) {
			t.Errorf("network describe up-l2 does not say %s: %s:\n%s", n2.name, wantWhy, out)
		}
		if out := ec.must(ctx, "connections", "describe", "up-conn"); !strings.Contains(strings.Join(strings.Fields(out), " "), "its zone has no router connect_router_up-conn") {
			t.Errorf("connections describe up-conn does not say why %s is not ready:\n%s", n3.name, out)
		}
	})
}

// rowHas reports whether table has a row of name (its first field) with each of cells.
func rowHas(table, name string, cells ...string) bool {
	return slices.ContainsFunc(strings.Split(table, "\n"), func(line string) bool {
		f := strings.Fields(line)
		return len(f) > 0 && f[0] == name && !slices.ContainsFunc(cells, func(c string) bool { return !slices.Contains(f, c) })
	})
}

// awaitTopology waits until `topology network --node node` shows routers: a relay
// serving the zone (what, in the error) has caught up with the NB it relays.
func awaitTopology(ctx context.Context, t *testing.T, ec *e2eCluster, network, node, what string) {
	t.Helper()
	err := testenv.Eventually(ctx, 60*time.Second, what, func(ctx context.Context) error {
		r := ec.ovnk(ctx, nil, "topology", network, "--node", node, "-o", "json")
		if r.err != nil {
			return fmt.Errorf("%v: %s", r.err, r.stderr)
		}
		var view struct {
			Routers []json.RawMessage `json:"routers"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &view); err != nil || len(view.Routers) == 0 {
			return fmt.Errorf("no routers yet (%v): %s", err, r.stdout)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
