// Package v1 holds the Go types of Multus' k8s.cni.cncf.io/v1 NetworkAttachmentDefinition,
// the object that names a network for pods (k8s.v1.cni.cncf.io/networks) and carries its
// CNI configuration. Upstream OVN-Kubernetes writes one for every user-defined network
// and keeps the network's id on it; ovnk's leader writes the same ones (docs/leader.md).
//
// The API belongs to the Network Plumbing Working Group's multi-net-spec, not to ovnk:
// the types carry only what the spec defines (spec.config, a JSON string), and the CRD
// generated from them (pkg/manifests, SharedCRDs) is installed only where no other
// project installed it first.
//
// Regenerate the deepcopy functions and the CRD after changing a type:
//
//	go generate ./pkg/api/...
//
// +kubebuilder:object:generate=true
// +groupName=k8s.cni.cncf.io
// +versionName=v1
package v1

//go:generate go tool controller-gen object paths=. crd:crdVersions=v1 output:crd:dir=../../../manifests/sharedcrds
