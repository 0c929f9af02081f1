package packets_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// The matrix's interfaces: a pod's default-network port, and a primary user-defined
// network's (which has the default route; eth0 is then infrastructure-locked).
const (
	traceEth0 = "eth0"
	traceUDN  = "ovn-udn1"
)

// TestTraceAgreesWithPackets holds `kubectl ovnk trace` to what real packets do on the
// sandbox, ICMP and TCP, pair by pair: default-network pods on one node, a Layer3
// network across zones, a Layer2 network through its transit router, a node's host to
// pods through its management ports and pods to nodes' addresses, pods to the outside
// host (whose who-am-i server tells the source address it saw), and a Layer3 pod to a
// Layer2 pod of another network before a connect, with it, and after it is gone.
func TestTraceAgreesWithPackets(t *testing.T) {
	l := startSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	traceNamespace(ctx, t, l, "blue", "green")
	l.must(ctx, "ovnk", "network", "create", "blue", "-n", "blue", "--topology", "layer3", "--subnet", "10.128.0.0/16")
	l.must(ctx, "ovnk", "network", "create", "green", "--cluster", "--namespaces", "green", "--topology", "layer2", "--subnet", "10.200.0.0/16")
	n1, n2, n3 := "ovnk-node-1", "ovnk-node-2", "ovnk-node-3"
	tracePods(ctx, t, l, map[string]string{
		"default/d1": n1, "default/d2": n1,
		"blue/blue-a": n1, "blue/blue-b": n2,
		"green/green-a": n1, "green/green-c": n3,
	})
	l.must(ctx, "ovnk", "status", "--wait", "--timeout", "2m")

	d1, d2 := tracePod("default/d1", traceEth0), tracePod("default/d2", traceEth0)
	blueA, blueB := tracePod("blue/blue-a", traceUDN), tracePod("blue/blue-b", traceUDN)
	greenA, greenC := tracePod("green/green-a", traceUDN), tracePod("green/green-c", traceUDN)
	blueALocked := tracePod("blue/blue-a", traceEth0)
	m := newTraceMatrix(t, l)
	defer m.report()

	m.check(ctx, "default network, one node", tracePair{Src: d1, Dst: d2, Want: true})
	m.check(ctx, "layer3 across zones", tracePair{Src: blueA, Dst: blueB, Want: true})
	m.check(ctx, "layer2 through the transit router", tracePair{Src: greenA, Dst: greenC, Want: true})
	witness := traceNode(n1)
	greenHost := traceNodeOn(n1, "green")
	blueHost := traceNodeOn(n1, "blue/blue")
	m.check(ctx, "node to pod",
		tracePair{Src: traceNode(n1), Dst: d1, Want: true},
		tracePair{Src: traceNode(n2), Dst: d1, Want: true},
		tracePair{Src: blueHost, Dst: blueA, Want: true},
		// Another node's pod of the network, from a socket bound to the network's
		// management port (its VRF upstream): through the cluster router and the
		// transit switch.
		tracePair{Src: traceNodeOn(n2, "blue/blue"), Dst: blueA, Want: true},
		tracePair{Src: greenHost, Dst: greenA, Want: true},
		// A primary UDN pod's default-network port answers its own node (the kubelet's
		// probes) and nobody else: the isolation ACL on its node drops the others.
		tracePair{Src: traceNode(n2), Dst: blueALocked, Want: false, Witness: &witness},
		// A Layer2 network's management ports have one address on every node, so the
		// pod's answer to another node's host goes to its own node's host instead: the
		// trace shows the reply delivered there, and the sender hears nothing.
		tracePair{Src: traceNodeOn(n3, "green"), Dst: greenA, Want: false, Witness: &greenHost},
	)
	m.check(ctx, "pod to node",
		tracePair{Src: d1, Dst: traceNode(n1), Want: true},
		tracePair{Src: d1, Dst: traceNode(n2), Want: true},
		tracePair{Src: blueA, Dst: traceNode(n1), Want: true},
		tracePair{Src: blueA, Dst: traceNode(n2), Want: true},
		tracePair{Src: greenA, Dst: traceNode(n1), Want: true},
	)
	m.check(ctx, "pod to outside",
		tracePair{Src: d1, Dst: traceOutside(), Want: true},
		tracePair{Src: blueA, Dst: traceOutside(), Want: true},
		tracePair{Src: greenA, Dst: traceOutside(), Want: true},
	)

	unconnected := func(step string) {
		m.check(ctx, step,
			tracePair{Src: blueA, Dst: greenC, Want: false, Witness: &greenA},
			tracePair{Src: greenC, Dst: blueA, Want: false, Witness: &blueB},
		)
	}
	unconnected("unconnected networks")
	const connect = "trace-blue-green"
	l.must(ctx, "ovnk", "connect", "blue/blue", "green", "--name", connect)
	traceConnectRouters(ctx, t, l, connect, true)
	m.check(ctx, "connected networks",
		tracePair{Src: blueA, Dst: greenC, Want: true},
		tracePair{Src: greenC, Dst: blueA, Want: true},
	)
	l.must(ctx, "ovnk", "disconnect", connect)
	traceConnectRouters(ctx, t, l, connect, false)
	unconnected("disconnected networks")
}

