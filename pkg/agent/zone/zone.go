// Package zone is the part of the agent every node runs: it turns the cluster's intent
// into this node's OVN zone. Any change to a Node, Namespace, Pod, network or
// ClusterNetworkConnect recompiles the whole zone (level-triggered: the zone's state is
// a function of the cluster's, not of the events that led to it) and the reconciler
// writes only the difference.
package zone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology"
)

// zoneKey is the one work item: every event asks for the same thing, a reconcile of the
// whole zone, so a burst of events coalesces into one reconcile.
var zoneKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "zone"}}

// Controller reconciles this node's zone.
type Controller struct {
	Client         client.Client // reads from the manager's cache, writes to the API server
	NB             *ovn.Reconciler
	NodeName       string
	Cluster        cluster.Config
	DefaultNetwork cluster.DefaultNetworkConfig
	// Resync reconciles at least this often, repairing changes made behind our back.
	Resync time.Duration
	// MinInterval is the least time between two reconciles.
	MinInterval time.Duration
	Metrics     *Metrics
	// Layer2Mode is the Layer2 topology the agent runs (--layer2-topology).
	Layer2Mode l2upgrade.Mode
	// Node is the node's own part (package agent/host); nil when the agent programs
	// the zone's Northbound only (--node-dataplane=false).
	Node NodeDataplane
	// Events records a Warning on a local pod whose port cannot be programmed; nil
	// records none.
	Events recorder.EventRecorder

	// podIssues are the pod problems last recorded, by "namespace/name", so each is
	// recorded once, not every reconcile.
	podIssues map[string]string
	// lastGood is, by name, the latest version seen of each Node whose annotations all
	// parsed: cluster.Build falls back on it for a node's malformed annotation, so a
	// typo on a node keeps the node's ports in every zone rather than deleting them.
	// It is an input of the compile like the objects (inputsKey names it).
	lastGood map[string]*corev1.Node
	// waiting is why the last reconcile waited for this node's allocation, logged once.
	waiting string
	// nodeProblems are the malformed node annotations last logged, by node, so each
	// is logged once per change, not every reconcile.
	nodeProblems map[string]string
	// ownProblem is what is wrong with this node's own annotations (NodeProblem); nil
	// when nothing is.
	ownProblem atomic.Pointer[error]

	last time.Time
	// layer2Phase is the node's place in the Layer2 topology upgrade, for the heartbeat.
	layer2Phase atomic.Pointer[l2upgrade.Phase]
	ready       atomic.Bool
	// compiled is the zone the last successful reconcile applied: the next one reuses
	// it when its inputs are the same (inputsKey).
	compiled *compiledZone
	// memo is what the last compile leaves for the next when the inputs differ: the
	// rows of what did not change, which the reconciler then passes over. It follows
	// every compile, applied or not, since the rows it hands out are equal to a fresh
	// compile's whatever became of the last one.
	memo topology.Memo
	// snapshot is what the last applied zone was compiled from, for the CNI endpoint.
	snapshot atomic.Pointer[Snapshot]
	// wirable says the last reconcile that applied the zone found the node's own part
	// in order (CanWirePods).
	wirable atomic.Bool

	// outcome is the last reconcile's, for the agent's heartbeat.
	outcome struct {
		sync.Mutex
		succeeded time.Time // the last success
		err       error     // the last reconcile's error, nil after a success
	}
}

// NodeDataplane is the node's own part of a reconcile: what the node publishes about
// itself, what goes into the zone's Southbound before the Northbound names it (remote
// chassis), and what the host needs once the Northbound holds the zone (management
// ports, gateway flows). Its failures never stop the zone: the Northbound is applied
// and reported all the same, and they are the reconcile's error.
type NodeDataplane interface {
	// Publish reads the node's facts, points ovn-controller at the zone, and returns
	// the annotations that publish the facts.
	Publish(ctx context.Context) (map[string]string, error)
	// BeforeZone runs before the zone's Northbound is written.
	BeforeZone(ctx context.Context, st *cluster.State) error
	// AfterZone runs after it. keep names the networks the zone did not apply (not
	// compiled, left out by the builder, a name taken, the Northbound unreachable):
	// their host state stays as it is. retry asks to come back soon, for something the
	// node's daemons have not made yet.
	AfterZone(ctx context.Context, st *cluster.State, keep func(network string) bool) (retry bool, err error)
}

