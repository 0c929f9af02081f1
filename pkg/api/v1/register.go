package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every kind in this package, shared with upstream
// OVN-Kubernetes.
const GroupName = "k8s.ovn.org"

// SchemeGroupVersion is the group and version of the kinds in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// Resource returns the group-qualified resource for a plural resource name, as
// apierrors expect it.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder collects the functions that register this package's kinds.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers every kind of this package, with its list kind, in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&UserDefinedNetwork{}, &UserDefinedNetworkList{},
		&ClusterUserDefinedNetwork{}, &ClusterUserDefinedNetworkList{},
		&ClusterNetworkConnect{}, &ClusterNetworkConnectList{},
		&EgressIP{}, &EgressIPList{},
		&RouteAdvertisements{}, &RouteAdvertisementsList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
