package v1

// This file holds the network description shared by UserDefinedNetwork (spec) and
// ClusterUserDefinedNetwork (spec.network): the topology and its Layer3 or Layer2 block.
//
// Everything that shapes the OVN topology is immutable: pods already carry addresses
// from the subnets and interfaces with the MTU, and the agent derives object names,
// tunnel keys and join addresses from these fields. Changing them in place would leave
// running pods on a network that no longer matches their configuration, so the API
// server refuses it and the message says to create a new network instead. Optional
// fields are checked from their parent object with has(), because a rule on a field
// itself does not run when the field is added or removed.

// NetworkTopology is the shape of the OVN topology that implements a network.
// +kubebuilder:validation:Enum=Layer2;Layer3
type NetworkTopology string

const (
	// NetworkTopologyLayer3 gives every node its own switch and subnet (a slice of the
	// network's subnets) behind a cluster router; nodes are joined by a transit switch.
	NetworkTopologyLayer3 NetworkTopology = "Layer3"
	// NetworkTopologyLayer2 stretches one logical switch over all nodes, so the whole
	// subnet is one broadcast domain.
	NetworkTopologyLayer2 NetworkTopology = "Layer2"
)

// NetworkRole tells whether a network is a pod's primary network or an extra interface.
// +kubebuilder:validation:Enum=Primary;Secondary
type NetworkRole string

const (
	// NetworkRolePrimary makes the network the default network of every pod in the
	// selected namespaces: their default route and Kubernetes services use it.
	NetworkRolePrimary NetworkRole = "Primary"
	// NetworkRoleSecondary attaches the network only to pods that request it with the
	// k8s.v1.cni.cncf.io/networks annotation.
	NetworkRoleSecondary NetworkRole = "Secondary"
)

// CIDR is an IPv4 or IPv6 prefix in CIDR notation, e.g. 10.128.0.0/16 or fd00:10::/48,
// at most 43 characters (the longest IPv6 address and /128).
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a CIDR in prefix notation, such as 10.128.0.0/16 or fd00:10:128::/48"
type CIDR string

// DualStackCIDRs lists one CIDR, or two of different IP families for a dual-stack network.
// +kubebuilder:validation:MinItems=1
// +kubebuilder:validation:MaxItems=2
// +kubebuilder:validation:XValidation:rule="size(self) != 2 || !isCIDR(self[0]) || !isCIDR(self[1]) || cidr(self[0]).ip().family() != cidr(self[1]).ip().family()",message="two CIDRs must be one IPv4 and one IPv6 (dual-stack); list at most one CIDR per IP family"
type DualStackCIDRs []CIDR

// Layer3Config configures a Layer3 network.
//
// +kubebuilder:validation:XValidation:rule="!has(self.joinSubnets) || self.role == 'Primary'",message="joinSubnets is only allowed when role is Primary: Secondary networks have no gateway router to join; remove joinSubnets",fieldPath=".joinSubnets"
// +kubebuilder:validation:XValidation:rule="!has(self.mtu) || self.mtu >= 1280 || !self.subnets.exists(s, isCIDR(s.cidr) && cidr(s.cidr).ip().family() == 6)",message="mtu must be at least 1280 when an IPv6 subnet is used (the IPv6 minimum link MTU)",fieldPath=".mtu"
// +kubebuilder:validation:XValidation:rule="(has(self.mtu) ? self.mtu : 0) == (has(oldSelf.mtu) ? oldSelf.mtu : 0)",message="mtu is immutable: pods keep the MTU they were created with; create a new network to use another MTU",fieldPath=".mtu"
// +kubebuilder:validation:XValidation:rule="has(self.joinSubnets) == has(oldSelf.joinSubnets) && (!has(self.joinSubnets) || self.joinSubnets == oldSelf.joinSubnets)",message="joinSubnets is immutable: gateway routers already use addresses from it; create a new network to use other join subnets",fieldPath=".joinSubnets"
type Layer3Config struct {
	// Role is Primary (the pods' default network) or Secondary (an extra interface).
	//
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="role is immutable: create a new network with the other role"
	// +required
	Role NetworkRole `json:"role"`

	// MTU of the pods' interfaces on this network. When omitted, the cluster-wide
	// default (1400 in OVN-Kubernetes) applies.
	//
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=65536
	// +optional
	MTU int32 `json:"mtu,omitempty"`

	// Subnets are the pod subnets of the network, at most one per IP family. Each one
	// is cut into one hostSubnet-sized block per node.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="size(self) != 2 || !isCIDR(self[0].cidr) || !isCIDR(self[1].cidr) || cidr(self[0].cidr).ip().family() != cidr(self[1].cidr).ip().family()",message="two subnets must be one IPv4 and one IPv6 (dual-stack); list at most one subnet per IP family"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="subnets are immutable: pods already have addresses from them; create a new network to use other subnets"
	// +required
	Subnets []Layer3Subnet `json:"subnets"`

	// JoinSubnets address the links between the network's cluster router and the
	// gateway routers, one per IP family. Only for Primary networks. When omitted the
	// defaults apply (100.65.0.0/16 and fd99::/64); set it only when those overlap
	// something else in your network.
	//
	// +optional
	JoinSubnets DualStackCIDRs `json:"joinSubnets,omitempty"`
}

