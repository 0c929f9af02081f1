package leader

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) {
	flag.Parse()
	ctrl.SetLogger(testLogger())
	os.Exit(testenv.KubeMain(m))
}

// testLogger prints the managers' logs to stderr under `go test -v`, else drops them.
func testLogger() logr.Logger {
	if !testing.Verbose() {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}

// kubeEnv is the shared API server, a client that reads from it directly, and a
// namespace for the Lease.
type kubeEnv struct {
	kube    *testenv.Kube
	c       client.Client
	scheme  *runtime.Scheme
	leaseNS string
}

func newKubeEnv(t *testing.T) *kubeEnv {
	t.Helper()
	k := testenv.SharedKube(t)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := nadv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(k.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &kubeEnv{kube: k, c: c, scheme: scheme, leaseNS: k.Namespace(t)}
}

// kubeSettings is the default network of the API server tests.
func kubeSettings() Settings {
	s := testSettings()
	s.EventRecorderName = "ovnk-leader-test"
	return s
}

// startLeader runs a manager with leader election and the leader's controller until
// the returned function (also called at cleanup) stops it and waits for it to end.
func (e *kubeEnv) startLeader(t *testing.T) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(rest.CopyConfig(e.kube.RESTConfig), ctrl.Options{
		Scheme:                        e.scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "ovnk-leader",
		LeaderElectionNamespace:       e.leaseNS,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(4 * time.Second),
		RenewDeadline:                 ptr.To(3 * time.Second),
		RetryPeriod:                   ptr.To(200 * time.Millisecond),
		// Every test (and the restart) starts a manager with the same controller name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Setup(mgr, kubeSettings()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the manager did not stop within 30s")
		}
	}
	t.Cleanup(stop)
	return stop
}

// eventually waits up to 60s for check to pass, and fails the test with its last error.
func eventually(t *testing.T, what string, check func(ctx context.Context) error) {
	t.Helper()
	if err := testenv.Eventually(context.Background(), 60*time.Second, what, check); err != nil {
		t.Fatal(err)
	}
}

func (e *kubeEnv) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %s: %v", describe(obj), err)
	}
}

// createNodes creates nodes and deletes them at cleanup, so that later tests do not
// count them.
func (e *kubeEnv) createNodes(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		e.create(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
		t.Cleanup(func() { e.remove(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
	}
}

// remove deletes obj at once (a pod without its kubelet would otherwise stay).
func (e *kubeEnv) remove(t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.c.Delete(context.Background(), obj, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete %s: %v", describe(obj), err)
	}
}

func testPod(ns, name, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "registry.example/none"}}},
	}
}

// testCUDN selects namespaces by name, and is deleted at cleanup.
func (e *kubeEnv) createCUDN(t *testing.T, name string, spec ovnkv1.NetworkSpec, namespaces ...string) {
	t.Helper()
	c := cudn(name, 0, spec, namespaces...)
	c.CreationTimestamp, c.Generation, c.ResourceVersion = metav1.Time{}, 0, ""
	e.create(t, c)
	t.Cleanup(func() { e.remove(t, &ovnkv1.ClusterUserDefinedNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
}

// get reads obj afresh from the API server.
func (e *kubeEnv) get(ctx context.Context, obj client.Object) error {
	return e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

// podInterfaces reads a pod's k8s.ovn.org/pod-networks; an error until it is set.
func (e *kubeEnv) podInterfaces(ctx context.Context, ns, name string) (map[string]cluster.PodInterface, error) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := e.get(ctx, p); err != nil {
		return nil, err
	}
	ifaces, ok, err := cluster.PodNetworksCodec.Lookup(cluster.ObjectRef{Kind: "Pod", Namespace: ns, Name: name}, p.Annotations)
	if err == nil && !ok {
		err = fmt.Errorf("pod %s/%s has no %s yet", ns, name, cluster.AnnotationPodNetworks)
	}
	return ifaces, err
}

// nodeAllocation is what the leader wrote on a node.
type nodeAllocation struct {
	id      int
	transit []netip.Prefix
	subnets map[string][]netip.Prefix
}

// nodeAllocation reads a node's id, transit addresses and subnets; an error until the
// id and the default network's subnets are set.
func (e *kubeEnv) nodeAllocation(ctx context.Context, name string) (nodeAllocation, error) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.get(ctx, n); err != nil {
		return nodeAllocation{}, err
	}
	ref := cluster.ObjectRef{Kind: "Node", Name: name}
	var a nodeAllocation
	var ok [3]bool
	var errs [3]error
	a.id, ok[0], errs[0] = cluster.NodeIDCodec.Lookup(ref, n.Annotations)
	a.transit, ok[1], errs[1] = cluster.TransitSwitchPortIfAddrCodec.Lookup(ref, n.Annotations)
	a.subnets, ok[2], errs[2] = cluster.NodeSubnetsCodec.Lookup(ref, n.Annotations)
	for i, err := range errs {
		if err != nil {
			return a, err
		}
		if !ok[i] {
			return a, fmt.Errorf("node %s is not allocated yet: %v", name, n.Annotations)
		}
	}
	return a, nil
}

// networkIDs reads a network object's id and keys; an error until both are set.
func networkIDs(obj client.Object) (int, []int, error) {
	ref := cluster.ObjectRef{Kind: "Network", Name: obj.GetName()}
	id, ok, err := cluster.NetworkIDCodec.Lookup(ref, obj.GetAnnotations())
	if err != nil || !ok {
		return 0, nil, fmt.Errorf("%s has no network id yet (%v)", describe(obj), err)
	}
	keys, ok, err := cluster.TunnelKeysCodec.Lookup(ref, obj.GetAnnotations())
	if err != nil || !ok {
		return 0, nil, fmt.Errorf("%s has no tunnel keys yet (%v)", describe(obj), err)
	}
	return id, keys, nil
}

// lowestFree returns the lowest value from first that is not in held.
func lowestFree(first int, held []int) int {
	for v := first; ; v++ {
		if !slices.Contains(held, v) {
			return v
		}
	}
}

// suffix makes cluster-scoped names unique per test: the API server is shared.
func suffix() string {
	return strconv.FormatInt(time.Now().UnixNano()%1_000_000, 36)
}
