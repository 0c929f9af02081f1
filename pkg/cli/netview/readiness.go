package netview

import (
	"cmp"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// ConditionNetworkAllocationSucceeded is the condition upstream OVN-Kubernetes' cluster
// manager keeps on a network object: True once every node it synced got the network's
// allocations, False naming a node where they failed. ovnk's leader does not set it.
const ConditionNetworkAllocationSucceeded = "NetworkAllocationSucceeded"

// Summary is a network's state across the cluster.
type Summary struct {
	// Status and Reason are as Network.Status says, or, without zone reports, as the
	// conditions say (ConditionStatus).
	Status, Reason string
	// Nodes are each node's readiness from its zone report: its ovnk agent's, or on a
	// cluster run by upstream OVN-Kubernetes one read from its zone
	// (zonereport.Read). Nil when no node has a report and upstream's cluster manager
	// keeps the network's conditions (the zones could not be read): Status then comes
	// from those, which say nothing per node.
	Nodes []cluster.NodeReadiness
	// FromConditions says that Status comes from the conditions.
	FromConditions bool
	// FromZones says that Nodes were read from the zones themselves: no agent
	// reports on them (a cluster run by upstream OVN-Kubernetes).
	FromZones bool
}

// Summarize is n's state given every node's zone report. The reports decide whenever a
// node has one. When none has, or they were read from the zones and none names n, and
// n carries upstream's NetworkAllocationSucceeded condition, the conditions decide
// instead: "no zone report yet" on every node would be wrong on a cluster whose nodes
// never write one.
func (n Network) Summarize(reports []cluster.ZoneReport) Summary {
	if (!cluster.AnyReported(reports) || unjudged(reports, n.OVNName())) && meta.FindStatusCondition(n.Conditions(), ConditionNetworkAllocationSucceeded) != nil {
		status, reason := n.ConditionStatus()
		return Summary{Status: status, Reason: reason, FromConditions: true}
	}
	rs := make([]cluster.NodeReadiness, 0, len(reports))
	for _, z := range reports {
		rs = append(rs, z.Readiness(n.OVNName(), "network"))
	}
	status, reason := n.Status(rs)
	return Summary{Status: status, Reason: reason, Nodes: rs, FromZones: cluster.FromZones(reports)}
}

// unjudged reports whether the reports were read from the zones and none of them names
// the network: one the zones were not judged on (a topology pkg/cluster does not
// model, such as Localnet), which the conditions must judge instead.
func unjudged(reports []cluster.ZoneReport, network string) bool {
	for _, z := range reports {
		if _, named := z.Report[network]; !z.FromZone || named {
			return false
		}
	}
	return true
}

// ConditionStatus is n's state from the conditions upstream OVN-Kubernetes' cluster
// manager publishes: the reason and message of a NetworkCreated that is False (the
// network was refused or its NADs could not be written); Ready when NetworkCreated and
// NetworkAllocationSucceeded are both True; else Pending, with the message of the
// condition that is False or the name of the one not set yet.
func (n Network) ConditionStatus() (status, reason string) {
	conds := n.Conditions()
	created := meta.FindStatusCondition(conds, ovnkv1.ConditionNetworkCreated)
	if created != nil && created.Status == metav1.ConditionFalse {
		return cmp.Or(created.Reason, "NotCreated"), created.Message
	}
	for _, t := range []string{ovnkv1.ConditionNetworkCreated, ConditionNetworkAllocationSucceeded} {
		c := meta.FindStatusCondition(conds, t)
		switch {
		case c == nil:
			return StatusPending, t + " is not set yet"
		case c.Status != metav1.ConditionTrue:
			return StatusPending, t + " is " + string(c.Status) + ": " + cmp.Or(c.Message, c.Reason)
		}
	}
	return StatusReady, ""
}
