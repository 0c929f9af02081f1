// Package heartbeat is the agent's side of its heartbeat Lease: it renews the Lease
// of its node every few seconds, the way the kubelet renews node leases, and publishes
// its state in it. The Lease's format, which `kubectl ovnk status` reads too, is
// pkg/cluster's (HeartbeatLeaseName, AgentReport, ParseHeartbeat).
package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// Defaults of Heartbeat's periods, the kubelet's for its node leases.
const (
	// DefaultRenewInterval is how often the Lease is renewed when nothing changes.
	DefaultRenewInterval = 10 * time.Second
	// leaseDurationFactor makes the Lease's duration this many renew intervals, so that
	// a few failed renewals in a row do not yet make the agent look dead.
	leaseDurationFactor = 4
	// checkInterval is how often the sources are read for a change to publish at once.
	checkInterval = time.Second
)

// Heartbeat keeps one node's heartbeat Lease up to date. It is a controller-runtime
// Runnable that runs on every replica, leader or not.
//
// The Lease is written when it is due for renewal (RenewInterval after the last write)
// and when what it reports changes: the version, the last error, leadership, the NB
// connection, whether OVS is reachable, or the first successful reconcile. A newer
// last-reconcile time alone waits for the next renewal, so a busy zone does not turn
// into a stream of Lease writes.
type Heartbeat struct {
	// Client reads and writes the Lease. It must not read through a cache: the agent may
	// get, create and update Leases in its namespace, but not list or watch them.
	Client client.Client
	// Namespace holds the Lease: the agent's namespace.
	Namespace string
	// NodeName is the agent's node: the Lease's holder, and its name
	// (cluster.HeartbeatLeaseName).
	NodeName string
	// Version is the agent's build version.
	Version string
	// Zone returns the time of the zone's last successful reconcile (zero before the
	// first) and the error of the last reconcile (nil if it succeeded).
	Zone func() (time.Time, error)
	// Leader reports whether this agent holds the leader Lease.
	Leader func() bool
	// NBConnected reports whether the agent is connected to its NB.
	NBConnected func() bool
	// NBDown says why the agent is not connected to its NB (naming the endpoint); it
	// is asked only while NBConnected is false. Its answer starts the last error, and
	// the loss of the connection and its return are logged once each, within a
	// second: the NB client reconnects without a word. Nil reports no reason.
	NBDown func(ctx context.Context) error
	// OVSDown says why the agent cannot reach its node's Open vSwitch database, nil
	// while it can; nil for an agent that does no node part, which then reports
	// nothing. It is asked once per sync, and its answer is both the reachability
	// annotation and the start of the last error, so the two always agree.
	OVSDown func(ctx context.Context) error
	// Layer2Phase returns where the node is in the Layer2 topology upgrade; "" before
	// the zone's first reconcile. Nil reports nothing.
	Layer2Phase func() string
	// NodeProblem says why the node is not ready for OVN although the zone is
	// reconciled (a malformed annotation of the node), nil if nothing. Nil reports
	// nothing.
	NodeProblem func() error
	// RenewInterval is the renewal period; 0 means DefaultRenewInterval. The Lease's
	// duration is four of them.
	RenewInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// lease is the Lease as last written or read; nil until read, and after a write
	// failed in a way that makes it stale.
	lease *coordinationv1.Lease
	// lastErr is the message of the last failed sync, so a failure repeating every
	// check is logged once.
	lastErr string
	// nbLost is set while the NB connection is lost, so the loss is logged once.
	nbLost bool
}

// NeedLeaderElection is false: every agent publishes its heartbeat.
func (h *Heartbeat) NeedLeaderElection() bool { return false }

// Start syncs the Lease at once and then every second until ctx ends. A failed sync is
// logged and retried at the next check; it never stops the agent.
func (h *Heartbeat) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithValues("lease", h.Namespace+"/"+cluster.HeartbeatLeaseName(h.NodeName))
	ticker := time.NewTicker(checkInterval)
	defer ticker.Stop()
	for {
		_, err := h.Sync(ctx)
		switch {
		case err != nil && err.Error() != h.lastErr:
			logger.Error(err, "cannot publish the heartbeat; retrying every second")
			h.lastErr = err.Error()
		case err == nil && h.lastErr != "":
			logger.Info("heartbeat published again")
			h.lastErr = ""
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Sync writes the Lease if it is due for renewal or what it reports changed, and
// reports whether it wrote.
func (h *Heartbeat) Sync(ctx context.Context) (bool, error) {
	name := cluster.HeartbeatLeaseName(h.NodeName)
	if h.lease == nil {
		var lease coordinationv1.Lease
		err := h.Client.Get(ctx, types.NamespacedName{Namespace: h.Namespace, Name: name}, &lease)
		switch {
		case apierrors.IsNotFound(err):
			return true, h.create(ctx, name)
		case err != nil:
			return false, fmt.Errorf("get lease %s/%s: %w", h.Namespace, name, err)
		}
		h.lease = &lease
	}
	now := h.now()
	annotations := h.annotations(ctx, h.lease.Annotations)
	if !h.due(now) && !changed(h.lease.Annotations, annotations) && h.holds() {
		return false, nil
	}
	next := h.lease.DeepCopy()
	next.Annotations = annotations
	next.Labels = cluster.HeartbeatLabels(next.Labels)
	h.fillSpec(next, now)
	if err := h.Client.Update(ctx, next); err != nil {
		// Someone else changed or deleted the Lease: read it again at the next check.
		h.lease = nil
		return false, fmt.Errorf("renew lease %s/%s: %w", h.Namespace, name, err)
	}
	h.lease = next
	return true, nil
}

// create makes the Lease the first time.
func (h *Heartbeat) create(ctx context.Context, name string) error {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Namespace:   h.Namespace,
		Name:        name,
		Labels:      cluster.HeartbeatLabels(nil),
		Annotations: h.annotations(ctx, nil),
	}}
	h.fillSpec(lease, h.now())
	if err := h.Client.Create(ctx, lease); err != nil {
		return fmt.Errorf("create lease %s/%s: %w", h.Namespace, name, err)
	}
	h.lease = lease
	return nil
}