// nodeTimeout bounds each step of the node's own part: its servers' clients wait for a
// reconnect as long as they are let, and the zone's one worker must not hang on them.
const nodeTimeout = 30 * time.Second

// maxRetryDelay bounds the back-off of a failing reconcile.
const maxRetryDelay = 30 * time.Second

// nodeRetry is how soon a reconcile comes back for what ovn-controller has not made
// yet (the gateway routers' patch ports).
const nodeRetry = 500 * time.Millisecond

// Layer2Phase returns where the node is in the Layer2 topology upgrade, as of the last
// successful reconcile; "" before it.
func (c *Controller) Layer2Phase() string {
	if p := c.layer2Phase.Load(); p != nil {
		return string(*p)
	}
	return ""
}

// Ready reports whether the zone has been reconciled successfully at least once.
func (c *Controller) Ready() bool { return c.ready.Load() }

// NodeProblem says what is wrong with this node's own annotations, nil if nothing: a
// node whose annotation is broken is not ready for OVN, even while its zone and the
// other zones keep its last good values. The agent's pod stays Ready meanwhile, so
// the plugin can still read the zone through it.
func (c *Controller) NodeProblem() error {
	if p := c.ownProblem.Load(); p != nil {
		return *p
	}
	return nil
}

// LastReconcile returns the time of the last successful reconcile (zero before the
// first) and the error of the last reconcile, nil if it succeeded; a malformed
// annotation of this node is an error even when the zone was applied with its last
// good value. Waiting for this node's allocation is not an error and changes neither.
func (c *Controller) LastReconcile() (succeeded time.Time, err error) {
	c.outcome.Lock()
	defer c.outcome.Unlock()
	return c.outcome.succeeded, c.outcome.err
}

// recordOutcome notes how a reconcile ended: err is why it failed, own what is wrong
// with this node's annotations whether or not it failed.
func (c *Controller) recordOutcome(err, own error) {
	c.outcome.Lock()
	defer c.outcome.Unlock()
	c.outcome.err = errors.Join(own, err)
	if err == nil {
		c.outcome.succeeded = time.Now()
	}
}

// clearError forgets the last reconcile's error without counting a success.
func (c *Controller) clearError() {
	c.outcome.Lock()
	defer c.outcome.Unlock()
	c.outcome.err = nil
}

// SetupWithManager registers the controller on every replica, leader or not.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{zoneKey}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("zone").
		WithOptions(controller.Options{
			NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 1,
			// A failing zone (its OVS or Southbound down, say) is retried at least every
			// maxRetryDelay, so it catches up soon after the server is back.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, maxRetryDelay),
		}).
		Watches(&corev1.Node{}, all).
		Watches(&corev1.Namespace{}, all).
		Watches(&corev1.Pod{}, all).
		Watches(&ovnkv1.ClusterUserDefinedNetwork{}, all).
		Watches(&ovnkv1.UserDefinedNetwork{}, all).
		Watches(&ovnkv1.ClusterNetworkConnect{}, all).
		Complete(c)
}

