// Package netview is how the plugin's commands read and see the cluster's user-defined
// networks: a network is a ClusterUserDefinedNetwork or a UserDefinedNetwork, seen
// through what the commands show of either, and a Session reads them (with the nodes,
// namespaces and connects the commands show them with) from the API server. The rules
// the leader applies (selection by connects, connectability, the checks between
// networks) are pkg/cluster's; Model reads the networks into pkg/cluster's types so
// that the commands apply those rules, not a copy of them.
package netview

import (
	"cmp"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Network is a ClusterUserDefinedNetwork or a UserDefinedNetwork. Exactly one of the
// two is set.
type Network struct {
	CUDN *ovnkv1.ClusterUserDefinedNetwork
	UDN  *ovnkv1.UserDefinedNetwork
}

// Of is the Network of obj, which is a *ClusterUserDefinedNetwork or a
// *UserDefinedNetwork.
func Of(obj client.Object) Network {
	if c, ok := obj.(*ovnkv1.ClusterUserDefinedNetwork); ok {
		return Network{CUDN: c}
	}
	return Network{UDN: obj.(*ovnkv1.UserDefinedNetwork)}
}

// FromLists is the networks of both lists, the ClusterUserDefinedNetworks first, in
// the lists' order. The networks point into the lists' items.
func FromLists(cudns *ovnkv1.ClusterUserDefinedNetworkList, udns *ovnkv1.UserDefinedNetworkList) []Network {
	nets := make([]Network, 0, len(cudns.Items)+len(udns.Items))
	for i := range cudns.Items {
		nets = append(nets, Network{CUDN: &cudns.Items[i]})
	}
	for i := range udns.Items {
		nets = append(nets, Network{UDN: &udns.Items[i]})
	}
	return nets
}

// Object is the API object.
func (n Network) Object() client.Object {
	if n.CUDN != nil {
		return n.CUDN
	}
	return n.UDN
}

// Cluster reports whether the network is a ClusterUserDefinedNetwork.
func (n Network) Cluster() bool { return n.CUDN != nil }

// Name is the object's name.
func (n Network) Name() string { return n.Object().GetName() }

// Namespace is the UserDefinedNetwork's namespace, "" for a ClusterUserDefinedNetwork.
func (n Network) Namespace() string { return n.Object().GetNamespace() }

// Ref is the network's user-facing name, the one every view shows and the commands
// take as an argument: NAME for a cluster network, NAMESPACE/NAME for a namespaced
// one (UserName of its OVN name).
func (n Network) Ref() string {
	if n.Cluster() {
		return n.Name()
	}
	return n.Namespace() + "/" + n.Name()
}

// ResourceType names the kind as kubectl does in messages: kind.group.
func (n Network) ResourceType() string {
	if n.Cluster() {
		return "clusteruserdefinednetwork." + ovnkv1.GroupName
	}
	return "userdefinednetwork." + ovnkv1.GroupName
}

// Owner names the object as pkg/cluster does.
func (n Network) Owner() cluster.ObjectRef {
	return cluster.ObjectRef{Kind: n.Kind(), Namespace: n.Namespace(), Name: n.Name()}
}

// Kind is the object's kind.
func (n Network) Kind() string {
	if n.Cluster() {
		return "ClusterUserDefinedNetwork"
	}
	return "UserDefinedNetwork"
}

// OVNName is the network's name in OVN-Kubernetes, the key of its entries in the
// nodes' zone-status reports.
func (n Network) OVNName() string {
	if n.Cluster() {
		return cluster.CUDNNetworkName(n.Name())
	}
	return cluster.UDNNetworkName(n.Namespace(), n.Name())
}

// Spec is the network description; a UserDefinedNetwork's has no transport.
func (n Network) Spec() ovnkv1.NetworkSpec {
	if n.Cluster() {
		return n.CUDN.Spec.Network
	}
	return ovnkv1.NetworkSpec{Topology: n.UDN.Spec.Topology, Layer3: n.UDN.Spec.Layer3, Layer2: n.UDN.Spec.Layer2}
}

// Topology is Layer3 or Layer2.
func (n Network) Topology() ovnkv1.NetworkTopology { return n.Spec().Topology }

// Conditions are the object's status conditions.
func (n Network) Conditions() []metav1.Condition {
	if n.Cluster() {
		return n.CUDN.Status.Conditions
	}
	return n.UDN.Status.Conditions
}

// Role is Primary or Secondary.
func (n Network) Role() ovnkv1.NetworkRole {
	s := n.Spec()
	switch {
	case s.Layer3 != nil:
		return s.Layer3.Role
	case s.Layer2 != nil:
		return s.Layer2.Role
	}
	return ""
}

// MTU is the network's own MTU, 0 for the cluster's.
func (n Network) MTU() int32 {
	s := n.Spec()
	switch {
	case s.Layer3 != nil:
		return s.Layer3.MTU
	case s.Layer2 != nil:
		return s.Layer2.MTU
	}
	return 0
}

// Subnets are the pod subnets' CIDRs as written.
func (n Network) Subnets() []string {
	s := n.Spec()
	var out []string
	switch {
	case s.Layer3 != nil:
		for _, sub := range s.Layer3.Subnets {
			out = append(out, string(sub.CIDR))
		}
	case s.Layer2 != nil:
		for _, c := range s.Layer2.Subnets {
			out = append(out, string(c))
		}
	}
	return out
}

// JoinSubnets are the join subnets the network sets itself, as written; none means
// the defaults.
func (n Network) JoinSubnets() []string {
	s := n.Spec()
	var join ovnkv1.DualStackCIDRs
	switch {
	case s.Layer3 != nil:
		join = s.Layer3.JoinSubnets
	case s.Layer2 != nil:
		join = s.Layer2.JoinSubnets
	}
	out := make([]string, len(join))
	for i, c := range join {
		out[i] = string(c)
	}
	return out
}

// Transport is the east-west transport, Geneve unless a cluster network says otherwise.
func (n Network) Transport() ovnkv1.TransportOption {
	return cmp.Or(n.Spec().Transport, ovnkv1.TransportOptionGeneve)
}

// Namespaces names the namespaces the network serves, by pkg/cluster's rule: a
// UserDefinedNetwork its own, a ClusterUserDefinedNetwork those of nsLabels (every
// namespace's labels) its selector matches (cluster.CUDNNamespaces), sorted. A
// selector that does not parse is the leader's error: the spec is invalid, and the
// network serves none.
func (n Network) Namespaces(nsLabels map[string]map[string]string) ([]string, error) {
	if !n.Cluster() {
		return []string{n.Namespace()}, nil
	}
	return cluster.CUDNNamespaces(n.CUDN, namespaceObjects(nsLabels))
}

// UserName is how users name the network OVN calls ovnName, as Ref names a network
// object and `network describe` takes it: a UserDefinedNetwork NAMESPACE/NAME, a
// ClusterUserDefinedNetwork NAME, the default network "default". Every view names
// networks so; the OVN name is shown only where it is asked for (describe, -o wide).
func UserName(ovnName string) string { return cluster.UserNetworkName(ovnName) }

// Statuses of a network in the tables; a network the leader refused shows the reason
// of its NetworkCreated condition instead (SubnetOverlap, PrimaryNetworkConflict, …).
const (
	StatusReady   = "Ready"
	StatusPending = "Pending"
)

// Status is the network's state in a word, and why, from its conditions and every
// node's readiness rs: the reason and message of a NetworkCreated condition that is
// False (the leader refused the network, and no zone will report on it); Ready when
// every node's zone programmed it; else Pending, naming each node that has not and
// why (a cluster without nodes has none to program it).
func (n Network) Status(rs []cluster.NodeReadiness) (status, reason string) {
	if c := meta.FindStatusCondition(n.Conditions(), ovnkv1.ConditionNetworkCreated); c != nil && c.Status == metav1.ConditionFalse {
		return cmp.Or(c.Reason, "NotCreated"), c.Message
	}
	if len(rs) == 0 {
		return StatusPending, "no nodes"
	}
	var why []string
	for _, r := range rs {
		if !r.Ready {
			why = append(why, r.Node+": "+r.Reason)
		}
	}
	if len(why) == 0 {
		return StatusReady, ""
	}
	return StatusPending, strings.Join(why, "; ")
}
