package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// NetworkSelectors selects networks by kind; it is a map keyed by networkSelectionType,
// so each kind of selector appears at most once. ClusterNetworkConnect and
// RouteAdvertisements each allow only some kinds.
//
// +kubebuilder:validation:MinItems=1
// +kubebuilder:validation:MaxItems=5
// +listType=map
// +listMapKey=networkSelectionType
type NetworkSelectors []NetworkSelector

// NetworkSelector selects networks of one kind. It is a union: the selector field that
// matches networkSelectionType must be set, and no other.
//
// +kubebuilder:validation:XValidation:rule="self.networkSelectionType == 'ClusterUserDefinedNetworks' ? has(self.clusterUserDefinedNetworkSelector) : !has(self.clusterUserDefinedNetworkSelector)",message="clusterUserDefinedNetworkSelector is required when networkSelectionType is ClusterUserDefinedNetworks and must be omitted otherwise"
// +kubebuilder:validation:XValidation:rule="self.networkSelectionType == 'PrimaryUserDefinedNetworks' ? has(self.primaryUserDefinedNetworkSelector) : !has(self.primaryUserDefinedNetworkSelector)",message="primaryUserDefinedNetworkSelector is required when networkSelectionType is PrimaryUserDefinedNetworks and must be omitted otherwise"
// +kubebuilder:validation:XValidation:rule="self.networkSelectionType == 'SecondaryUserDefinedNetworks' ? has(self.secondaryUserDefinedNetworkSelector) : !has(self.secondaryUserDefinedNetworkSelector)",message="secondaryUserDefinedNetworkSelector is required when networkSelectionType is SecondaryUserDefinedNetworks and must be omitted otherwise"
// +kubebuilder:validation:XValidation:rule="self.networkSelectionType == 'NetworkAttachmentDefinitions' ? has(self.networkAttachmentDefinitionSelector) : !has(self.networkAttachmentDefinitionSelector)",message="networkAttachmentDefinitionSelector is required when networkSelectionType is NetworkAttachmentDefinitions and must be omitted otherwise"
type NetworkSelector struct {
	// NetworkSelectionType is the kind of networks selected; DefaultNetwork needs no
	// selector, every other kind needs its matching selector field.
	//
	// +required
	NetworkSelectionType NetworkSelectionType `json:"networkSelectionType"`

	// ClusterUserDefinedNetworkSelector selects ClusterUserDefinedNetworks.
	// +optional
	ClusterUserDefinedNetworkSelector *ClusterUserDefinedNetworkSelector `json:"clusterUserDefinedNetworkSelector,omitempty"`

	// PrimaryUserDefinedNetworkSelector selects Primary UserDefinedNetworks.
	// +optional
	PrimaryUserDefinedNetworkSelector *PrimaryUserDefinedNetworkSelector `json:"primaryUserDefinedNetworkSelector,omitempty"`

	// SecondaryUserDefinedNetworkSelector selects Secondary UserDefinedNetworks.
	// +optional
	SecondaryUserDefinedNetworkSelector *SecondaryUserDefinedNetworkSelector `json:"secondaryUserDefinedNetworkSelector,omitempty"`

	// NetworkAttachmentDefinitionSelector selects networks defined by
	// NetworkAttachmentDefinitions.
	// +optional
	NetworkAttachmentDefinitionSelector *NetworkAttachmentDefinitionSelector `json:"networkAttachmentDefinitionSelector,omitempty"`
}

// NetworkSelectionType is the kind of networks a NetworkSelector selects.
// +kubebuilder:validation:Enum=DefaultNetwork;ClusterUserDefinedNetworks;PrimaryUserDefinedNetworks;SecondaryUserDefinedNetworks;NetworkAttachmentDefinitions
type NetworkSelectionType string

const (
	// DefaultNetwork selects the cluster's default pod network.
	DefaultNetwork NetworkSelectionType = "DefaultNetwork"
	// ClusterUserDefinedNetworks selects ClusterUserDefinedNetworks by label.
	ClusterUserDefinedNetworks NetworkSelectionType = "ClusterUserDefinedNetworks"
	// PrimaryUserDefinedNetworks selects the Primary UserDefinedNetworks of the
	// selected namespaces.
	PrimaryUserDefinedNetworks NetworkSelectionType = "PrimaryUserDefinedNetworks"
	// SecondaryUserDefinedNetworks selects Secondary UserDefinedNetworks by namespace
	// and label.
	SecondaryUserDefinedNetworks NetworkSelectionType = "SecondaryUserDefinedNetworks"
	// NetworkAttachmentDefinitions selects networks defined by
	// NetworkAttachmentDefinitions by namespace and label.
	NetworkAttachmentDefinitions NetworkSelectionType = "NetworkAttachmentDefinitions"
)

// ClusterUserDefinedNetworkSelector selects ClusterUserDefinedNetworks.
type ClusterUserDefinedNetworkSelector struct {
	// NetworkSelector matches ClusterUserDefinedNetwork labels; an empty selector
	// matches all of them.
	//
	// +required
	NetworkSelector metav1.LabelSelector `json:"networkSelector"`
}

// PrimaryUserDefinedNetworkSelector selects the Primary UserDefinedNetworks of
// namespaces.
type PrimaryUserDefinedNetworkSelector struct {
	// NamespaceSelector matches the namespaces whose Primary UserDefinedNetwork is
	// selected.
	//
	// +required
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
}

// SecondaryUserDefinedNetworkSelector selects Secondary UserDefinedNetworks.
type SecondaryUserDefinedNetworkSelector struct {
	// NamespaceSelector matches the namespaces the networks live in.
	//
	// +required
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// NetworkSelector matches UserDefinedNetwork labels within those namespaces.
	//
	// +required
	NetworkSelector metav1.LabelSelector `json:"networkSelector"`
}

// NetworkAttachmentDefinitionSelector selects networks defined by
// NetworkAttachmentDefinitions.
type NetworkAttachmentDefinitionSelector struct {
	// NamespaceSelector matches the namespaces the NetworkAttachmentDefinitions live in.
	//
	// +required
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// NetworkSelector matches NetworkAttachmentDefinition labels within those
	// namespaces.
	//
	// +required
	NetworkSelector metav1.LabelSelector `json:"networkSelector"`
}