// TestTraceAgreesWithPacketsThroughLayer2Upgrade holds the trace to packets between a
// legacy and an upgraded node of a Layer2 network during OKEP-5094's rolling upgrade,
// run as docs/upgrade.md tells operators to: every agent starts on the legacy topology,
// then one node is drained with kubectl drain, the new agent rolled out there alone,
// and the node uncordoned; the pod its StatefulSet starts there again talks to pods on
// the legacy nodes, both ways, and pods of both kinds of node reach the outside host.
func TestTraceAgreesWithPacketsThroughLayer2Upgrade(t *testing.T) {
	l := startSandbox(t, "--layer2-topology=v1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	traceNamespace(ctx, t, l, "l2u")
	l.must(ctx, "ovnk", "network", "create", "l2u", "--cluster", "--namespaces", "l2u", "--topology", "layer2", "--subnet", "10.210.0.0/16")
	n1, n2, n3 := "ovnk-node-1", "ovnk-node-2", "ovnk-node-3"
	// The pod of the node to drain belongs to a StatefulSet, as workloads do: the
	// drain evicts it, and it comes back, with its name, once the node takes pods again.
	traceStatefulPod(ctx, t, l, "l2u", "a", n1)
	tracePods(ctx, t, l, map[string]string{"l2u/b": n2, "l2u/c": n3})
	l.must(ctx, "ovnk", "status", "--wait", "--timeout", "2m")
	a, b, c := tracePod("l2u/a-0", traceUDN), tracePod("l2u/b", traceUDN), tracePod("l2u/c", traceUDN)
	m := newTraceMatrix(t, l)
	defer m.report()

	m.check(ctx, "all legacy",
		tracePair{Src: a, Dst: b, Want: true},
		tracePair{Src: b, Dst: a, Want: true},
		tracePair{Src: a, Dst: traceOutside(), Want: true},
	)

	// Drain ovnk-node-1 (docs/upgrade.md), then roll out the new agent there: it
	// converts the node and annotates it. Once the node is uncordoned, a pod started
	// there is wired into the transit-router topology.
	l.must(ctx, "drain", n1, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=2m")
	if err := l.s.RollOutAgent(ctx, n1, "--layer2-topology=v2"); err != nil {
		t.Fatal(err)
	}
	err := testenv.Eventually(ctx, time.Minute, n1+" annotated as upgraded", func(ctx context.Context) error {
		v, err := traceLayer2Version(ctx, l, n1)
		if err == nil && v != "2.0" {
			err = fmt.Errorf("%s is %q", cluster.AnnotationLayer2TopologyVersion, v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{n2, n3} {
		if v, err := traceLayer2Version(ctx, l, n); err != nil || v != "" {
			t.Fatalf("node %s, whose agent runs v1, has %s %q (%v): it should still be legacy", n, cluster.AnnotationLayer2TopologyVersion, v, err)
		}
	}
	l.must(ctx, "uncordon", n1)
	l.must(ctx, "wait", "--for=condition=Ready", "--timeout=2m", "-n", "l2u", "pod/a-0")
	l.must(ctx, "ovnk", "status", "--wait", "--timeout", "2m")
	t.Logf("kubectl ovnk upgrade-status:\n%s", l.must(ctx, "ovnk", "upgrade-status"))
	a2 := a // the same name, a new pod on the upgraded node
	m.check(ctx, n1+" upgraded, "+n2+" and "+n3+" legacy",
		tracePair{Src: a2, Dst: b, Want: true},
		tracePair{Src: b, Dst: a2, Want: true},
		tracePair{Src: a2, Dst: c, Want: true},
		tracePair{Src: c, Dst: a2, Want: true},
		tracePair{Src: a2, Dst: traceOutside(), Want: true},
		tracePair{Src: b, Dst: traceOutside(), Want: true},
	)
}

// traceLayer2Version reads a node's Layer2 topology version annotation ("" when it
// has none: a legacy node).
func traceLayer2Version(ctx context.Context, l *lab, node string) (string, error) {
	key := strings.ReplaceAll(cluster.AnnotationLayer2TopologyVersion, ".", `\.`)
	return l.run(ctx, "get", "node", node, "-o", "jsonpath={.metadata.annotations."+key+"}")
}

// traceNamespace creates namespaces whose pods take a primary user-defined network:
// the label must be there when a namespace is created.
func traceNamespace(ctx context.Context, t *testing.T, l *lab, names ...string) {
	t.Helper()
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    k8s.ovn.org/primary-user-defined-network: \"\"\n", n)
	}
	traceCreate(ctx, t, l, b.String())
}

// tracePods creates pods of the test application ("namespace/name" → node); the
// scheduler places each on its node, whose kubelet starts it, wired by ovnk-cni.
func tracePods(ctx context.Context, t *testing.T, l *lab, where map[string]string) {
	t.Helper()
	var b strings.Builder
	for ref, node := range where {
		ns, name, _ := strings.Cut(ref, "/")
		data, err := yaml.Marshal(sandbox.TestPod(ns, name, node))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "---\n%s", data)
	}
	traceCreate(ctx, t, l, b.String())
}

// traceStatefulPod creates a StatefulSet of one pod of the test application on node:
// pod <name>-0.
func traceStatefulPod(ctx context.Context, t *testing.T, l *lab, namespace, name, node string) {
	t.Helper()
	labels := map[string]string{"app": name}
	pod := sandbox.TestPod(namespace, name, node)
	pod.Labels = labels
	set := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
	data, err := yaml.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	traceCreate(ctx, t, l, string(data))
}

func traceCreate(ctx context.Context, t *testing.T, l *lab, manifest string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	l.must(ctx, "create", "-f", file)
}

// traceConnectRouters waits until every node's NB holds the connect's router (or none
// has it), then until every node's ovn-controller has caught up with its NB, so that
// packets meet what the trace reads.
func traceConnectRouters(ctx context.Context, t *testing.T, l *lab, connect string, want bool) {
	t.Helper()
	router := "connect_router_" + connect
	for _, n := range sandbox.NodeNames() {
		node := sandbox.Target{Node: n}
		err := testenv.Eventually(ctx, time.Minute, fmt.Sprintf("router %s in %s's NB: %v", router, n, want), func(ctx context.Context) error {
			out, err := l.exec(ctx, node, "ovn-nbctl", "--bare", "--columns=name", "find", "Logical_Router", "name="+router)
			if err != nil {
				return err
			}
			if got := strings.TrimSpace(out) != ""; got != want {
				return fmt.Errorf("router %s present: %v", router, got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.exec(ctx, node, "ovn-nbctl", "--wait=hv", "--timeout=60", "sync"); err != nil {
			t.Fatal(err)
		}
	}
}
