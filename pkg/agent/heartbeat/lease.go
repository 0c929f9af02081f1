// Package heartbeat publishes each node agent's liveness and state in a Lease of its own,
// the way the kubelet publishes node leases: the agent on node N renews the Lease
// ovnk-agent-N in the agent's namespace every few seconds, and its annotations say which
// version runs, when the zone was last reconciled, the last reconcile error, whether this
// agent leads and whether it reaches its NB and its node's OVS. `kubectl ovnk status`
// reads them.
//
// This file is the Lease's format, shared by the writer (Heartbeat) and the readers
// (Parse); heartbeat.go writes it.
package heartbeat

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Annotations of a heartbeat Lease.
const (
	// AnnotationVersion is the agent's build version (pkg/version).
	AnnotationVersion = "ovnk.io/agent-version"
	// AnnotationLastReconcile is the RFC 3339 time of the zone's last successful
	// reconcile; absent until the first one.
	AnnotationLastReconcile = "ovnk.io/last-reconcile"
	// AnnotationLastError is the error of the zone's last reconcile; absent when the last
	// reconcile succeeded (or none has finished yet).
	AnnotationLastError = "ovnk.io/last-error"
	// AnnotationLeader is "true" while this agent holds the leader Lease and does the
	// cluster-wide work, else "false".
	AnnotationLeader = "ovnk.io/leader"
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
)

// Labels of a heartbeat Lease, so that `kubectl get leases -l
// app.kubernetes.io/component=heartbeat` lists them.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelComponent = "app.kubernetes.io/component"
	// NameAgent is the value of LabelName, the agent's name.
	NameAgent = "ovnk-agent"
	// ComponentHeartbeat is the value of LabelComponent.
	ComponentHeartbeat = "heartbeat"
)

// LeasePrefix starts the name of every heartbeat Lease.
const LeasePrefix = "ovnk-agent-"

// reservedNodes are node names whose plain Lease name would be one of the agent's other
// Leases: "ovnk-agent-leader" is the leader-election Lease's default name.
var reservedNodes = map[string]bool{"leader": true}

// hashLength is the number of hex digits of the node name's hash in a shortened name.
const hashLength = 10

// LeaseName is the name of node's heartbeat Lease: "ovnk-agent-<node>". A node name is
// a DNS subdomain, so that is a valid Lease name unless it becomes too long (node names
// may have 253 characters, and so may the Lease's) or is the leader Lease's default
// name (a node called "leader"); then the name is "ovnk-agent-<start of node>-<hash of
// node>", still unique per node and valid. Readers find a node's Lease by this function,
// never by listing, so the agent needs no list permission.
func LeaseName(node string) string {
	name := LeasePrefix + node
	if !reservedNodes[node] && len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(node))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashLength]
	keep := min(len(node), validation.DNS1123SubdomainMaxLength-len(LeasePrefix)-len(suffix))
	// A cut may end on "." or "-", which may not end a DNS label.
	return LeasePrefix + strings.TrimRight(node[:keep], ".-") + suffix
}

// Status is what a heartbeat Lease says about one node's agent.
type Status struct {
	// Node is the Lease's holder, the node the agent serves.
	Node string
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
	// OVSUnreachable is true when the agent says it cannot reach its node's Open
	// vSwitch database. An agent that says nothing about it (it does no node part) is
	// not taken for one that cannot.
	OVSUnreachable bool
	// Layer2Phase is where the node is in the Layer2 topology upgrade; "" if unknown.
	Layer2Phase string
	// RenewTime is when the agent last renewed the Lease; zero if it never did.
	RenewTime time.Time
	// Duration is how long after RenewTime the heartbeat counts as fresh.
	Duration time.Duration
}

// Fresh reports whether the agent renewed its Lease recently enough at now: renewTime
// plus leaseDurationSeconds is not past.
func (s Status) Fresh(now time.Time) bool {
	return !s.RenewTime.IsZero() && !now.After(s.RenewTime.Add(s.Duration))
}

// Parse reads a heartbeat Lease. A Lease whose annotations do not parse is an error
// naming the Lease and the annotation.
func Parse(lease *coordinationv1.Lease) (Status, error) {
	s := Status{Version: lease.Annotations[AnnotationVersion], LastError: lease.Annotations[AnnotationLastError],
		Layer2Phase: lease.Annotations[AnnotationLayer2Phase]}
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
			return Status{}, fmt.Errorf("lease %s/%s: annotation %s %q is not an RFC 3339 time", lease.Namespace, lease.Name, AnnotationLastReconcile, v)
		}
		s.LastReconcile = t
	}
	var err error
	if s.Leader, err = parseBool(lease, AnnotationLeader); err != nil {
		return Status{}, err
	}
	if s.NBConnected, err = parseBool(lease, AnnotationNBConnected); err != nil {
		return Status{}, err
	}
	if _, ok := lease.Annotations[AnnotationOVSReachable]; ok {
		reachable, err := parseBool(lease, AnnotationOVSReachable)
		if err != nil {
			return Status{}, err
		}
		s.OVSUnreachable = !reachable
	}
	return s, nil
}

// parseBool reads a "true"/"false" annotation; a missing one is false.
func parseBool(lease *coordinationv1.Lease, key string) (bool, error) {
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