// Reconcile compiles the zone from the cached cluster state and applies it.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if wait := c.MinInterval - time.Since(c.last); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	c.last = time.Now()
	logger := log.FromContext(ctx)
	start := time.Now()
	stats, z, err := c.reconcile(ctx)
	if errors.Is(err, topology.ErrNodeNotReady) {
		// Nothing malformed keeps this node out (that would be an ownAnnotationsError):
		// it lacks something not written yet, so a malformed annotation noted before
		// is gone, and so is the error it left.
		c.noteOwnProblem(nil)
		c.clearError()
		// Expected until the leader allocates this node's id: wait, without an error,
		// and say so once, not at every look.
		if c.waiting != err.Error() {
			logger.Info("waiting for this node's OVN allocation", "reason", err.Error())
			c.waiting = err.Error()
		}
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	c.waiting = ""
	var own *ownAnnotationsError
	if errors.As(err, &own) {
		// Only a change to the Node mends it, and that is an event: no retries, and
		// the cause is logged (by noteNodeProblems) once, not every second.
		c.noteOwnProblem(own.err)
		c.Metrics.observe(time.Since(start), stats, err)
		c.recordOutcome(err, nil)
		return reconcile.Result{RequeueAfter: c.Resync}, nil
	}
	// A reconcile that failed before it had a state says nothing new about this
	// node's annotations: what was known stays.
	ownErr := c.NodeProblem()
	if z != nil {
		ownErr = cluster.NodeProblems(z.buildErrs, c.NodeName)
		c.noteOwnProblem(ownErr)
	}
	if err == nil {
		c.snapshot.Store(z.snapshot())
		c.wirable.Store(z.node == nil)
		err = c.reportStatus(ctx, z)
		if err == nil {
			c.ready.Store(true)
			c.noteLayer2Step(ctx, z.step)
		}
		// The zone is applied; the node's own part may not be in order.
		err = errors.Join(err, z.node)
	}
	c.Metrics.observe(time.Since(start), stats, err)
	c.recordOutcome(err, ownErr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if res, incomplete := z.res, connectsIncomplete(z.res); stats.Operations > 0 || len(res.NotCompiled) > 0 || incomplete > 0 {
		logger.Info("zone reconciled", "operations", stats.Operations, "transactions", stats.Transactions,
			"inserts", stats.Inserts, "updates", stats.Updates, "deletes", stats.Deletes,
			"notCompiled", len(res.NotCompiled), "connectsIncomplete", incomplete)
	}
	c.reportPods(ctx, z.res.Pods)
	if z.retry {
		return reconcile.Result{RequeueAfter: nodeRetry}, nil
	}
	return reconcile.Result{RequeueAfter: c.Resync}, nil
}

// reconciled is what one successful reconcile compiled and decided.
type reconciled struct {
	state     *cluster.State
	buildErrs []error
	res       *topology.Result
	step      l2upgrade.Step
	// taken names, by network, the rows left out because a row of another owner holds
	// their unique name (ovn.NameTakenError): the rest of the zone is applied, and the
	// network's zone status says what blocks it.
	taken map[string]string
	// node is what went wrong with the node's own part; retry asks to come back soon.
	node  error
	retry bool
}

func (c *Controller) reconcile(ctx context.Context) (ovn.Stats, *reconciled, error) {
	var nodeErrs []error
	if c.Node != nil {
		nodeErrs = append(nodeErrs, c.withNodeTimeout(ctx, c.publishNode))
	}
	in, err := c.inputs(ctx)
	if err != nil {
		return ovn.Stats{}, nil, err
	}
	fp := l2upgrade.FootprintOf(c.NB.OwnedRouterPorts())
	key := inputsKey(in, fp)
	cz := c.compiled
	c.compiled = nil // until this reconcile succeeds
	if cz == nil || cz.key != key {
		if cz, err = c.compile(ctx, in, fp, key); err != nil {
			if errors.Is(err, topology.ErrNodeNotReady) {
				if err := errors.Join(nodeErrs...); err != nil {
					// The node could not publish itself: that is why it is not ready.
					return ovn.Stats{}, nil, err
				}
			}
			return ovn.Stats{}, nil, err
		}
	}
	st, buildErrs, res, step := cz.state, cz.buildErrs, cz.res, cz.step
	if c.Node != nil {
		nodeErrs = append(nodeErrs, c.withNodeTimeout(ctx, func(ctx context.Context) error {
			return c.Node.BeforeZone(ctx, st)
		}))
	}
	apply := c.NB.Reconcile
	if step.Options.Layer2 == topology.Layer2TransitRouter && len(fp.TransitRouter) == 0 && len(fp.Legacy) > 0 {
		// The conversion goes in one transaction: interrupted, it leaves the legacy zone
		// or the converted one, never a mix that a restart would take for a legacy zone
		// (and keep, should a pod have arrived meanwhile).
		apply = c.NB.ReconcileWhole
	}
	keep := Keep(buildErrs, res.NotCompiled)
	stats, err := apply(ctx, res.Rows, keep)
	z := &reconciled{state: st, buildErrs: buildErrs, res: res, step: step}
	var nbErr error
	if err != nil {
		if z.taken, err = nameConflicts(err); err != nil {
			nbErr = fmt.Errorf("apply zone %s: %w", c.NodeName, err)
		}
	}
	if c.Node != nil {
		// Whatever the Northbound did: the host of every network the zone holds is
		// repaired, and that of the others is kept.
		unapplied := func(network string) bool {
			return nbErr != nil || z.taken[network] != "" || keep(map[string]string{rows.NetworkKey: network})
		}
		nodeErrs = append(nodeErrs, c.withNodeTimeout(ctx, func(ctx context.Context) error {
			retry, err := c.Node.AfterZone(ctx, st, unapplied)
			z.retry = retry
			return err
		}))
	}
	z.node = errors.Join(nodeErrs...)
	if z.node != nil {
		z.node = fmt.Errorf("node %s: %w", c.NodeName, z.node)
	}
	if nbErr != nil {
		return stats, nil, errors.Join(nbErr, z.node)
	}
	if !step.Options.HoldLocalLayer2Pods {
		// Held pods wait on the ports the Northbound holds (Options.Wired), which the key
		// does not name.
		c.compiled = cz
	}
	return stats, z, nil
}

// compiledZone is a zone compiled from one set of inputs, named by their inputsKey.
type compiledZone struct {
	key       string
	state     *cluster.State
	buildErrs []error
	res       *topology.Result
	step      l2upgrade.Step
}

// compile builds the cluster state from the inputs, decides the node's Layer2 step
// and compiles the zone.
func (c *Controller) compile(ctx context.Context, in cluster.Inputs, fp l2upgrade.Footprint, key string) (*compiledZone, error) {
	st, buildErrs := cluster.Build(in)
	c.noteNodeProblems(ctx, buildErrs)
	local := st.Node(c.NodeName)
	if local == nil {
		if err := cluster.NodeProblems(buildErrs, c.NodeName); err != nil {
			// Malformed, with no last good value to fall back on: say which annotation,
			// rather than that the node is not ready yet.
			return nil, &ownAnnotationsError{node: c.NodeName, err: err}
		}
		// This node is not ready for OVN yet (no id or chassis): nothing to program.
		return nil, fmt.Errorf("compile zone: %w", topology.NodeNotReadyError(c.NodeName))
	}
	step := l2upgrade.Decide(c.layer2Mode(), st, local, fp)
	if step.ClearVersion {
		// Before the legacy rows go in: no zone may take this node for upgraded then.
		if err := c.patchNode(ctx, map[string]any{cluster.AnnotationLayer2TopologyVersion: nil}); err != nil {
			return nil, err
		}
	}
	if step.Options.HoldLocalLayer2Pods {
		step.Options.Wired = c.NB.LocalPorts()
	}
	res, err := c.memo.CompileWith(st, c.NodeName, step.Options)
	if err != nil {
		return nil, fmt.Errorf("compile zone: %w", err)
	}
	step = l2upgrade.Confirm(step, st, fp, res.NotCompiled)
	return &compiledZone{key: key, state: st, buildErrs: buildErrs, res: res, step: step}, nil
}

// noteOwnProblem keeps what is wrong with this node's annotations, nil if nothing.
func (c *Controller) noteOwnProblem(err error) {
	if err == nil {
		c.ownProblem.Store(nil)
		return
	}
	c.ownProblem.Store(&err)
}

// ownAnnotationsError is the error of a reconcile that could not build this node: an
// annotation of it is malformed, and no last good value stands in.
type ownAnnotationsError struct {
	node string
	err  error
}

func (e *ownAnnotationsError) Error() string {
	return fmt.Sprintf("compile zone: node %s is left out of the cluster state: %v", e.node, e.err)
}

func (e *ownAnnotationsError) Unwrap() error { return e.err }

// noteNodeProblems logs each node's malformed annotations once per change, and when
// they are mended: for another node, they say whether this zone keeps the node's
// last good values or had to drop it.
func (c *Controller) noteNodeProblems(ctx context.Context, buildErrs []error) {
	logger := log.FromContext(ctx)
	next := map[string]string{}
	for _, err := range buildErrs {
		var oe *cluster.ObjectError
		if !errors.As(err, &oe) || oe.Object.Kind != "Node" || next[oe.Object.Name] != "" {
			continue
		}
		name := oe.Object.Name
		problem := cluster.NodeProblems(buildErrs, name)
		if problem == nil {
			continue
		}
		next[name] = problem.Error()
		if c.nodeProblems[name] == next[name] {
			continue
		}
		kept := errors.Is(problem, cluster.ErrLastGoodKept)
		switch {
		case name == c.NodeName:
			logger.Error(problem, "this node's annotation is malformed: the node is not ready until it is fixed", "node", name, "lastGoodKept", kept)
		case kept:
			logger.Info("a node's annotation is malformed: this zone keeps its last good value", "node", name, "error", problem.Error())
		default:
			logger.Info("a node's annotation is malformed and it has no last good value here: this zone leaves the node out", "node", name, "error", problem.Error())
		}
	}
	for name := range c.nodeProblems {
		if next[name] == "" {
			logger.Info("a node's annotations are readable again", "node", name)
		}
	}
	c.nodeProblems = next
}

// reportPods records a Warning event on each local pod whose port the zone could not
// program, once per problem: the pod's owner sees why it has no network.
func (c *Controller) reportPods(ctx context.Context, issues map[string]error) {
	next := map[string]string{}
	for key, err := range issues {
		next[key] = err.Error()
		if c.Events == nil || c.podIssues[key] == next[key] {
			continue
		}
		ns, name, _ := strings.Cut(key, "/")
		var pod corev1.Pod
		if err := c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &pod); err != nil {
			delete(next, key) // try again next time
			continue
		}
		c.Events.Eventf(&pod, nil, corev1.EventTypeWarning, "PortNotProgrammed", "ProgramPort",
			"node %s cannot program this pod's port: %v", c.NodeName, err)
	}
	c.podIssues = next
}

