package networkcmd

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// network is a ClusterUserDefinedNetwork or a UserDefinedNetwork, seen through what
// the commands show of either. Exactly one of the two is set.
type network struct {
	cudn *ovnkv1.ClusterUserDefinedNetwork
	udn  *ovnkv1.UserDefinedNetwork
}

func (n network) object() client.Object {
	if n.cudn != nil {
		return n.cudn
	}
	return n.udn
}

func (n network) cluster() bool { return n.cudn != nil }

func (n network) name() string { return n.object().GetName() }

// namespace is the UserDefinedNetwork's namespace, "" for a ClusterUserDefinedNetwork.
func (n network) namespace() string { return n.object().GetNamespace() }

// ref is how the commands take the network as an argument: NAME for a cluster network,
// NAMESPACE/NAME for a namespaced one.
func (n network) ref() string {
	if n.cluster() {
		return n.name()
	}
	return n.namespace() + "/" + n.name()
}

// resourceType names the kind as kubectl does in messages: kind.group.
func (n network) resourceType() string {
	if n.cluster() {
		return "clusteruserdefinednetwork." + ovnkv1.GroupName
	}
	return "userdefinednetwork." + ovnkv1.GroupName
}

func (n network) kind() string {
	if n.cluster() {
		return "ClusterUserDefinedNetwork"
	}
	return "UserDefinedNetwork"
}

// ovnName is the network's name in OVN-Kubernetes, the key of its entries in the
// nodes' zone-status reports.
func (n network) ovnName() string {
	if n.cluster() {
		return cluster.CUDNNetworkName(n.name())
	}
	return cluster.UDNNetworkName(n.namespace(), n.name())
}

// spec is the network description; a UserDefinedNetwork's has no transport.
func (n network) spec() ovnkv1.NetworkSpec {
	if n.cluster() {
		return n.cudn.Spec.Network
	}
	return ovnkv1.NetworkSpec{Topology: n.udn.Spec.Topology, Layer3: n.udn.Spec.Layer3, Layer2: n.udn.Spec.Layer2}
}

func (n network) conditions() []metav1.Condition {
	if n.cluster() {
		return n.cudn.Status.Conditions
	}
	return n.udn.Status.Conditions
}

func (n network) role() ovnkv1.NetworkRole {
	s := n.spec()
	switch {
	case s.Layer3 != nil:
		return s.Layer3.Role
	case s.Layer2 != nil:
		return s.Layer2.Role
	}
	return ""
}

func (n network) mtu() int32 {
	s := n.spec()
	switch {
	case s.Layer3 != nil:
		return s.Layer3.MTU
	case s.Layer2 != nil:
		return s.Layer2.MTU
	}
	return 0
}

// subnets are the pod subnets' CIDRs as written.
func (n network) subnets() []string {
	s := n.spec()
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

func (n network) joinSubnets() []string {
	s := n.spec()
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

// transport is the east-west transport, Geneve unless a cluster network says otherwise.
func (n network) transport() ovnkv1.TransportOption {
	return cmp.Or(n.spec().Transport, ovnkv1.TransportOptionGeneve)
}

// serves reports whether the network is a network of namespace ns, whose labels are
// nsLabels: a UserDefinedNetwork serves its own namespace, a ClusterUserDefinedNetwork
// those its selector matches. An unparsable selector serves nothing, as upstream.
func (n network) serves(ns string, nsLabels map[string]string) bool {
	if !n.cluster() {
		return n.namespace() == ns
	}
	sel, err := metav1.LabelSelectorAsSelector(&n.cudn.Spec.NamespaceSelector)
	return err == nil && sel.Matches(labels.Set(nsLabels))
}

// sortNetworks orders cluster networks first, then namespaced ones by namespace/name.
func sortNetworks(nets []network) {
	slices.SortFunc(nets, func(a, b network) int {
		if a.cluster() != b.cluster() {
			if a.cluster() {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.ref(), b.ref())
	})
}
