package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The heartbeat Lease is ovnk's own wire format (upstream has no such thing): the agent
// on node N renews the Lease HeartbeatLeaseName(N) in the agent's namespace every few
// seconds, the way the kubelet renews node leases, and its annotations say which
// version runs, when the zone was last reconciled, the last reconcile error, whether
// the agent leads and whether it reaches its NB and its node's OVS. The agent writes it
// (pkg/agent/heartbeat); `kubectl ovnk status` and `upgrade` read it. Both sides use
// this file, so the format exists once.

// Annotations of a heartbeat Lease.
const (
	// AnnotationAgentVersion is the agent's build version (pkg/version).
	AnnotationAgentVersion = "ovnk.io/agent-version"
	// AnnotationLastReconcile is the RFC 3339 time of the zone's last successful
	// reconcile; absent until the first one.
	AnnotationLastReconcile = "ovnk.io/last-reconcile"
	// AnnotationLastError is the error of the zone's last reconcile; absent when the last
	// reconcile succeeded (or none has finished yet).
	AnnotationLastError = "ovnk.io/last-error"
	// AnnotationAgentLeader is "true" while this agent holds the leader Lease and does
	// the cluster-wide work, else "false".
	AnnotationAgentLeader = "ovnk.io/leader"
	// AnnotationNBConnected is "true" while the agent is connected to its node's OVN
	// northbound database, else "false".
	AnnotationNBConnected = "ovnk.io/nb-connected"
	// AnnotationOVSReachable is "false" while the agent, which does its node's own part,
	// cannot reach the node's Open vSwitch database, else "true"; absent when the agent
	// does no node part (--node-dataplane=false).
	AnnotationOVSReachable = "ovnk.io/ovs-reachable"
	// AnnotationLayer2Phase is where the agent's node is in the Layer2 topology upgrade
	// (legacy, blocked, converting, upgraded); absent before its first reconcile.
	AnnotationLayer2Phase = "ovnk.io/layer2-topology-phase"
	// AnnotationNodeProblem says why the agent's node is not ready for OVN although the
	// agent runs and reconciles: an annotation of the node does not parse (its zone and
	// the others keep its last good value meanwhile). Absent when there is nothing.
	AnnotationNodeProblem = "ovnk.io/node-problem"
)

// Labels of a heartbeat Lease, so that `kubectl get leases -l
// app.kubernetes.io/component=heartbeat` lists them.
const (
	LabelAppName      = "app.kubernetes.io/name"
	LabelAppComponent = "app.kubernetes.io/component"
	// AgentAppName is the value of LabelAppName, the agent's name.
	AgentAppName = "ovnk-agent"
	// HeartbeatComponent is the value of LabelAppComponent.
	HeartbeatComponent = "heartbeat"
)

// HeartbeatLeasePrefix starts the name of every heartbeat Lease.
const HeartbeatLeasePrefix = "ovnk-agent-"

// reservedHeartbeatNodes are node names whose plain Lease name would be one of the
// agent's other Leases: "ovnk-agent-leader" is the leader-election Lease's default name.
var reservedHeartbeatNodes = map[string]bool{"leader": true}

// heartbeatHashLength is the number of hex digits of the node name's hash in a
// shortened name.
const heartbeatHashLength = 10

// HeartbeatLeaseName is the name of node's heartbeat Lease: "ovnk-agent-<node>". A
// node name is a DNS subdomain, so that is a valid Lease name unless it becomes too
// long (node names may have 253 characters, and so may the Lease's) or is the leader
// Lease's default name (a node called "leader"); then the name is
// "ovnk-agent-<start of node>-<hash of node>", still unique per node and valid. Readers
// find a node's Lease by this function, never by listing, so the agent needs no list
// permission.
func HeartbeatLeaseName(node string) string {
	name := HeartbeatLeasePrefix + node
	if !reservedHeartbeatNodes[node] && len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(node))
	suffix := "-" + hex.EncodeToString(sum[:])[:heartbeatHashLength]
	keep := min(len(node), validation.DNS1123SubdomainMaxLength-len(HeartbeatLeasePrefix)-len(suffix))
	// A cut may end on "." or "-", which may not end a DNS label.
	return HeartbeatLeasePrefix + strings.TrimRight(node[:keep], ".-") + suffix
}

// HeartbeatLabels returns current with the heartbeat Lease's labels set.
func HeartbeatLabels(current map[string]string) map[string]string {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	out[LabelAppName] = AgentAppName
	out[LabelAppComponent] = HeartbeatComponent
	return out
}

