package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// UserDefinedNetwork asks for a network in its own namespace. As Primary it becomes the
// default network of every pod in the namespace; as Secondary pods attach to it on
// request. OVN-Kubernetes names it "<namespace>_<name>".
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=userdefinednetworks,singular=userdefinednetwork,scope=Namespaced,shortName=udn
// +kubebuilder:printcolumn:name="Topology",type=string,JSONPath=".spec.topology"
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=".spec['layer3','layer2'].role"
// +kubebuilder:printcolumn:name="Subnets",type=string,JSONPath=".spec['layer3','layer2'].subnets"
// +kubebuilder:printcolumn:name="Created",type=string,JSONPath=".status.conditions[?(@.type==\"NetworkCreated\")].status"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type UserDefinedNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec UserDefinedNetworkSpec `json:"spec"`
	// +optional
	Status UserDefinedNetworkStatus `json:"status,omitempty"`
}

// UserDefinedNetworkSpec describes a namespaced network: its topology and exactly the
// matching topology block.
//
// +kubebuilder:validation:XValidation:rule="self.topology == 'Layer3' ? has(self.layer3) : !has(self.layer3)",message="layer3 is required when topology is Layer3 and must be omitted otherwise",fieldPath=".layer3"
// +kubebuilder:validation:XValidation:rule="self.topology == 'Layer2' ? has(self.layer2) : !has(self.layer2)",message="layer2 is required when topology is Layer2 and must be omitted otherwise",fieldPath=".layer2"
type UserDefinedNetworkSpec struct {
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
}

// UserDefinedNetworkStatus is what the controllers observed about a UserDefinedNetwork.
type UserDefinedNetworkStatus struct {
	// Conditions, one per type, e.g. NetworkCreated.
	//
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// UserDefinedNetworkList is a list of UserDefinedNetworks.
//
// +kubebuilder:object:root=true
type UserDefinedNetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []UserDefinedNetwork `json:"items"`
}
