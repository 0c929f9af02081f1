package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/agent/zone"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovnroot"
)

// The pods daemon stands in for kubelet and the CNI on every node: it wires each pod
// bound to a node once the leader has given it addresses, reports it Running, and on
// deletion unwires it and lets the API server remove it.

// How often the pods daemon looks at everything again: soon while something waits (a
// br-int not there yet, a write that failed), rarely when all is done, as events
// bring news.
const (
	podsRetry  = time.Second
	podsResync = 30 * time.Second
)

// podsFieldManager names the pods daemon's writes.
const podsFieldManager = "ovnk-sandbox"

// podsDaemon is the state of RunPods.
type podsDaemon struct {
	prefix  string
	nodes   map[string]*nodeHost // by node name
	addrs   map[string]string    // node name -> its address, the pods' hostIP
	reader  client.Reader
	kube    kubernetes.Interface
	network cluster.DefaultNetworkConfig
	log     *log.Logger
	waiting map[string]bool // nodes whose br-int was missing at the last look
}

// podsDaemonStarted begins the pods daemon's first log line, once it has what it needs:
// the sandbox waits for it, not for any line (an early error is a line too).
const podsDaemonStarted = "wiring the pods of nodes"

// RunPods runs the pods daemon of the sandbox in dir until ctx ends, logging what it
// changes to logw. It finds the nodes from the directory and the API server from its
// admin kubeconfig.
func RunPods(ctx context.Context, dir string, logw io.Writer) error {
	dir, err := resolveDir(dir)
	if err != nil {
		return err
	}
	s := &Sandbox{Dir: dir, Kubeconfig: filepath.Join(dir, kubeconfigFile), Nodes: newNodes(dir)}
	root, err := ovnroot.Find()
	if err != nil {
		return err
	}
	vsctlPath, err := root.Program("ovs-vsctl")
	if err != nil {
		return err
	}
	bins := binaries{root: root, programs: map[string]string{"ovs-vsctl": vsctlPath}}
	cfg, err := s.restConfig()
	if err != nil {
		return err
	}
	var hosts []*nodeHost
	addrs := map[string]string{}
	for _, n := range s.Nodes {
		hosts = append(hosts, &nodeHost{name: n.Name, netns: n.Netns, rundir: s.nodeDir(n), vsctl: s.vsctl(bins, n)})
		addrs[n.Name] = netip.MustParsePrefix(n.Address).Addr().String()
	}
	d, err := newPodsDaemon(cfg, netnsPrefix(dir), hosts, addrs, logw)
	if err != nil {
		return err
	}
	return d.run(ctx)
}

// newPodsDaemon wires pods into hosts, naming their namespaces with prefix and
// reporting addrs[node] as their hostIP.
func newPodsDaemon(cfg *rest.Config, prefix string, hosts []*nodeHost, addrs map[string]string, logw io.Writer) (*podsDaemon, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	if err := ovnkv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	reader, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	d := &podsDaemon{
		prefix: prefix,
		nodes:  map[string]*nodeHost{},
		addrs:  addrs,
		reader: reader,
		kube:   kube,
		// The agents' --cluster-subnets: Build needs the default network's subnets.
		network: cluster.DefaultNetworkConfig{Subnets: []cluster.Subnet{defaultSubnet}, MTU: cluster.DefaultMTU},
		log:     log.New(logw, "", log.LstdFlags),
		waiting: map[string]bool{},
	}
	for _, h := range hosts {
		d.nodes[h.name] = h
	}
	return d, nil
}

// run syncs at once, then on every pod event (coalesced) and every resync period.
func (d *podsDaemon) run(ctx context.Context) error {
	trigger := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(d.kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.nodeName!="
	}))
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, n any) { poke(n) }, DeleteFunc: poke,
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	d.log.Printf("%s %s", podsDaemonStarted, strings.Join(sortedKeys(d.nodes), ", "))
	for {
		pending, err := d.sync(ctx)
		if err != nil {
			d.log.Print(err)
		}
		wait := podsResync
		if pending || err != nil {
			wait = podsRetry
		}
		select {
		case <-ctx.Done():
			return nil
		case <-trigger:
		case <-time.After(wait):
		}
	}
}

