package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// NetworkAttachmentDefinition names a network pods can attach to in its namespace, as
// "<namespace>/<name>", and holds the CNI configuration that attaches them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=network-attachment-definitions,singular=network-attachment-definition,scope=Namespaced,shortName=net-attach-def
type NetworkAttachmentDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NetworkAttachmentDefinitionSpec `json:"spec"`
}

// NetworkAttachmentDefinitionSpec is the attachment's CNI configuration.
type NetworkAttachmentDefinitionSpec struct {
	// Config is a CNI network configuration in JSON. For an OVN-Kubernetes network its
	// type is ovn-k8s-cni-overlay and its name the network's OVN name.
	//
	// +optional
	Config string `json:"config"`
}

// NetworkAttachmentDefinitionList is a list of NetworkAttachmentDefinitions.
//
// +kubebuilder:object:root=true
type NetworkAttachmentDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NetworkAttachmentDefinition `json:"items"`
}