// withNodeTimeout runs one step of the node's own part within nodeTimeout.
func (c *Controller) withNodeTimeout(ctx context.Context, step func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	return step(ctx)
}

// publishNode annotates this node with what its own side knows about it (chassis,
// addresses, gateway), when the node does not carry that already.
func (c *Controller) publishNode(ctx context.Context) error {
	want, err := c.Node.Publish(ctx)
	if err != nil {
		return err
	}
	var node corev1.Node
	if err := c.Client.Get(ctx, types.NamespacedName{Name: c.NodeName}, &node); err != nil {
		return fmt.Errorf("get node %s: %w", c.NodeName, err)
	}
	changes := map[string]any{}
	for k, v := range want {
		if node.Annotations[k] != v {
			changes[k] = v
		}
	}
	if len(changes) == 0 {
		return nil
	}
	return c.patchNode(ctx, changes)
}

// nameConflicts sorts by network the rows a reconcile left out because another owner's
// row holds their name. Any other error is returned as it is: then the zone was not
// applied.
func nameConflicts(err error) (map[string]string, error) {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	out := map[string]string{}
	for _, e := range errs {
		var taken *ovn.NameTakenError
		if !errors.As(e, &taken) {
			return nil, err
		}
		if out[taken.Network] != "" {
			out[taken.Network] += "; "
		}
		out[taken.Network] += taken.Error()
	}
	return out, nil
}

