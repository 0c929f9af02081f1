// Package leader is the cluster-wide work of the elected ovnk-agent replica: it
// allocates node ids, node subnets, network ids, tunnel keys, pod addresses and the
// blocks and router keys of ClusterNetworkConnects, persists every allocation in the
// annotations OVN-Kubernetes uses, and reports each network's and connect's
// conditions. docs/leader.md describes what it writes and how a new leader resumes.
//
// The work is one level-triggered pass over the informers' objects: every event
// enqueues the same key, so bursts coalesce into one pass. A pass is planned by pure
// code (planner: the cache's objects in, the writes out) and then written (writer).
// Allocators live as long as the leadership; the first pass fills them from the
// persisted annotations before it allocates anything, and so does every later pass for
// the objects it sees.
package leader

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	agentconfig "github.com/ovnk/ovnk/pkg/agent/config"
	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// FieldOwner is the field manager of every write of the leader.
const FieldOwner = "ovnk-leader"

// ControllerName names the leader's controller (in logs and metrics).
const ControllerName = "ovnk-leader"

// Settings configures the leader.
type Settings struct {
	// DefaultNetwork is the cluster default network: its cluster subnets (from which
	// node subnets are allocated) and transit subnets (node transit addresses).
	DefaultNetwork cluster.DefaultNetworkConfig
	// Cluster holds the cluster's other ranges: user-defined networks may not overlap
	// the masquerade, service and default join subnets.
	Cluster cluster.Config
	// EventRecorderName is the reporting controller of the leader's events; FieldOwner
	// when empty.
	EventRecorderName string
}

// SettingsOf are the settings of the leader of an agent running with cfg: the
// ranges it reserves are cfg.Ranges(), which kubectl ovnk checks against.
func SettingsOf(cfg *agentconfig.Config) Settings {
	return Settings{DefaultNetwork: cfg.DefaultNetwork(), Cluster: cfg.ClusterConfig()}
}

// Setup registers the leader's controller with mgr. Like every controller-runtime
// controller it runs only while mgr holds the leader election lease. mgr's scheme must
// hold client-go's types and k8s.ovn.org/v1; Setup adds k8s.cni.cncf.io/v1 (the
// NetworkAttachmentDefinitions) to it. It fails when s is invalid.
func Setup(mgr ctrl.Manager, s Settings) error {
	p, err := newPlanner(s)
	if err != nil {
		return err
	}
	// The manager is not started yet: its scheme may still learn a kind.
	if !mgr.GetScheme().Recognizes(nadv1.SchemeGroupVersion.WithKind("NetworkAttachmentDefinition")) {
		if err := nadv1.AddToScheme(mgr.GetScheme()); err != nil {
			return fmt.Errorf("set up controller %s: %w", ControllerName, err)
		}
	}
	disc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("set up controller %s: discovery client: %w", ControllerName, err)
	}
	log := mgr.GetLogger().WithName(ControllerName)
	r := &reconciler{
		c:       mgr.GetClient(),
		planner: p,
		writer: &writer{
			c:        client.WithFieldOwner(mgr.GetClient(), FieldOwner),
			reader:   mgr.GetAPIReader(),
			recorder: mgr.GetEventRecorder(cmp.Or(s.EventRecorderName, FieldOwner)),
			log:      log,
		},
	}
	pass := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{passRequest}
	})
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&corev1.Node{}, pass, builder.WithPredicates(predicate.AnnotationChangedPredicate{})).
		Watches(&corev1.Namespace{}, pass, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&corev1.Pod{}, pass, builder.WithPredicates(podPredicate)).
		Watches(&ovnkv1.ClusterUserDefinedNetwork{}, pass, builder.WithPredicates(networkPredicate)).
		Watches(&ovnkv1.UserDefinedNetwork{}, pass, builder.WithPredicates(networkPredicate)).
		Watches(&ovnkv1.RouteAdvertisements{}, pass).
		Watches(&ovnkv1.ClusterNetworkConnect{}, pass, builder.WithPredicates(connectPredicate)).
		// The planner is used by one pass at a time, whatever the manager's default.
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Build(r)
	if err != nil {
		return fmt.Errorf("set up controller %s: %w", ControllerName, err)
	}
	// NADs are watched once they are served: a watch of a kind the API server does
	// not serve would keep the controller from starting. Every change of a NAD starts
	// a pass: they have no status, and the leader's own writes are few.
	r.nads = &nadAPI{
		served: nadsServedBy(disc),
		watch: func() error {
			return c.Watch(source.Kind[client.Object](mgr.GetCache(), &nadv1.NetworkAttachmentDefinition{}, pass))
		},
		now: time.Now,
		log: log,
	}
	return nil
}

