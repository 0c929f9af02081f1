package sandbox

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/testenv"
)

// syncBuffer is a log the test reads while the daemon writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPodsDaemon runs the pods daemon's sync against a real API server and a real node
// (OVS userspace in a namespace): a pod waits while br-int is the kernel-datapath bridge
// ovn-controller makes before the agent configures it, is wired and marked Running once
// br-int runs, is left alone by a second sync, and on deletion is unwired and removed.
// Leftovers of pods that are gone are swept; a port someone else owns is not.
func TestPodsDaemon(t *testing.T) {
	h, ovs, prefix, ctx := wiringLab(t, "system")
	k := testenv.SharedKube(t)
	ns := k.Namespace(t)
	h.name = "node-" + ns // pods only name their node; no Node object is needed
	logs := &syncBuffer{}
	d, err := newPodsDaemon(k.RESTConfig, prefix, []*nodeHost{h}, map[string]string{h.name: "172.18.0.2"}, logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { t.Logf("pods daemon log:\n%s", logs) })

	annotation, err := cluster.PodNetworksCodec.Format(map[string]cluster.PodInterface{
		"default": {
			IPs:      []netip.Prefix{netip.MustParsePrefix("10.244.0.5/24")},
			MAC:      "0a:58:0a:f4:00:05",
			Gateways: []netip.Addr{netip.MustParseAddr("10.244.0.1")},
			Role:     cluster.PodRolePrimary,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	pods := k.Client.CoreV1().Pods(ns)
	newPod := func(name string, annotations map[string]string) *corev1.Pod {
		p, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
			Spec:       corev1.PodSpec{NodeName: h.name, Containers: []corev1.Container{{Name: "app", Image: "pause"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	web := newPod("web", map[string]string{cluster.AnnotationPodNetworks: annotation})
	waiting := newPod("waiting", nil) // no addresses yet
	webNetns, waitingNetns := podNetns(prefix, string(web.UID)), podNetns(prefix, string(waiting.UID))

	// Leftovers: a port and a namespace of a pod that is gone, and the agent's port.
	if _, err := ovs.VSCtl(ctx,
		"add-port", integrBr, "stale_0", "--", "set", "Interface", "stale_0", "type=internal",
		`external_ids:"ovnk.io/owner"=ovnk-sandbox`, `external_ids:iface-id-ver="00000000-dead-beef-0000-000000000000"`,
		"--", "add-port", integrBr, "mp0", "--", "set", "Interface", "mp0", "type=internal", `external_ids:"ovnk.io/owner"=ovnk-agent`,
	); err != nil {
		t.Fatal(err)
	}
	staleNetns := podNetns(prefix, "00000000-dead-beef-0000-000000000000")
	if err := addNetns(ctx, staleNetns); err != nil {
		t.Fatal(err)
	}

	// br-int as ovn-controller creates it before ovn-bridge-datapath-type is set: a row
	// vswitchd cannot run here. The pod waits.
	pending, err := d.sync(ctx)
	if err != nil || !pending {
		t.Fatalf("sync with a kernel-datapath br-int: pending %v, %v; want pending, no error", pending, err)
	}
	if netnsExists(webNetns) {
		t.Fatalf("pod web was wired into a br-int that vswitchd does not run")
	}
	if !strings.Contains(logs.String(), "has no running br-int yet") {
		t.Errorf("the daemon did not say why pods wait; log:\n%s", logs)
	}
	if netnsExists(staleNetns) {
		t.Errorf("the namespace %s of a pod that is gone was not swept", staleNetns)
	}

	// The agent's setting: vswitchd now runs br-int.
	if _, err := ovs.VSCtl(ctx, "set", "Bridge", integrBr, "datapath_type=netdev"); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 10*time.Second, "br-int to run", func(ctx context.Context) error {
		_, err := os.Stat(filepath.Join(ovs.Dir(), integrBr+".mgmt"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if pending, err := d.sync(ctx); err != nil || pending {
		t.Fatalf("sync with br-int running: pending %v, %v", pending, err)
	}
	if !netnsExists(webNetns) {
		t.Fatalf("pod web has no namespace %s", webNetns)
	}
	if netnsExists(waitingNetns) {
		t.Errorf("pod waiting, which has no addresses, was wired")
	}
	out, err := run(ctx, nil, "ip", "-n", webNetns, "-br", "addr", "show", "eth0")
	if err != nil || !strings.Contains(out, "10.244.0.5/24") {
		t.Errorf("pod web's eth0: %q, %v", out, err)
	}
	got, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.PodRunning || got.Status.PodIP != "10.244.0.5" || !podReady(got) || got.Status.HostIP != "172.18.0.2" {
		t.Errorf("pod web's status: phase %s, podIP %q, ready %v, hostIP %q; want Running, 10.244.0.5, ready, 172.18.0.2",
			got.Status.Phase, got.Status.PodIP, podReady(got), got.Status.HostIP)
	}
	ports, err := h.ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ports["stale_0"]; ok {
		t.Errorf("the port of a pod that is gone was not swept: %v", ports)
	}
	if p := ports[uidTag(string(web.UID))+"_0"]; p.UID != string(web.UID) || p.ExternalIDs[ifaceIDKey] != ns+"_web" {
		t.Errorf("pod web's port: %+v; want iface-id %s_web and its UID", p, ns)
	}
	if out, err := ovs.VSCtl(ctx, "list-ports", integrBr); err != nil || !strings.Contains(out, "mp0") {
		t.Errorf("the agent's port mp0 is gone: %q, %v", out, err)
	}

	// Nothing changed: no write to the pod, no wiring.
	before := logs.String()
	if pending, err := d.sync(ctx); err != nil || pending {
		t.Fatalf("second sync: pending %v, %v", pending, err)
	}
	again, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != got.ResourceVersion {
		t.Errorf("a second sync wrote pod web again (resourceVersion %s -> %s)", got.ResourceVersion, again.ResourceVersion)
	}
	if after := logs.String(); after != before {
		t.Errorf("a second sync changed something:\n%s", strings.TrimPrefix(after, before))
	}

	// kubectl delete pod: the API server only marks a pod bound to a node; the daemon
	// unwires it and deletes it for good.
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if p, err := pods.Get(ctx, "web", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("pod web after delete: %v, %v; want it marked for deletion", p, err)
	}
	if _, err := d.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod web after the daemon's sync: %v, want it gone", err)
	}
	if netnsExists(webNetns) {
		t.Errorf("pod web's namespace %s outlived the pod", webNetns)
	}
	if ports, err := h.ports(ctx); err != nil || len(ports) != 0 {
		t.Errorf("ports left after the pod's deletion: %v, %v", ports, err)
	}
	if err := pods.Delete(ctx, "waiting", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Errorf("delete pod waiting: %v", err)
	}
}