func (c *Controller) layer2Mode() l2upgrade.Mode {
	if c.Layer2Mode == "" {
		return l2upgrade.ModeTransitRouter
	}
	return c.Layer2Mode
}

// noteLayer2Step logs where the node is in the Layer2 topology upgrade when that
// changes, and keeps it for the heartbeat.
func (c *Controller) noteLayer2Step(ctx context.Context, step l2upgrade.Step) {
	phase := step.Phase
	if step.SetVersion {
		phase = l2upgrade.PhaseUpgraded // the annotation is written: the conversion is done
	}
	if c.Layer2Phase() == string(phase) {
		return
	}
	c.layer2Phase.Store(&phase)
	logger := log.FromContext(ctx)
	switch phase {
	case l2upgrade.PhaseBlocked:
		logger.Info("Layer2 networks stay on the legacy topology until no Layer2 pod runs on this node and every network of its zone is in the cluster state",
			"pods", step.Blocking, "unknownNetworks", step.Unknown)
	case l2upgrade.PhaseConverting:
		logger.Info("converting to the transit-router Layer2 topology", "waitingFor", step.Unknown)
	case l2upgrade.PhaseUpgraded:
		logger.Info("Layer2 networks run the transit-router topology", "annotation", cluster.AnnotationLayer2TopologyVersion)
	default:
		logger.Info("Layer2 topology", "phase", phase)
	}
}

