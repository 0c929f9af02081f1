package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// EgressIP gives the traffic that selected pods send out of the cluster a fixed source
// address: one of egressIPs, hosted by a node labelled k8s.ovn.org/egress-assignable.
// For pods on a Primary user-defined network it applies on that network (OKEP-4456).
//
// Unlike the other kinds, EgressIP has no status subresource, as upstream: its
// controller writes the assignments in status.items with ordinary updates, and a status
// subresource here would make those writes silently drop the status.
//
// +genclient
// +genclient:nonNamespaced
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=egressips,singular=egressip,scope=Cluster,shortName=eip
// +kubebuilder:printcolumn:name="EgressIPs",type=string,JSONPath=".spec.egressIPs"
// +kubebuilder:printcolumn:name="Assignments",type=string,JSONPath=".status.items"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type EgressIP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec EgressIPSpec `json:"spec"`

	// omitzero leaves an empty status out of the JSON: the schema requires
	// status.items, as upstream's does, so an EgressIP built in Go must not send
	// "status":{"items":null} when it is created.

	// Status lists where the egress IPs are hosted.
	// +optional
	Status EgressIPStatus `json:"status,omitempty,omitzero"`
}

// EgressIPSpec lists the egress addresses and the pods that use them.
type EgressIPSpec struct {

	// Upstream does not bound egressIPs. Without a bound the API server estimates the
	// per-address isIP rule for the largest possible request and refuses the CRD; 256 is
	// far above any useful number of egress nodes.

	// EgressIPs are the requested source addresses, IPv4 and/or IPv6. Each is hosted
	// by at most one node at a time; traffic is balanced over the assigned ones.
	//
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="each egressIPs entry must be an IPv4 or IPv6 address such as 172.18.0.100, without a prefix length"
	// +required
	EgressIPs []string `json:"egressIPs"`

	// NamespaceSelector selects the namespaces whose pods use the egress IPs.
	//
	// +required
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// PodSelector narrows the pods within those namespaces; when empty, every pod of
	// the selected namespaces uses the egress IPs.
	//
	// +optional
	PodSelector metav1.LabelSelector `json:"podSelector,omitempty"`
}

// EgressIPStatus lists where the egress IPs are hosted.
type EgressIPStatus struct {
	// Items lists each assigned egress IP with the node hosting it; an unassigned egress
	// IP does not appear.
	Items []EgressIPStatusItem `json:"items"`
}

// EgressIPStatusItem is one egress IP and the node that hosts it.
type EgressIPStatusItem struct {
	// Node is the name of the node hosting the address.
	Node string `json:"node"`
	// EgressIP is the assigned address.
	EgressIP string `json:"egressIP"`
}

// EgressIPList is a list of EgressIPs.
//
// +kubebuilder:object:root=true
type EgressIPList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EgressIP `json:"items"`
}
