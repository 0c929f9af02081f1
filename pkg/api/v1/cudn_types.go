package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterUserDefinedNetwork asks for one network shared by every namespace its
// namespaceSelector matches. OVN-Kubernetes names it "cluster_udn_<name>". Only a
// ClusterUserDefinedNetwork can choose its transport (OKEP-5259).
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clusteruserdefinednetworks,singular=clusteruserdefinednetwork,scope=Cluster,shortName=cudn
// +kubebuilder:printcolumn:name="Topology",type=string,JSONPath=".spec.network.topology"
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=".spec.network['layer3','layer2'].role"
// +kubebuilder:printcolumn:name="Subnets",type=string,JSONPath=".spec.network['layer3','layer2'].subnets"
// +kubebuilder:printcolumn:name="Transport",type=string,JSONPath=".spec.network.transport"
// +kubebuilder:printcolumn:name="Transport Accepted",type=string,JSONPath=".status.conditions[?(@.type==\"TransportAccepted\")].status",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ClusterUserDefinedNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterUserDefinedNetworkSpec `json:"spec"`
	// +optional
	Status ClusterUserDefinedNetworkStatus `json:"status,omitempty"`
}

// ClusterUserDefinedNetworkSpec selects namespaces and describes the network they share.
type ClusterUserDefinedNetworkSpec struct {
	// NamespaceSelector selects the namespaces that get the network. An empty selector
	// selects every namespace.
	//
	// +required
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// Network describes the network.
	//
	// +required
	Network NetworkSpec `json:"network"`
}

// The transport rules below are OKEP-5259's: NoOverlay needs a Layer3 Primary network
// (routing per-node pod subnets over the underlay only works for a routed topology whose
// subnets are the pods' real addresses), and the noOverlay block is required exactly
// when transport is NoOverlay. The OKEP's single "if and only if" rule is split in two so
// that the message says which fix applies.

// NetworkSpec describes a cluster-wide network: its topology, exactly the matching
// topology block, and how traffic between nodes is carried.
//
// +kubebuilder:validation:XValidation:rule="self.topology == 'Layer3' ? has(self.layer3) : !has(self.layer3)",message="layer3 is required when topology is Layer3 and must be omitted otherwise",fieldPath=".layer3"
// +kubebuilder:validation:XValidation:rule="self.topology == 'Layer2' ? has(self.layer2) : !has(self.layer2)",message="layer2 is required when topology is Layer2 and must be omitted otherwise",fieldPath=".layer2"
// +kubebuilder:validation:XValidation:rule="!has(self.transport) || self.transport != 'NoOverlay' || (self.topology == 'Layer3' && has(self.layer3) && self.layer3.role == 'Primary')",message="transport NoOverlay is only supported for topology Layer3 with layer3.role Primary; use a Layer3 Primary network or omit transport to use the Geneve overlay",fieldPath=".transport"
// +kubebuilder:validation:XValidation:rule="!has(self.transport) || self.transport != 'NoOverlay' || has(self.noOverlay)",message="noOverlay is required when transport is NoOverlay: set noOverlay.outboundSNAT (Enabled or Disabled) and noOverlay.routing (Managed or Unmanaged)",fieldPath=".noOverlay"
// +kubebuilder:validation:XValidation:rule="!has(self.noOverlay) || (has(self.transport) && self.transport == 'NoOverlay')",message="noOverlay is only allowed when transport is NoOverlay: remove noOverlay or set transport to NoOverlay",fieldPath=".noOverlay"
// +kubebuilder:validation:XValidation:rule="(has(self.transport) ? self.transport : 'Geneve') == (has(oldSelf.transport) ? oldSelf.transport : 'Geneve')",message="transport is immutable: pods are already wired for the current transport; create a new network to use another transport",fieldPath=".transport"
// +kubebuilder:validation:XValidation:rule="has(self.noOverlay) == has(oldSelf.noOverlay) && (!has(self.noOverlay) || self.noOverlay == oldSelf.noOverlay)",message="noOverlay is immutable: create a new network to change outboundSNAT or routing",fieldPath=".noOverlay"
type NetworkSpec struct {
	// Topology is Layer3 (a subnet per node, routed) or Layer2 (one switch across nodes).
	//
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="topology is immutable: create a new network with the other topology"
	// +required
	Topology NetworkTopology `json:"topology"`

	// Layer3 configures the network when topology is Layer3.
	// +optional
	Layer3 *Layer3Config `json:"layer3,omitempty"`

	// Layer2 configures the network when topology is Layer2.
	// +optional
	Layer2 *Layer2Config `json:"layer2,omitempty"`

	// Transport carries east-west pod traffic: Geneve (the default when omitted)
	// tunnels it between nodes; NoOverlay routes it unencapsulated over the underlay,
	// with the pod subnets advertised by BGP. NoOverlay requires a Layer3 Primary
	// network and the noOverlay block.
	//
	// +optional
	Transport TransportOption `json:"transport,omitempty"`

	// NoOverlay configures a NoOverlay network; required exactly when transport is
	// NoOverlay.
	//
	// +optional
	NoOverlay *NoOverlayConfig `json:"noOverlay,omitempty"`
}