// Keep says which owned rows the reconciler must leave alone although the zone no
// longer wants them: those of a network that did not compile, or that the builder left
// out (say, for a malformed annotation), so one bad network never disturbs what already
// works; and those of a ClusterNetworkConnect the builder left out, or that lead to
// such a network. Every other row that is not wanted is deleted: the rows of a deleted
// ClusterNetworkConnect, or of a network it no longer selects, disappear from every
// zone.
func Keep(buildErrs []error, notCompiled map[string]error) func(externalIDs map[string]string) bool {
	networks, connects := map[string]bool{}, map[string]bool{}
	for _, err := range buildErrs {
		var oe *cluster.ObjectError
		if !errors.As(err, &oe) {
			continue
		}
		if name := cluster.NetworkNameOf(oe.Object); name != "" {
			networks[name] = true
		}
		if oe.Object.Kind == "ClusterNetworkConnect" {
			connects[oe.Object.Name] = true
		}
	}
	for name := range notCompiled {
		networks[name] = true
	}
	return func(ids map[string]string) bool {
		if networks[ids[rows.NetworkKey]] {
			return true
		}
		cnc, ok := topology.ConnectOf(ids)
		return ok && (connects[cnc] || networks[ids[topology.DestinationNetworkKey]])
	}
}

func (c *Controller) inputs(ctx context.Context) (cluster.Inputs, error) {
	in, err := ListInputs(ctx, c.Client, client.UnsafeDisableDeepCopy) // Build never modifies its inputs
	in.Config, in.DefaultNetwork = c.Cluster, c.DefaultNetwork
	if err == nil {
		c.lastGood = LastGood(c.lastGood, in.Nodes)
		in.LastGoodNodes = c.lastGood
	}
	return in, err
}

// LastGood returns, by name, the last good version of each of nodes
// (cluster.LastGoodAnnotations), given those of the last call: each annotation as of
// its latest change that parsed. A node that is good now replaces its entry; one that
// is not gets an entry of its annotations with the malformed ones taken from the last
// entry (named by its own version: it is derived once per version, so the version names
// it in inputsKey) or keeps the last entry; another Node of that name (another UID) or
// a node that is gone loses it. A node whose version has not changed is not parsed
// again. The entries hold only the name, UID, version and annotations.
func LastGood(last map[string]*corev1.Node, nodes []corev1.Node) map[string]*corev1.Node {
	next := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		prev := last[n.Name]
		if prev != nil && prev.UID != n.UID {
			prev = nil
		}
		if prev != nil && prev.ResourceVersion == n.ResourceVersion {
			next[n.Name] = prev
			continue
		}
		// The annotations map is the cache's (or a merge's own) and is never
		// modified: sharing it is safe.
		if good := cluster.LastGoodAnnotations(n, prev); good != nil {
			next[n.Name] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Annotations: good}}
		} else if prev != nil {
			next[n.Name] = prev
		}
	}
	return next
}

