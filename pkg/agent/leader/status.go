package leader

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Reasons of the conditions the leader writes (NetworkCreated's False reasons are the
// Reason constants of the planner).
const (
	// ReasonAllocated: NetworkCreated is True, the network's id and keys are set.
	ReasonAllocated = "Allocated"
	// ReasonProgrammed: NetworkReady is True, every zone programmed the network.
	ReasonProgrammed = "Programmed"
	// ReasonPending: NetworkReady is False, some zones did not program it (yet).
	ReasonPending = "Pending"
	// ReasonNotCreated: NetworkReady is False because NetworkCreated is.
	ReasonNotCreated = "NotCreated"
)

// maxNamedNodes bounds how many pending nodes a NetworkReady message names.
const maxNamedNodes = 3

// planStatuses computes every network's conditions and plans a status write for each
// network whose conditions changed.
func (p *planner) planStatuses(s *snapshot, nets *networks, out *plan) {
	for _, e := range nets.entries {
		conds := networkConditions(e, s)
		if conditionsChanged(conditionsOf(e.obj), conds) {
			out.statuses = append(out.statuses, statusWrite{obj: e.obj, owner: e.name, conditions: conds})
		}
	}
}

// networkConditions returns the conditions the leader owns on a network's object.
func networkConditions(e *netEntry, s *snapshot) []metav1.Condition {
	gen := e.obj.GetGeneration()
	created := metav1.Condition{Type: ovnkv1.ConditionNetworkCreated, ObservedGeneration: gen,
		Status: metav1.ConditionTrue, Reason: ReasonAllocated, Message: allocatedMessage(e)}
	if pr := cmpProblem(e.problem, e.subnetProblem, e.nadProblem); pr != nil {
		created.Status, created.Reason, created.Message = metav1.ConditionFalse, pr.reason, pr.message
	}
	ready := metav1.Condition{Type: cluster.ConditionNetworkReady, ObservedGeneration: gen, Status: metav1.ConditionFalse,
		Reason: ReasonNotCreated, Message: "the network is not created: see condition " + ovnkv1.ConditionNetworkCreated}
	if created.Status == metav1.ConditionTrue {
		ready.Status, ready.Reason, ready.Message = zoneReadiness(e.name, "network", s.nodes)
	}
	conds := []metav1.Condition{created, ready}
	if e.cudn != nil {
		t := transportAccepted(e.cudn, s.ras)
		t.ObservedGeneration = gen
		conds = append(conds, t)
	}
	return conds
}

// cmpProblem returns the first problem that is set.
func cmpProblem(problems ...*problem) *problem {
	for _, pr := range problems {
		if pr != nil {
			return pr
		}
	}
	return nil
}

// allocatedMessage is the message of NetworkCreated True.
func allocatedMessage(e *netEntry) string {
	keys := make([]string, len(e.keys))
	for i, k := range e.keys {
		keys[i] = strconv.Itoa(k)
	}
	msg := fmt.Sprintf("network id %d, tunnel keys %s", e.id, strings.Join(keys, ", "))
	if e.net != nil && e.net.TransitSubnetsChanged {
		transit := make([]string, len(e.net.TransitSubnets))
		for i, t := range e.net.TransitSubnets {
			transit[i] = t.String()
		}
		msg += fmt.Sprintf("; its transit router uses %s because the default transit subnets overlap the network",
			strings.Join(transit, " and "))
	}
	return msg
}

// zoneReadiness aggregates the nodes' ovnk.io/zone-status reports on the entry key, a
// network or a connect (what says which, for messages).
func zoneReadiness(key, what string, nodes []*corev1.Node) (metav1.ConditionStatus, string, string) {
	if len(nodes) == 0 {
		return metav1.ConditionFalse, ReasonPending, fmt.Sprintf("no nodes report on the %s: the cluster has no nodes", what)
	}
	ready := 0
	var pending []string
	for _, n := range nodes {
		why := zoneReason(n, key, what)
		if why == "" {
			ready++
			continue
		}
		pending = append(pending, fmt.Sprintf("node %s: %s", n.Name, why))
	}
	if len(pending) == 0 {
		return metav1.ConditionTrue, ReasonProgrammed, fmt.Sprintf("ready on %d/%d nodes", ready, len(nodes))
	}
	msg := fmt.Sprintf("ready on %d/%d nodes; %s", ready, len(nodes), strings.Join(pending[:min(maxNamedNodes, len(pending))], "; "))
	if len(pending) > maxNamedNodes {
		msg += fmt.Sprintf("; and %d more nodes", len(pending)-maxNamedNodes)
	}
	return metav1.ConditionFalse, ReasonPending, msg
}

// zoneReason is why the node's zone has not programmed the entry key, "" if it has.
func zoneReason(n *corev1.Node, key, what string) string {
	return cluster.ReadZoneReport(n).Readiness(key, what).Reason
}

// transportAccepted is OKEP-5259's TransportAccepted condition of a
// ClusterUserDefinedNetwork: Geneve is always accepted; NoOverlay once a
// RouteAdvertisements that is Accepted advertises the network's pod subnets.
func transportAccepted(c *ovnkv1.ClusterUserDefinedNetwork, ras []*ovnkv1.RouteAdvertisements) metav1.Condition {
	cond := metav1.Condition{Type: ovnkv1.ConditionTransportAccepted}
	if c.Spec.Network.Transport != ovnkv1.TransportOptionNoOverlay {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ovnkv1.ReasonGeneveTransportAccepted, "Geneve transport has been configured."
		return cond
	}
	var notAccepted []string
	for _, ra := range ras {
		if !advertisesPodNetwork(ra, c) {
			continue
		}
		if meta.IsStatusConditionTrue(ra.Status.Conditions, ovnkv1.ConditionAccepted) {
			cond.Status, cond.Reason = metav1.ConditionTrue, ovnkv1.ReasonNoOverlayTransportAccepted
			cond.Message = fmt.Sprintf("Transport has been configured as 'no-overlay': RouteAdvertisements %s advertises the pod subnets. "+
				"ovnk does not program NoOverlay networks yet: the network's zones still carry its traffic between nodes in Geneve tunnels.", ra.Name)
			return cond
		}
		notAccepted = append(notAccepted, ra.Name)
	}
	cond.Status = metav1.ConditionFalse
	if len(notAccepted) == 0 {
		cond.Reason, cond.Message = ovnkv1.ReasonNoOverlayRouteAdvertisementsIsMissing, "No RouteAdvertisements CR is advertising the pod networks."
		return cond
	}
	cond.Reason = ovnkv1.ReasonNoOverlayRouteAdvertisementsNotAccepted
	cond.Message = fmt.Sprintf("RouteAdvertisements CR %s advertises the pod subnets, but its status is not accepted.", strings.Join(notAccepted, ", "))
	return cond
}

// advertisesPodNetwork reports whether ra advertises the pod subnets of CUDN c.
func advertisesPodNetwork(ra *ovnkv1.RouteAdvertisements, c *ovnkv1.ClusterUserDefinedNetwork) bool {
	podNetwork := false
	for _, a := range ra.Spec.Advertisements {
		podNetwork = podNetwork || a == ovnkv1.AdvertisePodNetwork
	}
	if !podNetwork {
		return false
	}
	for _, sel := range ra.Spec.NetworkSelectors {
		if sel.NetworkSelectionType != ovnkv1.ClusterUserDefinedNetworks || sel.ClusterUserDefinedNetworkSelector == nil {
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(&sel.ClusterUserDefinedNetworkSelector.NetworkSelector)
		if err == nil && s.Matches(labels.Set(c.Labels)) {
			return true
		}
	}
	return false
}

// conditionsOf returns the conditions of a ClusterUserDefinedNetwork,
// UserDefinedNetwork or ClusterNetworkConnect.
func conditionsOf(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *ovnkv1.ClusterUserDefinedNetwork:
		return o.Status.Conditions
	case *ovnkv1.UserDefinedNetwork:
		return o.Status.Conditions
	case *ovnkv1.ClusterNetworkConnect:
		return o.Status.Conditions
	}
	return nil
}

// statusChanged reports whether writing s would change obj's status.
func statusChanged(obj client.Object, s statusWrite) bool {
	if c, ok := obj.(*ovnkv1.ClusterNetworkConnect); ok && c.Status.Status != s.connectStatus {
		return true
	}
	return conditionsChanged(conditionsOf(obj), s.conditions)
}

// conditionsChanged reports whether setting want on have would change anything but
// transition times.
func conditionsChanged(have, want []metav1.Condition) bool {
	for _, w := range want {
		h := meta.FindStatusCondition(have, w.Type)
		if h == nil || h.Status != w.Status || h.Reason != w.Reason || h.Message != w.Message || h.ObservedGeneration != w.ObservedGeneration {
			return true
		}
	}
	return false
}