// passRequest is the one key every event enqueues.
var passRequest = reconcile.Request{}

// networkPredicate passes changes of a network's spec, annotations, labels (which
// RouteAdvertisements select) and status.
var networkPredicate = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}, statusUpdated)

// connectPredicate passes changes of a ClusterNetworkConnect's spec, annotations and
// status.
var connectPredicate = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, statusUpdated)

// statusUpdated passes an update that changed the object's status, the leader's own
// status writes included. The pass after its own write usually finds nothing to do; but
// a pass that planned from a cache not yet showing the leader's last status write
// compared against an older status, and may have left the written one standing when
// it is already stale (a node that joined and left): only a pass after the write's
// event corrects it.
var statusUpdated = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return !equality.Semantic.DeepEqual(statusOf(e.ObjectOld), statusOf(e.ObjectNew))
}}

// statusOf is the status of a network or connect; nil for other kinds.
func statusOf(o client.Object) any {
	switch v := o.(type) {
	case *ovnkv1.ClusterUserDefinedNetwork:
		return v.Status
	case *ovnkv1.UserDefinedNetwork:
		return v.Status
	case *ovnkv1.ClusterNetworkConnect:
		return v.Status
	}
	return nil
}

// podPredicate passes the pod changes the leader acts on: scheduling, finishing, and
// its k8s.ovn.org/pod-networks annotation.
var podPredicate = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*corev1.Pod)
	cur, okNew := e.ObjectNew.(*corev1.Pod)
	if !okOld || !okNew {
		return true
	}
	return old.Spec.NodeName != cur.Spec.NodeName || cluster.OnPodNetwork(old) != cluster.OnPodNetwork(cur) ||
		old.Annotations[cluster.AnnotationPodNetworks] != cur.Annotations[cluster.AnnotationPodNetworks]
}}

// reconciler runs one pass per request.
type reconciler struct {
	c       client.Client // cached reads
	planner *planner
	writer  *writer
	nads    *nadAPI
}

// Reconcile plans a pass over the cached objects and writes it. While NADs are not
// served it comes back after nadRecheck to ask again.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var res reconcile.Result
	served := r.nads.available()
	if !served {
		res.RequeueAfter = nadRecheck
	}
	s, err := r.snapshot(ctx, served)
	if err != nil {
		return reconcile.Result{}, err
	}
	err = r.writer.apply(ctx, r.planner.plan(s))
	if ctx.Err() != nil {
		return reconcile.Result{}, nil // shutting down, or the lease is lost: nothing to retry
	}
	return res, err
}

// snapshot lists every object a pass reads from the cache, without copying them (the
// planner never modifies what it reads); NADs only when nads is true.
func (r *reconciler) snapshot(ctx context.Context, nads bool) (*snapshot, error) {
	var (
		nodes      corev1.NodeList
		namespaces corev1.NamespaceList
		pods       corev1.PodList
		cudns      ovnkv1.ClusterUserDefinedNetworkList
		udns       ovnkv1.UserDefinedNetworkList
		ras        ovnkv1.RouteAdvertisementsList
		cncs       ovnkv1.ClusterNetworkConnectList
	)
	for _, l := range []client.ObjectList{&nodes, &namespaces, &pods, &cudns, &udns, &ras, &cncs} {
		if err := r.c.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list %T from the cache: %w", l, err)
		}
	}
	var nadList nadv1.NetworkAttachmentDefinitionList
	if nads {
		if err := r.c.List(ctx, &nadList, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list %T from the cache: %w", &nadList, err)
		}
	}
	return &snapshot{
		nads:       sortedPtrs(nadList.Items),
		nadsServed: nads,
		nodes:      sortedPtrs(nodes.Items),
		namespaces: namespaces.Items,
		pods:       sortedPtrs(pods.Items),
		cudns:      sortedPtrs(cudns.Items),
		udns:       sortedPtrs(udns.Items),
		ras:        sortedPtrs(ras.Items),
		cncs:       sortedPtrs(cncs.Items),
	}, nil
}

// sortedPtrs returns pointers to items, sorted by namespace and name.
func sortedPtrs[T any, P interface {
	*T
	client.Object
}](items []T) []P {
	out := make([]P, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	slices.SortFunc(out, func(a, b P) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out
}
