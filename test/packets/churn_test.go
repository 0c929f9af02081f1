package packets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// churnPods is how many pods TestPodChurnLeavesNothing creates and deletes, spread over
// the three nodes and three networks (blue's Layer3, green's Layer2, the default
// network alone), churnBatch at a time: two cores starting 200 pods at once slow the
// API server past the leases of the tests running beside this one.
const (
	churnPods  = 200
	churnBatch = 50
)

// churnSettle bounds the wait for a node to be back as it was: kubelet removes a
// deleted pod's dead containers and sandboxes in its garbage collection, every minute.
const churnSettle = 5 * time.Minute

// TestPodChurnLeavesNothing creates pods through the API server until churnPods run on
// the three nodes' kubelets, wired by ovnk-cni, then deletes them all: every node must be
// left as it was before, with no br-int port, no veth, no logical switch port in its zone
// and no container of a deleted pod, and pods created afterwards get the addresses pods
// created before got, on every network and node (the leader released the others).
func TestPodChurnLeavesNothing(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r.networks(ctx)
	r.mustRun(ctx, "ovnk", "status", "--wait", "--timeout", "2m")
	before := map[string]churnNode{}
	for _, n := range r.s.Nodes {
		before[n.Name] = r.churnNode(ctx, n.Name)
	}
	// A pod per network and node takes the lowest free address there; after the churn,
	// new ones must take the same.
	first := r.churnProbes(ctx)

	var refs []string
	namespaces := []string{rigBlue, rigGreen, metav1.NamespaceDefault}
	nodes := sandbox.NodeNames()
	begin := time.Now()
	for i := range churnPods {
		// Every node gets pods of every network.
		ns, name, node := namespaces[i%len(namespaces)], fmt.Sprintf("churn-%d", i), nodes[(i/len(namespaces))%len(nodes)]
		if err := r.createPod(ctx, ns, name, node); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ns+"/"+name)
		if len(refs)%churnBatch == 0 || len(refs) == churnPods {
			r.waitRunning(ctx, refs, 10*time.Minute)
		}
	}
	t.Logf("%d pods running on %d nodes %s after the first create", len(refs), len(nodes), time.Since(begin).Round(100*time.Millisecond))
	during := r.churnNode(ctx, nodes[0])
	if len(during.ports) <= len(before[nodes[0]].ports) || len(during.veths) <= len(before[nodes[0]].veths) {
		t.Fatalf("with %d pods running, %s has %d pod ports and %d veths, as many as before: the check sees nothing", len(refs), nodes[0], len(during.ports), len(during.veths))
	}

	begin = time.Now()
	for batch := range slices.Chunk(refs, churnBatch) {
		r.deletePods(ctx, batch)
	}
	t.Logf("%d pods gone %s after the delete", len(refs), time.Since(begin).Round(100*time.Millisecond))
	for _, n := range r.s.Nodes {
		want := before[n.Name]
		var got churnNode
		err := testenv.Eventually(ctx, churnSettle, n.Name+" back as it was before the pods", func(ctx context.Context) error {
			got = r.churnNode(ctx, n.Name)
			return got.diff(want)
		})
		if err != nil {
			t.Error(err)
		}
	}
	for ref, addr := range r.churnProbes(ctx) {
		if addr != first[ref] {
			t.Errorf("pod %s, created after the churn, got %s; before the churn it got %s: an address was not released", ref, addr, first[ref])
		}
	}
}

// churnProbes creates a pod per network and node, reads each one's address on its
// primary network, deletes them, and returns the addresses by pod.
func (r *rig) churnProbes(ctx context.Context) map[string]netip.Addr {
	r.tb.Helper()
	addrs := map[string]netip.Addr{}
	var refs []string
	for _, ns := range []string{rigBlue, rigGreen, metav1.NamespaceDefault} {
		iface := rigUDN
		if ns == metav1.NamespaceDefault {
			iface = "eth0"
		}
		for i, node := range sandbox.NodeNames() {
			ref := fmt.Sprintf("%s/probe-%d", ns, i+1)
			name := strings.TrimPrefix(ref, ns+"/")
			if err := r.createPod(ctx, ns, name, node); err != nil {
				r.fatalf("%v", err)
			}
			err := testenv.Eventually(ctx, 2*time.Minute, "pod "+ref+" wired", func(ctx context.Context) error {
				var err error
				addrs[ref], err = r.podAddress(ctx, ref, iface)
				return err
			})
			if err != nil {
				r.fatalf("%v", err)
			}
			refs = append(refs, ref)
		}
	}
	r.deletePods(ctx, refs)
	return addrs
}

// churnNode is what a node holds for pods: br-int's pod ports (by interface name),
// its veths, its zone's logical switch ports, and containerd's containers.
type churnNode struct {
	ports, veths, lsps []string
	containers         int
}

