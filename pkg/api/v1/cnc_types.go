package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterNetworkConnect connects the selected networks to each other (OKEP-5224, drafted
// there as VirtualPrivateNetworkConnect): OVN-Kubernetes adds a connect router
// "connect_router_<name>" linked to every selected network's router and routes between
// their pod subnets, addressing the links from connectSubnets.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusternetworkconnects,singular=clusternetworkconnect,scope=Cluster,shortName=cnc
// +kubebuilder:printcolumn:name="Connect Subnets",type=string,JSONPath=".spec.connectSubnets"
// +kubebuilder:printcolumn:name="Connectivity",type=string,JSONPath=".spec.connectivity"
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=".status.status"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ClusterNetworkConnect struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterNetworkConnectSpec `json:"spec"`
	// +optional
	Status ClusterNetworkConnectStatus `json:"status,omitempty"`
}

// ClusterNetworkConnectSpec selects the networks to connect and the address space of the
// links between them.
//
// +kubebuilder:validation:XValidation:rule="self.networkSelectors.all(s, s.networkSelectionType == 'ClusterUserDefinedNetworks' || s.networkSelectionType == 'PrimaryUserDefinedNetworks')",message="networkSelectors may only use networkSelectionType ClusterUserDefinedNetworks or PrimaryUserDefinedNetworks: only those networks have a router to connect",fieldPath=".networkSelectors"
type ClusterNetworkConnectSpec struct {
	// NetworkSelectors selects the networks to connect: ClusterUserDefinedNetworks by
	// label and/or the Primary UserDefinedNetworks of selected namespaces.
	//
	// +required
	NetworkSelectors NetworkSelectors `json:"networkSelectors"`

	// ConnectSubnets is the address space of the links between the connect router and
	// the networks' routers, at most one per IP family. Each connected network gets a
	// networkPrefix-sized block, cut into point-to-point /31 (/127) links, one per
	// node for a Layer3 network and one for a Layer2 network. It must not overlap pod,
	// join, transit, service, masquerade or node subnets, nor the connectSubnets of
	// another ClusterNetworkConnect selecting the same networks. Immutable, because the
	// routers already use addresses from it.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="connectSubnets is immutable: connect routers already use addresses from it; create a new ClusterNetworkConnect to use other subnets"
	// +kubebuilder:validation:XValidation:rule="size(self) != 2 || !isCIDR(self[0].cidr) || !isCIDR(self[1].cidr) || cidr(self[0].cidr).ip().family() != cidr(self[1].cidr).ip().family()",message="two connectSubnets must be one IPv4 and one IPv6 (dual-stack); list at most one per IP family"
	// +kubebuilder:validation:XValidation:rule="size(self) != 2 || !isCIDR(self[0].cidr) || !isCIDR(self[1].cidr) || cidr(self[0].cidr).ip().family() == cidr(self[1].cidr).ip().family() || (cidr(self[0].cidr).ip().family() == 4 ? 32 - self[0].networkPrefix == 128 - self[1].networkPrefix : 128 - self[0].networkPrefix == 32 - self[1].networkPrefix)",message="dual-stack networkPrefix values must leave the same number of host bits, i.e. 32 - IPv4 networkPrefix == 128 - IPv6 networkPrefix, so both families give a network the same number of links"
	// +required
	ConnectSubnets []ConnectSubnet `json:"connectSubnets"`

	// Connectivity lists what the connected networks may reach of each other:
	// PodNetwork (pod to pod) and/or ClusterIPServiceNetwork (ClusterIP services).
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, x == y))",message="connectivity must not list a value twice"
	// +required
	Connectivity []ConnectivityType `json:"connectivity"`
}

// ConnectCIDR is a network address in CIDR notation with no host bits set.
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:XValidation:rule="isCIDR(self) && cidr(self) == cidr(self).masked()",message="must be a network address in CIDR notation with no host bits set, such as 192.168.0.0/16"
type ConnectCIDR string

// ConnectSubnet is one family's connect address space and the size of each network's
// block of it.
//
// +kubebuilder:validation:XValidation:rule="!isCIDR(self.cidr) || self.networkPrefix > cidr(self.cidr).prefixLength()",message="networkPrefix must be a longer prefix than the prefix of cidr, so that every network gets a block of it",fieldPath=".networkPrefix"
// +kubebuilder:validation:XValidation:rule="!isCIDR(self.cidr) || cidr(self.cidr).ip().family() != 4 || self.networkPrefix < 32",message="networkPrefix must be less than 32 for an IPv4 cidr",fieldPath=".networkPrefix"
type ConnectSubnet struct {
	// CIDR is the connect address space of one IP family. OVN allows 32768 tunnel keys
	// per router, so a block larger than a /16 of links cannot be used in full.
	//
	// +required
	CIDR ConnectCIDR `json:"cidr"`

	// NetworkPrefix is the prefix length of each connected network's block, e.g. 24.
	// A Layer3 network uses one /31 (/127) link per node from its block, so the block
	// bounds the number of nodes: a /26 holds 32 links, a /23 holds 256. Leave room
	// for the nodes the cluster will grow to; it cannot be changed later.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=127
	// +required
	NetworkPrefix int32 `json:"networkPrefix"`
}

// ConnectivityType is one kind of reachability between connected networks.
// +kubebuilder:validation:Enum=PodNetwork;ClusterIPServiceNetwork
type ConnectivityType string

const (
	// ConnectivityPodNetwork lets pods of connected networks reach each other directly.
	ConnectivityPodNetwork ConnectivityType = "PodNetwork"
	// ConnectivityClusterIPServiceNetwork lets pods reach the ClusterIP services of
	// the other connected networks.
	ConnectivityClusterIPServiceNetwork ConnectivityType = "ClusterIPServiceNetwork"
)

// ConnectStatus summarises whether a ClusterNetworkConnect is in effect.
// +kubebuilder:validation:Enum=Success;Failure
type ConnectStatus string

const (
	// ConnectStatusSuccess: the connection is programmed.
	ConnectStatusSuccess ConnectStatus = "Success"
	// ConnectStatusFailure: the connection could not be programmed; see the conditions.
	ConnectStatusFailure ConnectStatus = "Failure"
)

// ClusterNetworkConnectStatus is what the controllers observed about a
// ClusterNetworkConnect.
type ClusterNetworkConnectStatus struct {
	// Status is Success or Failure, a summary of the conditions.
	// +optional
	Status ConnectStatus `json:"status,omitempty"`

	// Conditions, one per type.
	//
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterNetworkConnectList is a list of ClusterNetworkConnects.
//
// +kubebuilder:object:root=true
type ClusterNetworkConnectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterNetworkConnect `json:"items"`
}