// sync wires every pod bound to a node of the sandbox that has its addresses, unwires
// and removes the deleted ones, and removes the wiring of pods that are gone. It
// reports whether something is left to do (pending) besides the errors.
func (d *podsDaemon) sync(ctx context.Context) (pending bool, _ error) {
	in, err := zone.ListInputs(ctx, d.reader)
	if err != nil {
		return true, err
	}
	in.DefaultNetwork = d.network
	st, _ := cluster.Build(in) // objects not ready are left out: their pods wait
	built := map[string]*cluster.Pod{}
	for _, p := range st.Pods {
		built[p.UID] = p
	}
	// A node whose OVS does not answer is left for the next sync; the others' pods
	// are still wired.
	var errs []error
	ports := map[string]map[string]ownedPort{}
	down := map[string]bool{}
	for name, h := range d.nodes {
		if ports[name], err = h.ports(ctx); err != nil {
			errs = append(errs, err)
			down[name] = true
		}
	}
	keep := map[string]bool{} // UID tags of the pods whose wiring stays
	for i := range in.Pods {
		p := &in.Pods[i]
		h := d.nodes[p.Spec.NodeName]
		if h == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		keep[uidTag(string(p.UID))] = true // a deleted pod's wiring is remove's
		if down[h.name] {
			continue
		}
		if p.DeletionTimestamp != nil {
			errs = append(errs, d.remove(ctx, h, p, ports[h.name]))
			continue
		}
		bp := built[string(p.UID)]
		if bp == nil {
			continue // no addresses yet: the leader writes them
		}
		wait, err := d.wirePod(ctx, h, st, bp, p, ports[h.name])
		pending = pending || wait
		errs = append(errs, err)
	}
	errs = append(errs, d.sweep(ctx, keep, ports))
	err = errors.Join(errs...)
	return pending || err != nil, err
}

// wirePod wires one pod and marks it Running; wait is true while its node's br-int is
// not there.
func (d *podsDaemon) wirePod(ctx context.Context, h *nodeHost, st *cluster.State, bp *cluster.Pod, p *corev1.Pod, ports map[string]ownedPort) (wait bool, _ error) {
	ready, err := h.bridgeReady(ctx)
	if err != nil {
		return true, err
	}
	if !ready {
		if !d.waiting[h.name] {
			d.log.Printf("node %s has no running %s yet (its agent sets it up): pods there wait", h.name, integrBr)
			d.waiting[h.name] = true
		}
		return true, nil
	}
	d.waiting[h.name] = false
	plan, err := planPod(st, bp, d.prefix)
	if err != nil {
		return false, err
	}
	changed, err := h.wire(ctx, plan, ports)
	if err != nil {
		return false, err
	}
	if changed {
		d.log.Printf("wired pod %s on node %s in network namespace %s", plan.Ref, h.name, plan.Netns)
	}
	updated := runningStatus(p, plan, d.addrs[h.name], time.Now())
	if updated == nil {
		return false, nil
	}
	if _, err := d.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: podsFieldManager}); err != nil {
		return false, fmt.Errorf("mark pod %s Running: %w", plan.Ref, err)
	}
	d.log.Printf("pod %s is Running with %s", plan.Ref, strings.Join(plan.podIPs(), ", "))
	return false, nil
}

// remove unwires a pod being deleted and then deletes it for good (grace period 0),
// as kubelet does once its containers are gone.
func (d *podsDaemon) remove(ctx context.Context, h *nodeHost, p *corev1.Pod, ports map[string]ownedPort) error {
	ref := p.Namespace + "/" + p.Name
	var names []string
	for _, port := range ports {
		if port.UID == string(p.UID) {
			names = append(names, port.Name)
		}
	}
	if _, err := h.unwire(ctx, podNetns(d.prefix, string(p.UID)), names); err != nil {
		return fmt.Errorf("unwire deleted pod %s: %w", ref, err)
	}
	err := d.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &p.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s: %w", ref, err)
	}
	d.log.Printf("removed pod %s from node %s", ref, h.name)
	return nil
}

// sweep removes the wiring of pods that no longer exist (deleted while the daemon was
// down, say): the sandbox's ports whose pod is not kept, and pod namespaces likewise.
func (d *podsDaemon) sweep(ctx context.Context, keep map[string]bool, ports map[string]map[string]ownedPort) error {
	var errs []error
	for name, h := range d.nodes {
		var stale []string
		for _, p := range ports[name] {
			if !keep[uidTag(p.UID)] {
				stale = append(stale, p.Name)
			}
		}
		if len(stale) > 0 {
			if _, err := h.unwire(ctx, "", stale); err != nil {
				errs = append(errs, err)
				continue
			}
			d.log.Printf("unplugged %s from node %s: their pods are gone", strings.Join(stale, ", "), name)
		}
	}
	netnses, err := netnsesWithPrefix(podNetnsPrefix(d.prefix))
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, ns := range netnses {
		if keep[strings.TrimPrefix(ns, podNetnsPrefix(d.prefix))] {
			continue
		}
		if err := deleteNetns(ctx, ns); err != nil {
			errs = append(errs, err)
			continue
		}
		d.log.Printf("deleted network namespace %s: its pod is gone", ns)
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