// ListInputs lists the objects cluster.Build reads: Nodes, Namespaces, Pods, CUDNs,
// UDNs and ClusterNetworkConnects. The caller fills in the configuration.
func ListInputs(ctx context.Context, r client.Reader, opts ...client.ListOption) (cluster.Inputs, error) {
	var nodes corev1.NodeList
	var namespaces corev1.NamespaceList
	var pods corev1.PodList
	var cudns ovnkv1.ClusterUserDefinedNetworkList
	var udns ovnkv1.UserDefinedNetworkList
	var cncs ovnkv1.ClusterNetworkConnectList
	for _, l := range []client.ObjectList{&nodes, &namespaces, &pods, &cudns, &udns, &cncs} {
		if err := r.List(ctx, l, opts...); err != nil {
			return cluster.Inputs{}, fmt.Errorf("list %T: %w", l, err)
		}
	}
	in := cluster.Inputs{Nodes: nodes.Items, Namespaces: namespaces.Items, Pods: pods.Items}
	for i := range cudns.Items {
		in.CUDNs = append(in.CUDNs, &cudns.Items[i])
	}
	for i := range udns.Items {
		in.UDNs = append(in.UDNs, &udns.Items[i])
	}
	for i := range cncs.Items {
		in.CNCs = append(in.CNCs, &cncs.Items[i])
	}
	return in, nil
}

// connectsIncomplete counts the connects the zone did not program in full.
func connectsIncomplete(res *topology.Result) int {
	n := 0
	for _, err := range res.Connects {
		if err != nil {
			n++
		}
	}
	return n
}

// reportStatus publishes, on this node, which networks and ClusterNetworkConnects the
// zone programmed and why the others are not (those that wait for their network id
// included): the leader aggregates every node's
// report into their status. In the same write it sets or clears the node's
// k8s.ovn.org/layer2-topology-version as the Layer2 step says: the zone is applied by
// now, so other zones may rely on it.
func (c *Controller) reportStatus(ctx context.Context, z *reconciled) error {
	st, res := z.state, z.res
	var node corev1.Node
	if err := c.Client.Get(ctx, types.NamespacedName{Name: c.NodeName}, &node); err != nil {
		return fmt.Errorf("get node %s: %w", c.NodeName, err)
	}
	changes := map[string]any{}
	if z.step.SetVersion && node.Annotations[cluster.AnnotationLayer2TopologyVersion] != cluster.Layer2TopologyVersionTransitRouter {
		changes[cluster.AnnotationLayer2TopologyVersion] = cluster.Layer2TopologyVersionTransitRouter
	}
	// A network the zone cannot build yet is reported pending with what it waits for:
	// left out, it would read as a zone that never looked at it.
	report := cluster.WaitingNetworks(z.buildErrs)
	for _, n := range st.Networks {
		report[n.Name] = z.taken[n.Name]
		if err := res.NotCompiled[n.Name]; err != nil {
			report[n.Name] = err.Error()
		}
	}
	for name, err := range res.Connects {
		report[cluster.ConnectZoneStatusKey(name)] = ""
		if err != nil {
			report[cluster.ConnectZoneStatusKey(name)] = err.Error()
		}
	}
	value, err := cluster.ZoneStatusCodec.Format(report)
	if err != nil {
		return err
	}
	if node.Annotations[cluster.AnnotationZoneStatus] != value {
		changes[cluster.AnnotationZoneStatus] = value
	}
	if len(changes) == 0 {
		return nil
	}
	return c.patchNode(ctx, changes)
}

// patchNode sets (or, for a nil value, removes) annotations of this node.
func (c *Controller) patchNode(ctx context.Context, annotations map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.NodeName}}
	if err := c.Client.Patch(ctx, node, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("ovnk-zone")); err != nil {
		return fmt.Errorf("annotate node %s: %w", c.NodeName, err)
	}
	return nil
}
