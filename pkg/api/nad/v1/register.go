package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of NetworkAttachmentDefinition, the Network Plumbing
// Working Group's.
const GroupName = "k8s.cni.cncf.io"

// SchemeGroupVersion is the group and version of the kinds in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// Resource is the plural resource name of NetworkAttachmentDefinition, as RBAC rules
// and the CRD's name spell it.
const Resource = "network-attachment-definitions"

var (
	// SchemeBuilder collects the functions that register this package's kinds.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers NetworkAttachmentDefinition and its list kind in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &NetworkAttachmentDefinition{}, &NetworkAttachmentDefinitionList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