// fillSpec sets the Lease's holder and timing for a renewal at now.
func (h *Heartbeat) fillSpec(lease *coordinationv1.Lease, now time.Time) {
	t := metav1.NewMicroTime(now)
	if !h.holds() || lease.Spec.AcquireTime == nil {
		lease.Spec.AcquireTime = &t
	}
	lease.Spec.HolderIdentity = ptr.To(h.NodeName)
	lease.Spec.LeaseDurationSeconds = ptr.To(h.leaseDurationSeconds())
	lease.Spec.RenewTime = &t
}

// holds reports whether the Lease read or written last names this node as its holder.
func (h *Heartbeat) holds() bool {
	return h.lease != nil && ptr.Deref(h.lease.Spec.HolderIdentity, "") == h.NodeName
}

// due reports whether the Lease needs renewing at now.
func (h *Heartbeat) due(now time.Time) bool {
	renewed := h.lease.Spec.RenewTime
	return renewed == nil || !now.Before(renewed.Add(h.renewInterval()))
}

// annotations returns current with this heartbeat's annotations set from the sources;
// annotations others put on the Lease stay.
func (h *Heartbeat) annotations(ctx context.Context, current map[string]string) map[string]string {
	succeeded, lastErr := h.Zone()
	r := cluster.AgentReport{
		Version:       h.Version,
		LastReconcile: succeeded,
		Leader:        h.Leader(),
		NBConnected:   h.NBConnected(),
		Layer2Phase:   h.layer2Phase(),
	}
	var nbErr error
	if !r.NBConnected && h.NBDown != nil {
		nbErr = h.NBDown(ctx)
	}
	h.noteNB(ctx, r.NBConnected, nbErr)
	if h.NodeProblem != nil {
		if err := h.NodeProblem(); err != nil {
			r.NodeProblem = err.Error()
		}
	}
	if h.OVSDown != nil {
		// The zone controller only finds out at its next reconcile, and even then
		// only as timeouts: OVSDB clients wait through a reconnect.
		down := h.OVSDown(ctx)
		r.OVSReported, r.OVSReachable = true, down == nil
		lastErr = errors.Join(down, lastErr)
	}
	if lastErr = errors.Join(nbErr, lastErr); lastErr != nil {
		r.LastError = lastErr.Error()
	}
	return r.Annotate(current)
}

// noteNB logs the loss of the NB connection when it is first seen, and its return.
func (h *Heartbeat) noteNB(ctx context.Context, connected bool, why error) {
	logger := log.FromContext(ctx)
	switch {
	case !connected && !h.nbLost:
		h.nbLost = true
		if why == nil {
			why = errors.New("the NB client is not connected")
		}
		logger.Error(why, "lost the connection to the OVN northbound database; the client reconnects on its own")
	case connected && h.nbLost:
		h.nbLost = false
		logger.Info("connected to the OVN northbound database again")
	}
}

// changed reports whether want says something have does not: any annotation but the
// last reconcile's time, which only matters once it first appears.
func changed(have, want map[string]string) bool {
	for _, key := range []string{cluster.AnnotationAgentVersion, cluster.AnnotationAgentLeader, cluster.AnnotationNBConnected, cluster.AnnotationOVSReachable, cluster.AnnotationLastError, cluster.AnnotationLayer2Phase, cluster.AnnotationNodeProblem} {
		h, hok := have[key]
		w, wok := want[key]
		if h != w || hok != wok {
			return true
		}
	}
	_, had := have[cluster.AnnotationLastReconcile]
	_, has := want[cluster.AnnotationLastReconcile]
	return had != has
}

func (h *Heartbeat) renewInterval() time.Duration {
	if h.RenewInterval > 0 {
		return h.RenewInterval
	}
	return DefaultRenewInterval
}

// leaseDurationSeconds is the Lease's duration: leaseDurationFactor renew intervals,
// in whole seconds (rounded up, at least one: the API refuses 0).
func (h *Heartbeat) leaseDurationSeconds() int32 {
	d := leaseDurationFactor * h.renewInterval()
	return int32(max(1, (d+time.Second-1)/time.Second))
}

func (h *Heartbeat) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Heartbeat) layer2Phase() string {
	if h.Layer2Phase == nil {
		return ""
	}
	return h.Layer2Phase()
}
