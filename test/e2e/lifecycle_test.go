package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestDeletingANetworkOrANode removes a network and then a node: exactly their rows
// disappear from every remaining zone.
func TestDeletingANetworkOrANode(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	blue := layer3CUDN("blue-d", "blue-d", "10.60.0.0/16")
	green := layer2CUDN("green-d", "green-d", "10.61.0.0/16")
	ec.create(ctx, namespace("blue-d", map[string]string{"tenant": "blue-d"}), namespace("green-d", map[string]string{"tenant": "green-d"}), blue, green)
	for _, n := range ec.nodes {
		ec.create(ctx, pod("green-d", "p-"+n.name, n.name))
	}
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_blue-d", "cluster_udn_green-d"))

	if err := ec.c.Delete(ctx, blue); err != nil {
		t.Fatal(err)
	}
	gone := func(node string, res *topology.Result) error {
		for _, r := range res.Rows.Routers {
			if r.ExternalIDs["k8s.ovn.org/network"] == "cluster_udn_blue-d" {
				return fmt.Errorf("zone %s still compiles blue", node)
			}
		}
		return nil
	}
	ec.requireZonesMatch(ctx, gone)
	for _, n := range ec.nodes {
		out, err := n.nb.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Router", "external_ids:k8s.ovn.org/network=cluster_udn_blue-d")
		if err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("zone %s still has blue's routers %q (%v)", n.name, out, err)
		}
	}

	// A node leaves: the machine stops (kubelet, its pods and agent, OVS), its Node and
	// pods are deleted; the other zones drop its remote ports.
	leaving := ec.nodes[2]
	ec.stopNode(ctx, leaving)
	// No kubelet is left to confirm a graceful deletion: delete at once, as the pod
	// garbage collector does for a deleted node's pods.
	if err := ec.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "green-d", Name: "p-" + leaving.name}}, ctrlclient.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	if err := ec.c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: leaving.name}}); err != nil {
		t.Fatal(err)
	}
	ec.nodes = ec.nodes[:2]
	ec.requireZonesMatch(ctx, nil)
	for _, n := range ec.nodes {
		out, err := n.nb.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Router_Port", "external_ids:k8s.ovn.org/node="+leaving.name)
		if err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("zone %s still has ports of the departed node: %q (%v)", n.name, out, err)
		}
	}
}

// duplicateIdentities counts rows that share an identity in a zone's NB.
func duplicateIdentities(ctx context.Context, n *node) (int, error) {
	d, err := ovn.TakeDump(ctx, n.nbClient, n.name)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	dups := 0
	for _, rs := range d.Tables {
		for _, r := range rs {
			ids, _ := r["external_ids"].(map[string]string)
			id := ids["k8s.ovn.org/id"]
			if id == "" || ids["k8s.ovn.org/owner-controller"] != "ovnk" {
				continue
			}
			if seen[id] {
				dups++
			}
			seen[id] = true
		}
	}
	return dups, nil
}

