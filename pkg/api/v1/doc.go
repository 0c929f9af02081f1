// Package v1 holds the Go types of the k8s.ovn.org/v1 API that ovnk reads and writes:
// UserDefinedNetwork, ClusterUserDefinedNetwork, ClusterNetworkConnect, EgressIP and
// RouteAdvertisements.
//
// Field names, JSON tags and enum values follow the released upstream OVN-Kubernetes API,
// so an object written for an upstream cluster decodes here and the other way round. The
// validation that the API server can do on its own (enums, CIDR syntax, dual-stack
// families, the no-overlay rules of OKEP-5259, immutability) is expressed as markers on
// these types and compiled by controller-gen into the CRDs under pkg/manifests/crds, so a
// bad object is refused at admission instead of surfacing later as an agent error.
//
// The printer columns name whole lists (".spec.egressIPs") rather than list elements
// (".spec.egressIPs[*]"), because the API server's table conversion prints only the first
// match of a path: a dual-stack network would look single-stack.
//
// Regenerate the deepcopy functions and the CRDs after changing a type:
//
//	go generate ./pkg/api/...
//
// +kubebuilder:object:generate=true
// +groupName=k8s.ovn.org
// +versionName=v1
package v1

// controller-gen does not delete the CRD of a removed kind: pkg/manifests' tests list the
// exact set of CRDs, so a stale file fails them.
//go:generate go tool controller-gen object paths=. crd:crdVersions=v1 output:crd:dir=../../manifests/crds