// Layer3Subnet is one pod subnet of a Layer3 network and the size of its per-node blocks.
//
// +kubebuilder:validation:XValidation:rule="!has(self.hostSubnet) || !isCIDR(self.cidr) || self.hostSubnet > cidr(self.cidr).prefixLength()",message="hostSubnet must be a longer prefix than the prefix of cidr, so that every node gets a block of it",fieldPath=".hostSubnet"
// +kubebuilder:validation:XValidation:rule="!has(self.hostSubnet) || !isCIDR(self.cidr) || self.hostSubnet <= (cidr(self.cidr).ip().family() == 4 ? 30 : 126)",message="hostSubnet leaves no room for pods: use at most 30 for an IPv4 cidr and at most 126 for an IPv6 cidr",fieldPath=".hostSubnet"
type Layer3Subnet struct {
	// CIDR is the network-wide pod subnet.
	//
	// +required
	CIDR CIDR `json:"cidr"`

	// HostSubnet is the prefix length of each node's block of CIDR, e.g. 24 for a /24
	// per node. When omitted, the default applies: 24 for IPv4, 64 for IPv6.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=127
	// +optional
	HostSubnet int32 `json:"hostSubnet,omitempty"`
}

// Layer2Config configures a Layer2 network.
//
// +kubebuilder:validation:XValidation:rule="has(self.subnets) || (has(self.ipam) && has(self.ipam.mode) && self.ipam.mode == 'Disabled')",message="subnets is required unless ipam.mode is Disabled",fieldPath=".subnets"
// +kubebuilder:validation:XValidation:rule="!has(self.subnets) || !has(self.ipam) || !has(self.ipam.mode) || self.ipam.mode != 'Disabled'",message="subnets must be omitted when ipam.mode is Disabled: without IPAM OVN-Kubernetes assigns no addresses",fieldPath=".subnets"
// +kubebuilder:validation:XValidation:rule="!has(self.ipam) || !has(self.ipam.mode) || self.ipam.mode != 'Disabled' || self.role == 'Secondary'",message="ipam.mode Disabled is only allowed for Secondary networks: a Primary network must give pods addresses",fieldPath=".ipam"
// +kubebuilder:validation:XValidation:rule="!has(self.joinSubnets) || self.role == 'Primary'",message="joinSubnets is only allowed when role is Primary: Secondary networks have no gateway router to join; remove joinSubnets",fieldPath=".joinSubnets"
// +kubebuilder:validation:XValidation:rule="!has(self.mtu) || self.mtu >= 1280 || !has(self.subnets) || !self.subnets.exists(s, isCIDR(s) && cidr(s).ip().family() == 6)",message="mtu must be at least 1280 when an IPv6 subnet is used (the IPv6 minimum link MTU)",fieldPath=".mtu"
// +kubebuilder:validation:XValidation:rule="(has(self.mtu) ? self.mtu : 0) == (has(oldSelf.mtu) ? oldSelf.mtu : 0)",message="mtu is immutable: pods keep the MTU they were created with; create a new network to use another MTU",fieldPath=".mtu"
// +kubebuilder:validation:XValidation:rule="has(self.subnets) == has(oldSelf.subnets) && (!has(self.subnets) || self.subnets == oldSelf.subnets)",message="subnets are immutable: pods already have addresses from them; create a new network to use other subnets",fieldPath=".subnets"
// +kubebuilder:validation:XValidation:rule="has(self.joinSubnets) == has(oldSelf.joinSubnets) && (!has(self.joinSubnets) || self.joinSubnets == oldSelf.joinSubnets)",message="joinSubnets is immutable: gateway routers already use addresses from it; create a new network to use other join subnets",fieldPath=".joinSubnets"
// +kubebuilder:validation:XValidation:rule="has(self.ipam) == has(oldSelf.ipam) && (!has(self.ipam) || self.ipam == oldSelf.ipam)",message="ipam is immutable: it decides how existing pods got their addresses; create a new network to change it",fieldPath=".ipam"
type Layer2Config struct {
	// Role is Primary (the pods' default network) or Secondary (an extra interface).
	//
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="role is immutable: create a new network with the other role"
	// +required
	Role NetworkRole `json:"role"`

	// MTU of the pods' interfaces on this network. When omitted, the cluster-wide
	// default (1400 in OVN-Kubernetes) applies.
	//
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=65536
	// +optional
	MTU int32 `json:"mtu,omitempty"`

	// Subnets are the network's pod subnets, at most one per IP family, shared by all
	// nodes. Required unless ipam.mode is Disabled, and forbidden then.
	//
	// +optional
	Subnets DualStackCIDRs `json:"subnets,omitempty"`

	// JoinSubnets address the links to the gateway routers, one per IP family. Only for
	// Primary networks; the defaults (100.65.0.0/16 and fd99::/64) apply when omitted.
	//
	// +optional
	JoinSubnets DualStackCIDRs `json:"joinSubnets,omitempty"`

	// IPAM controls whether and how OVN-Kubernetes assigns pod addresses.
	//
	// +optional
	IPAM *IPAMConfig `json:"ipam,omitempty"`
}

