package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RouteAdvertisements asks OVN-Kubernetes to advertise routes of the selected networks
// over BGP: it generates FRRConfigurations (frrk8s.metallb.io/v1beta1) derived from the
// FRRConfigurations that frrConfigurationSelector picks. A NoOverlay network
// (OKEP-5259) with Unmanaged routing relies on one to distribute its pod subnets.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=routeadvertisements,singular=routeadvertisements,scope=Cluster,shortName=ra
// +kubebuilder:printcolumn:name="Advertisements",type=string,JSONPath=".spec.advertisements"
// +kubebuilder:printcolumn:name="VRF",type=string,JSONPath=".spec.targetVRF",priority=1
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=".status.status"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type RouteAdvertisements struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RouteAdvertisementsSpec `json:"spec"`
	// +optional
	Status RouteAdvertisementsStatus `json:"status,omitempty"`
}

// RouteAdvertisementsSpec says what to advertise, for which networks, from which nodes
// and based on which FRR configuration.
//
// +kubebuilder:validation:XValidation:rule="!('PodNetwork' in self.advertisements) || ((!has(self.nodeSelector.matchLabels) || size(self.nodeSelector.matchLabels) == 0) && (!has(self.nodeSelector.matchExpressions) || size(self.nodeSelector.matchExpressions) == 0))",message="nodeSelector must be empty ({}) when advertisements include PodNetwork: every node's pod subnet must be advertised, or traffic to the others would have no route",fieldPath=".nodeSelector"
// +kubebuilder:validation:XValidation:rule="self.networkSelectors.all(s, s.networkSelectionType == 'DefaultNetwork' || s.networkSelectionType == 'ClusterUserDefinedNetworks')",message="networkSelectors may only use networkSelectionType DefaultNetwork or ClusterUserDefinedNetworks",fieldPath=".networkSelectors"
type RouteAdvertisementsSpec struct {
	// TargetVRF is the VRF to advertise the routes in: omitted for the default VRF,
	// "auto" for each network's own VRF (VRF-lite), or the name of a host VRF.
	//
	// +optional
	TargetVRF string `json:"targetVRF,omitempty"`

	// NetworkSelectors selects the networks whose routes are advertised: the default
	// network and/or ClusterUserDefinedNetworks.
	//
	// +required
	NetworkSelectors NetworkSelectors `json:"networkSelectors"`

	// NodeSelector limits the nodes that advertise; it must be empty when advertising
	// PodNetwork.
	//
	// +required
	NodeSelector metav1.LabelSelector `json:"nodeSelector"`

	// FRRConfigurationSelector selects the FRRConfigurations whose BGP peers the
	// generated configuration uses.
	//
	// +required
	FRRConfigurationSelector metav1.LabelSelector `json:"frrConfigurationSelector"`

	// Advertisements lists what is advertised: PodNetwork (the pod subnets) and/or
	// EgressIP (the egress IPs hosted by each node).
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self.all(x, self.exists_one(y, x == y))",message="advertisements must not list a value twice"
	// +required
	Advertisements []AdvertisementType `json:"advertisements"`
}

// AdvertisementType is one kind of route to advertise.
// +kubebuilder:validation:Enum=PodNetwork;EgressIP
type AdvertisementType string

const (
	// AdvertisePodNetwork advertises the selected networks' pod subnets.
	AdvertisePodNetwork AdvertisementType = "PodNetwork"
	// AdvertiseEgressIP advertises the egress IPs that each node hosts.
	AdvertiseEgressIP AdvertisementType = "EgressIP"
)

// ConditionAccepted is the RouteAdvertisements condition that is True once the
// generated FRR configuration has been applied.
const ConditionAccepted = "Accepted"

// RouteAdvertisementsStatus is what the controllers observed about a RouteAdvertisements.
type RouteAdvertisementsStatus struct {
	// Status is a short summary of the conditions, such as "Accepted".
	// +optional
	Status string `json:"status,omitempty"`

	// Conditions, one per type, e.g. Accepted.
	//
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RouteAdvertisementsList is a list of RouteAdvertisements.
//
// +kubebuilder:object:root=true
type RouteAdvertisementsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RouteAdvertisements `json:"items"`
}