// TransportOption is how pod traffic crosses between nodes.
// +kubebuilder:validation:Enum=NoOverlay;Geneve
type TransportOption string

const (
	// TransportOptionGeneve encapsulates pod traffic between nodes in Geneve tunnels.
	TransportOptionGeneve TransportOption = "Geneve"
	// TransportOptionNoOverlay routes pod traffic between nodes without encapsulation.
	TransportOptionNoOverlay TransportOption = "NoOverlay"
)

// NoOverlayConfig configures a network whose transport is NoOverlay.
type NoOverlayConfig struct {
	// OutboundSNAT decides whether traffic from pods to destinations outside the
	// cluster leaves with the node's address (Enabled; needed when the underlay cannot
	// route pod addresses) or with the pod's own address (Disabled). Traffic between
	// pods is never translated.
	//
	// +required
	OutboundSNAT SNATOption `json:"outboundSNAT"`

	// Routing decides who distributes the pod subnet routes: Managed lets
	// OVN-Kubernetes generate a full-mesh BGP configuration between the nodes;
	// Unmanaged leaves it to the user's RouteAdvertisements and FRRConfigurations.
	//
	// +required
	Routing RoutingOption `json:"routing"`
}

// SNATOption turns source NAT of outbound pod traffic on or off.
// +kubebuilder:validation:Enum=Enabled;Disabled
type SNATOption string

const (
	// SNATEnabled translates outbound pod traffic to the node's address.
	SNATEnabled SNATOption = "Enabled"
	// SNATDisabled keeps the pod's address on outbound traffic.
	SNATDisabled SNATOption = "Disabled"
)

// RoutingOption names who configures the routing of a NoOverlay network.
// +kubebuilder:validation:Enum=Managed;Unmanaged
type RoutingOption string

const (
	// RoutingManaged: OVN-Kubernetes generates the BGP configuration (full mesh).
	RoutingManaged RoutingOption = "Managed"
	// RoutingUnmanaged: the user provides RouteAdvertisements and FRRConfigurations.
	RoutingUnmanaged RoutingOption = "Unmanaged"
)

// ClusterUserDefinedNetworkStatus is what the controllers observed about a
// ClusterUserDefinedNetwork.
type ClusterUserDefinedNetworkStatus struct {
	// Conditions, one per type, e.g. NetworkCreated and TransportAccepted.
	//
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterUserDefinedNetworkList is a list of ClusterUserDefinedNetworks.
//
// +kubebuilder:object:root=true
type ClusterUserDefinedNetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterUserDefinedNetwork `json:"items"`
}