// IPAMConfig controls address management on a Layer2 network.
//
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:XValidation:rule="!has(self.lifecycle) || self.lifecycle != 'Persistent' || !has(self.mode) || self.mode == 'Enabled'",message="lifecycle Persistent needs mode Enabled: there are no addresses to persist without IPAM"
type IPAMConfig struct {
	// Mode Enabled (the default) assigns pod addresses from the subnets; Disabled only
	// gives pods MAC addresses and layer-2 connectivity and leaves addressing to the
	// user, which turns off everything that selects pods by IP (network policy,
	// services, IP port security). Disabled is only for Secondary networks.
	//
	// +optional
	Mode IPAMMode `json:"mode,omitempty"`

	// Lifecycle Persistent keeps a pod's addresses in an ipamclaims.k8s.cni.cncf.io
	// object so that they survive restarts and migrations (useful for virtual machines).
	//
	// +optional
	Lifecycle NetworkIPAMLifecycle `json:"lifecycle,omitempty"`
}

// IPAMMode selects whether OVN-Kubernetes assigns pod addresses.
// +kubebuilder:validation:Enum=Enabled;Disabled
type IPAMMode string

const (
	// IPAMEnabled assigns pod addresses from the network's subnets.
	IPAMEnabled IPAMMode = "Enabled"
	// IPAMDisabled assigns no addresses; pods get only MACs and layer-2 connectivity.
	IPAMDisabled IPAMMode = "Disabled"
)

// NetworkIPAMLifecycle selects how long an assigned address lives.
// +kubebuilder:validation:Enum=Persistent
type NetworkIPAMLifecycle string

// IPAMLifecyclePersistent keeps addresses in IPAMClaims across pod restarts.
const IPAMLifecyclePersistent NetworkIPAMLifecycle = "Persistent"

// Condition types and reasons shared by UserDefinedNetwork and ClusterUserDefinedNetwork
// status. Other writers (upstream OVN-Kubernetes) may add more types.
const (
	// ConditionNetworkCreated is True once the network's NetworkAttachmentDefinitions
	// exist (upstream's UDN controller reports it).
	ConditionNetworkCreated = "NetworkCreated"

	// ConditionTransportAccepted reports whether the network's transport is usable
	// (OKEP-5259). For NoOverlay it is True only when an accepted RouteAdvertisements
	// advertises the network's pod subnets.
	ConditionTransportAccepted = "TransportAccepted"

	// ReasonGeneveTransportAccepted: the network uses the Geneve overlay.
	ReasonGeneveTransportAccepted = "GeneveTransportAccepted"
	// ReasonNoOverlayTransportAccepted: NoOverlay with its pod subnets advertised.
	ReasonNoOverlayTransportAccepted = "NoOverlayTransportAccepted"
	// ReasonNoOverlayRouteAdvertisementsIsMissing: no RouteAdvertisements selects the network.
	ReasonNoOverlayRouteAdvertisementsIsMissing = "NoOverlayRouteAdvertisementsIsMissing"
	// ReasonNoOverlayRouteAdvertisementsNotAccepted: a RouteAdvertisements selects the
	// network but is not Accepted.
	ReasonNoOverlayRouteAdvertisementsNotAccepted = "NoOverlayRouteAdvertisementsNotAccepted"
)