// TestAgentKilledWhileApplyingConverges kills an agent's process with SIGKILL while it is
// writing a large change; kubelet restarts its container, and the zone must converge
// with no duplicate rows.
func TestAgentKilledWhileApplyingConverges(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The victim applies in transactions of at most 40 operations, so the change below
	// takes many transactions and the kill lands between two of them.
	victim := ec.nodes[0]
	ec.rollOut(ctx, victim, "--nb-max-operations=40")
	// The networks are created while the test watches the victim's NB, so the kill
	// lands while the change is still arriving.
	created := make(chan error, 1)
	go func() {
		for i := 0; i < 30; i++ {
			cudn := layer3CUDN(fmt.Sprintf("net-k%02d", i), fmt.Sprintf("none-%02d", i), fmt.Sprintf("10.%d.0.0/16", 100+i))
			if err := ec.c.Create(ctx, cudn); err != nil {
				created <- fmt.Errorf("create %s: %w", cudn.Name, err)
				return
			}
		}
		created <- nil
	}()
	routers := func(ctx context.Context) int {
		out, _ := victim.nb.NBCtl(ctx, "--bare", "--columns=name", "find", "Logical_Router")
		return len(strings.Fields(out))
	}
	// Kill it once some, but not all, of the 30 networks' 60 routers are in its NB.
	err := testenv.Eventually(ctx, 60*time.Second, "the agent part-way through the change", func(ctx context.Context) error {
		if n := routers(ctx); n <= 2 {
			return fmt.Errorf("%d routers", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := routers(ctx)
	ec.crashAgent(ctx, victim)
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if before >= 62 {
		t.Fatalf("the agent had written all %d routers before the kill: nothing was cut short", before)
	}
	ec.requireZonesMatch(ctx, nil)
	for _, n := range ec.nodes {
		dups, err := duplicateIdentities(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if dups != 0 {
			t.Errorf("zone %s has %d duplicated rows", n.name, dups)
		}
	}
}

// leaderOf returns the node whose agent reports holding the Lease.
func (ec *e2eCluster) leaderOf(ctx context.Context) (*node, error) {
	var leader *node
	err := testenv.Eventually(ctx, 60*time.Second, "an elected agent", func(ctx context.Context) error {
		for _, n := range ec.live() {
			resp, err := http.Get("http://" + n.host.HTTPAddress + "/metrics")
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), "\novnk_leader 1\n") {
				leader = n
				return nil
			}
		}
		return fmt.Errorf("no agent reports ovnk_leader 1")
	})
	return leader, err
}

// allocations is every annotation the leader writes, for comparing before and after.
func (ec *e2eCluster) allocations(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	var nodes corev1.NodeList
	var pods corev1.PodList
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	if err := ec.c.List(ctx, &nodes); err != nil {
		return nil, err
	}
	if err := ec.c.List(ctx, &pods); err != nil {
		return nil, err
	}
	if err := ec.c.List(ctx, &cudns); err != nil {
		return nil, err
	}
	for _, n := range nodes.Items {
		for _, a := range []string{cluster.AnnotationNodeID, cluster.AnnotationNodeSubnets, cluster.AnnotationNodeTransitSwitchPortIfAddr} {
			out["node/"+n.Name+"/"+a] = n.Annotations[a]
		}
	}
	for _, p := range pods.Items {
		out["pod/"+p.Namespace+"/"+p.Name] = p.Annotations[cluster.AnnotationPodNetworks]
	}
	for _, c := range cudns.Items {
		out["cudn/"+c.Name] = c.Annotations[cluster.AnnotationNetworkID] + " " + c.Annotations[cluster.AnnotationTunnelKeys]
	}
	return out, nil
}

// TestLeaderRestartKeepsEveryAllocation stops the elected agent's node: another takes over,
// every allocation stays as it was, and new objects get fresh values.
func TestLeaderRestartKeepsEveryAllocation(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ec.create(ctx, namespace("green-l", map[string]string{"tenant": "green-l"}), layer2CUDN("green-l", "green-l", "10.70.0.0/16"))
	for _, n := range ec.nodes {
		ec.create(ctx, pod("green-l", "p-"+n.name, n.name))
	}
	for _, n := range ec.nodes {
		ec.podIface(ctx, "green-l", "p-"+n.name, "green-l/green-l")
	}
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_green-l"))
	before, err := ec.allocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old, err := ec.leaderOf(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Its machine fails: the Lease is not released and must expire.
	ec.stopNode(ctx, old)
	next, err := ec.leaderOf(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next == old {
		t.Fatal("the killed agent is still the leader")
	}
	ec.create(ctx, pod("green-l", "late", next.name))
	late := ec.podIface(ctx, "green-l", "late", "green-l/green-l")
	after, err := ec.allocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed across the leader change: %q -> %q", k, v, after[k])
		}
		if strings.HasPrefix(k, "pod/") && strings.Contains(v, late.IPs[0].Addr().String()+"/") {
			t.Errorf("the new pod got %s, already held by %s", late.IPs[0], k)
		}
	}
}

// TestBadNetworkIsReportedAndOthersWork creates a CUDN whose subnet overlaps the cluster
// default network, then a good one: the bad one is refused in its status and a Warning
// event, and the good one is programmed in every zone.
func TestBadNetworkIsReportedAndOthersWork(t *testing.T) {
	ec := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ec.create(ctx,
		namespace("bad-b", map[string]string{"tenant": "bad-b"}),
		namespace("good-b", map[string]string{"tenant": "good-b"}),
		layer3CUDN("bad-b", "bad-b", "10.244.128.0/17"),
	)
	ec.create(ctx, layer3CUDN("good-b", "good-b", "10.80.0.0/16"), pod("good-b", "p", ec.nodes[0].name))
	ec.requireZonesMatch(ctx, ec.allCompiled("cluster_udn_good-b"))

	err := testenv.Eventually(ctx, 60*time.Second, "the bad network's status and event", func(ctx context.Context) error {
		var cudn ovnkv1.ClusterUserDefinedNetwork
		if err := ec.c.Get(ctx, types.NamespacedName{Name: "bad-b"}, &cudn); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(cudn.Status.Conditions, "NetworkCreated")
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "10.244.128.0/17") || !strings.Contains(cond.Message, "10.244.0.0/16") {
			return fmt.Errorf("NetworkCreated = %+v", cond)
		}
		var events eventsv1.EventList
		if err := ec.c.List(ctx, &events); err != nil {
			return err
		}
		var core corev1.EventList
		if err := ec.c.List(ctx, &core); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == "bad-b" && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		for _, e := range core.Items {
			if e.InvolvedObject.Name == "bad-b" && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("no Warning event about bad-b")
	})
	if err != nil {
		t.Fatal(err)
	}
}