// AgentReport is what an agent says about itself in its heartbeat Lease's annotations.
type AgentReport struct {
	// Version is the agent's build version.
	Version string
	// LastReconcile is the time of the zone's last successful reconcile; zero if there
	// was none yet.
	LastReconcile time.Time
	// LastError is the error of the zone's last reconcile, "" if it succeeded.
	LastError string
	// Leader reports whether the agent leads.
	Leader bool
	// NBConnected reports whether the agent reaches its NB.
	NBConnected bool
	// OVSReported says that the agent does its node's own part and so says whether it
	// reaches the node's Open vSwitch database (OVSReachable). An agent that says
	// nothing about it is not taken for one that cannot reach it.
	OVSReported, OVSReachable bool
	// Layer2Phase is where the node is in the Layer2 topology upgrade; "" if unknown.
	Layer2Phase string
	// NodeProblem says why the node is not ready for OVN although the agent works (a
	// malformed annotation of the node); "" if nothing.
	NodeProblem string
}

// OVSUnreachable reports whether the agent says it cannot reach its node's Open
// vSwitch database.
func (r AgentReport) OVSUnreachable() bool { return r.OVSReported && !r.OVSReachable }

// Annotate returns current with the report's annotations set; annotations others put
// on the Lease stay. A zero LastReconcile leaves the one current has: an agent that
// restarted keeps showing when its zone was last reconciled until it reconciles again.
func (r AgentReport) Annotate(current map[string]string) map[string]string {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	setOrDelete := func(key, value string, set bool) {
		if set {
			out[key] = value
		} else {
			delete(out, key)
		}
	}
	out[AnnotationAgentVersion] = r.Version
	out[AnnotationAgentLeader] = formatBool(r.Leader)
	out[AnnotationNBConnected] = formatBool(r.NBConnected)
	setOrDelete(AnnotationOVSReachable, formatBool(r.OVSReachable), r.OVSReported)
	if !r.LastReconcile.IsZero() {
		out[AnnotationLastReconcile] = r.LastReconcile.UTC().Format(time.RFC3339)
	}
	setOrDelete(AnnotationLastError, r.LastError, r.LastError != "")
	setOrDelete(AnnotationLayer2Phase, r.Layer2Phase, r.Layer2Phase != "")
	setOrDelete(AnnotationNodeProblem, r.NodeProblem, r.NodeProblem != "")
	return out
}

// HeartbeatStatus is what a heartbeat Lease says about one node's agent.
type HeartbeatStatus struct {
	AgentReport
	// Node is the Lease's holder, the node the agent serves.
	Node string
	// RenewTime is when the agent last renewed the Lease; zero if it never did.
	RenewTime time.Time
	// Duration is how long after RenewTime the heartbeat counts as fresh.
	Duration time.Duration
}

// Fresh reports whether the agent renewed its Lease recently enough at now: renewTime
// plus leaseDurationSeconds is not past.
func (s HeartbeatStatus) Fresh(now time.Time) bool {
	return !s.RenewTime.IsZero() && !now.After(s.RenewTime.Add(s.Duration))
}

// ParseHeartbeat reads a heartbeat Lease. A Lease whose annotations do not parse is an
// error naming the Lease and the annotation.
func ParseHeartbeat(lease *coordinationv1.Lease) (HeartbeatStatus, error) {
	s := HeartbeatStatus{AgentReport: AgentReport{
		Version:     lease.Annotations[AnnotationAgentVersion],
		LastError:   lease.Annotations[AnnotationLastError],
		Layer2Phase: lease.Annotations[AnnotationLayer2Phase],
		NodeProblem: lease.Annotations[AnnotationNodeProblem],
	}}
	if lease.Spec.HolderIdentity != nil {
		s.Node = *lease.Spec.HolderIdentity
	}
	if lease.Spec.RenewTime != nil {
		s.RenewTime = lease.Spec.RenewTime.Time
	}
	if lease.Spec.LeaseDurationSeconds != nil {
		s.Duration = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	}
	if v, ok := lease.Annotations[AnnotationLastReconcile]; ok {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return HeartbeatStatus{}, fmt.Errorf("lease %s/%s: annotation %s %q is not an RFC 3339 time", lease.Namespace, lease.Name, AnnotationLastReconcile, v)
		}
		s.LastReconcile = t
	}
	var err error
	if s.Leader, err = parseLeaseBool(lease, AnnotationAgentLeader); err != nil {
		return HeartbeatStatus{}, err
	}
	if s.NBConnected, err = parseLeaseBool(lease, AnnotationNBConnected); err != nil {
		return HeartbeatStatus{}, err
	}
	if _, s.OVSReported = lease.Annotations[AnnotationOVSReachable]; s.OVSReported {
		if s.OVSReachable, err = parseLeaseBool(lease, AnnotationOVSReachable); err != nil {
			return HeartbeatStatus{}, err
		}
	}
	return s, nil
}

// parseLeaseBool reads a "true"/"false" annotation; a missing one is false.
func parseLeaseBool(lease *coordinationv1.Lease, key string) (bool, error) {
	switch v, ok := lease.Annotations[key]; {
	case !ok || v == "false":
		return false, nil
	case v == "true":
		return true, nil
	default:
		return false, fmt.Errorf("lease %s/%s: annotation %s %q is neither \"true\" nor \"false\"", lease.Namespace, lease.Name, key, v)
	}
}

// formatBool is the annotation value of b.
func formatBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
