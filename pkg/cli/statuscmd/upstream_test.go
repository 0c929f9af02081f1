package statuscmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind/clusterkindtest"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/test/testenv"
)

// upstreamCluster creates a cluster run by upstream OVN-Kubernetes: its ovnkube-node
// DaemonSet in namespace ovn-kubernetes, with a Ready pod on ups-a, a pod on ups-b
// whose ovnkube-controller crash-loops, and none on ups-c; no Lease and no ovnk
// annotation. CUDN blue is allocated (NetworkCreated and NetworkAllocationSucceeded
// True); UDN tenant-red/red failed its allocation on ups-b, as upstream's cluster
// manager says.
func upstreamCluster(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	ensureNamespace(ctx, t, c, "ovn-kubernetes")
	ensureNamespace(ctx, t, c, "tenant-red")
	ds := clusterkindtest.Upstream("ovn-kubernetes", "")
	blue, red := layer3CUDN("blue", "10.20.0.0/16"), layer3UDN("tenant-red", "red", "10.30.0.0/16")
	clitest.CreateObjects(ctx, t, c, ds, nodeObject("ups-a", ""), nodeObject("ups-b", ""), nodeObject("ups-c", ""), blue, red)
	for node, ready := range map[string]bool{"ups-a": true, "ups-b": false} {
		pod := clusterkindtest.Pod(ds, node)
		pod.GenerateName, pod.Name = "", "ovnkube-node-"+strings.TrimPrefix(node, "ups-")
		clitest.CreateObjects(ctx, t, c, pod)
		clusterkindtest.Running(pod, ready)
		if !ready {
			for i := range pod.Status.ContainerStatuses {
				if cs := &pod.Status.ContainerStatuses[i]; cs.Name == "ovnkube-controller" {
					cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
				} else {
					cs.Ready = true
				}
			}
		}
		if err := c.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	created := metav1.Condition{Type: ovnkv1.ConditionNetworkCreated, Status: metav1.ConditionTrue, Reason: "NetworkAttachmentDefinitionCreated",
		Message: "NetworkAttachmentDefinition has been created", LastTransitionTime: metav1.NewTime(now)}
	allocated := metav1.Condition{Type: netview.ConditionNetworkAllocationSucceeded, Status: metav1.ConditionTrue, Reason: "NetworkAllocationSucceeded",
		Message: "Network allocation succeeded for all synced nodes.", LastTransitionTime: metav1.NewTime(now)}
	failed := metav1.Condition{Type: netview.ConditionNetworkAllocationSucceeded, Status: metav1.ConditionFalse, Reason: "InternalError",
		Message: "Network allocation failed for at least one node: ups-b, check UDN events for more info.", LastTransitionTime: metav1.NewTime(now)}
	blue.Status.Conditions = []metav1.Condition{created, allocated}
	red.Status.Conditions = []metav1.Condition{created, failed}
	for _, obj := range []client.Object{blue, red} {
		if err := c.Status().Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUpstream runs status on upstreamCluster: it names the cluster's kind, shows each
// node's ovnkube-node pod (ready, crash-looping, missing), and, as no zone can be read,
// each network's state from its conditions with no per-node count; the JSON says the same, and the goldens
// (testdata/status-upstream-*.golden) pin the tables.
func TestUpstream(t *testing.T) {
	kube := testenv.SharedKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	upstreamCluster(ctx, t, clitest.NewClient(t, kube))
	run := func(t *testing.T, term clitest.Terminal, args ...string) string {
		t.Helper()
		c := newTestCommand(kube, "ovnk-system", func() time.Time { return now }, term)
		if err := c.run(ctx, args...); err != nil {
			t.Fatalf("status %v: %v\n%s", args, err, c.errOut.String())
		}
		// No kubelet runs the nodes, none of which is Ready, so no zone can be read:
		// the conditions decide, and one warning says why.
		if w := c.errOut.String(); strings.Count(w, "Warning: ") != 1 ||
			!strings.Contains(w, "Warning: cannot read the nodes' zones, so readiness comes from the networks' conditions: the node has no Ready condition yet") {
			t.Errorf("standard error: %s\nwant one warning that the zones could not be read", w)
		}
		return c.out.String()
	}
	var r Report
	if err := json.Unmarshal([]byte(run(t, clitest.Terminal{}, "-o", "json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Cluster == nil || r.Cluster.Kind != clusterkind.Upstream || r.Cluster.Namespace != "ovn-kubernetes" || r.Ready {
		t.Errorf("cluster %+v, ready %t; want upstream's DaemonSet in ovn-kubernetes, not ready", r.Cluster, r.Ready)
	}
	nodes := map[string]NodeStatus{}
	for _, n := range r.Nodes {
		nodes[n.Node] = n
	}
	if a := nodes["ups-a"]; !a.Agent || !a.Ready || a.Pod != "ovnkube-node-a" {
		t.Errorf("ups-a: %+v; want its Ready pod ovnkube-node-a", a)
	}
	if b := nodes["ups-b"]; b.Ready || b.NotReadyReason != "pod ovnkube-node-b is not Ready: ovnkube-controller CrashLoopBackOff" {
		t.Errorf("ups-b: %+v; want not ready, naming the crash-looping container", b)
	}
	if c := nodes["ups-c"]; c.Agent || c.NotReadyReason != "no pod of DaemonSet ovn-kubernetes/ovnkube-node on the node" {
		t.Errorf("ups-c: %+v; want no agent, naming the DaemonSet", c)
	}
	networks := map[string]NetworkStatus{}
	for _, n := range r.Networks {
		networks[n.Name] = n
	}
	if b := networks["blue"]; b.Status != netview.StatusReady || !b.FromConditions || b.TotalNodes != 0 {
		t.Errorf("blue: %+v; want Ready from its conditions", b)
	}
	if red := networks["tenant-red/red"]; red.Status != netview.StatusPending || !red.FromConditions ||
		!strings.Contains(red.Reason, "Network allocation failed for at least one node: ups-b") {
		t.Errorf("tenant-red/red: %+v; want Pending with the allocation's failure", red)
	}
	clitest.Goldens(t, "status-upstream", []clitest.GoldenTerminal{clitest.Piped80, clitest.Colour80, clitest.NoColour80}, func(t *testing.T, term clitest.Terminal) string {
		return run(t, term)
	})
}