// diff says how the node differs from want, nil when it does not.
func (c churnNode) diff(want churnNode) error {
	var problems []string
	for _, d := range []struct {
		what      string
		got, want []string
	}{{"br-int pod ports", c.ports, want.ports}, {"veths", c.veths, want.veths}, {"logical switch ports", c.lsps, want.lsps}} {
		if !slices.Equal(d.got, d.want) {
			problems = append(problems, fmt.Sprintf("%s %v, want %v", d.what, leftOver(d.got, d.want), d.want))
		}
	}
	if c.containers != want.containers {
		problems = append(problems, fmt.Sprintf("%d containers, want %d", c.containers, want.containers))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// leftOver lists what got has and want has not (at most ten).
func leftOver(got, want []string) []string {
	var out []string
	for _, g := range got {
		if !slices.Contains(want, g) && len(out) < 10 {
			out = append(out, g)
		}
	}
	return out
}

// churnNode reads what node holds for pods.
func (r *rig) churnNode(ctx context.Context, node string) churnNode {
	r.tb.Helper()
	on := sandbox.Target{Node: node}
	out, err := r.exec(ctx, on, "ovs-vsctl", "--format=json", "--columns=name,external_ids", "list", "Interface")
	if err != nil {
		r.fatalf("%v", err)
	}
	var c churnNode
	c.ports = podInterfaces(r.tb, out)
	links, err := r.exec(ctx, on, "ip", "-o", "link", "show", "type", "veth")
	if err != nil {
		r.fatalf("%v", err)
	}
	for _, line := range strings.Split(links, "\n") {
		// "12: eth1@if13: <…" — the node's uplink is the one veth a node has of its own.
		if f := strings.Fields(line); len(f) > 1 {
			if name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@"); name != "eth1" {
				c.veths = append(c.veths, name)
			}
		}
	}
	lsps, err := r.exec(ctx, on, "ovn-nbctl", "--bare", "--columns=name", "list", "Logical_Switch_Port")
	if err != nil {
		r.fatalf("%v", err)
	}
	c.lsps = strings.Fields(lsps)
	slices.Sort(c.lsps)
	n, err := r.node(node)
	if err != nil {
		r.fatalf("%v", err)
	}
	containers, err := r.s.ContainerCount(ctx, n)
	if err != nil {
		r.fatalf("%v", err)
	}
	c.containers = containers
	return c
}

// podInterfaces lists, from `ovs-vsctl --format=json list Interface`, the interfaces
// the CNI plugin plugged: those naming a sandbox (a pod's container).
func podInterfaces(tb testing.TB, out string) []string {
	tb.Helper()
	var table struct {
		Data [][]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &table); err != nil {
		tb.Fatalf("ovs-vsctl list Interface: %v", err)
	}
	var names []string
	for _, row := range table.Data {
		var name string
		var ids []any // ["map", [[key, value], …]]
		if len(row) != 2 || json.Unmarshal(row[0], &name) != nil || json.Unmarshal(row[1], &ids) != nil {
			tb.Fatalf("ovs-vsctl list Interface: unexpected row %s", row)
		}
		if strings.Contains(fmt.Sprint(ids), "sandbox") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// waitRunning waits until every pod of refs ("namespace/name") is Ready.
func (r *rig) waitRunning(ctx context.Context, refs []string, timeout time.Duration) {
	r.tb.Helper()
	err := testenv.Eventually(ctx, timeout, fmt.Sprintf("%d pods to be ready", len(refs)), func(ctx context.Context) error {
		ready, notReady := 0, ""
		for _, ns := range namespacesOf(refs) {
			pods, err := r.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, p := range pods.Items {
				if !slices.Contains(refs, p.Namespace+"/"+p.Name) {
					continue
				}
				if sandbox.PodReady(&p) {
					ready++
				} else if notReady == "" {
					notReady = p.Namespace + "/" + p.Name + " (" + string(p.Status.Phase) + ")"
				}
			}
		}
		if ready < len(refs) {
			return fmt.Errorf("%d of %d ready; not yet: %s", ready, len(refs), notReady)
		}
		return nil
	})
	if err != nil {
		r.fatalf("%v", err)
	}
}

// deletePods deletes the pods of refs and waits until they are gone.
func (r *rig) deletePods(ctx context.Context, refs []string) {
	r.tb.Helper()
	for _, ref := range refs {
		ns, name, _ := strings.Cut(ref, "/")
		if err := r.kube.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			r.fatalf("delete pod %s: %v", ref, err)
		}
	}
	err := testenv.Eventually(ctx, 10*time.Minute, fmt.Sprintf("%d pods to be gone", len(refs)), func(ctx context.Context) error {
		left := 0
		for _, ns := range namespacesOf(refs) {
			pods, err := r.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, p := range pods.Items {
				if slices.Contains(refs, p.Namespace+"/"+p.Name) {
					left++
				}
			}
		}
		if left > 0 {
			return fmt.Errorf("%d left", left)
		}
		return nil
	})
	if err != nil {
		r.fatalf("%v", err)
	}
}

func namespacesOf(refs []string) []string {
	var out []string
	for _, ref := range refs {
		ns, _, _ := strings.Cut(ref, "/")
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}
