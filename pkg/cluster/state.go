// Package cluster holds the compiler's view of the cluster: an immutable snapshot of
// nodes, networks and pods, built from Kubernetes objects and OVN-Kubernetes'
// annotations. Parsing and writing those annotations lives here too, so the rest of
// ovnk never touches their JSON.
package cluster

import (
	"net/netip"
	"slices"
	"strings"
)

// DefaultNetworkName is the cluster default network's name in OVN-Kubernetes.
const DefaultNetworkName = "default"

// Topology is how a network is built in OVN.
type Topology string

const (
	// Layer3 gives every node its own subnet, routed by a cluster router.
	Layer3 Topology = "Layer3"
	// Layer2 is one logical switch spanning every node.
	Layer2 Topology = "Layer2"
)

// Role says whether the network is a pod's primary (default-route) network.
type Role string

const (
	Primary   Role = "Primary"
	Secondary Role = "Secondary"
)

// Transport carries east-west traffic between nodes.
type Transport string

const (
	Geneve    Transport = "Geneve"
	NoOverlay Transport = "NoOverlay"
)

// State is a snapshot of everything the topology compiler reads. It is never mutated
// after it is built: a change in the cluster produces a new State.
type State struct {
	Config   Config
	Nodes    []*Node    // sorted by Name
	Networks []*Network // sorted by Name; the default network is among them
	Pods     []*Pod     // sorted by Namespace, then Name
	Connects []*Connect // sorted by Name
}

// Config is cluster-wide configuration that is not in any object: the agent's config.
type Config struct {
	// MasqueradeSubnets are the host masquerade subnets (169.254.0.0/17, fd69::/112).
	MasqueradeSubnets []netip.Prefix
	// DefaultJoinSubnets are the default network's join subnets (100.64.0.0/16, fd98::/64);
	// user-defined networks allow traffic to them (OKEP-5094's priority-102 policies).
	DefaultJoinSubnets []netip.Prefix
	// ServiceSubnets are the cluster's service CIDRs.
	ServiceSubnets []netip.Prefix
	// HostServiceIPs are ClusterIPs that pods of a user-defined network reach through
	// the node's management port (the kubernetes API and DNS services).
	HostServiceIPs []netip.Addr
}

// Node is a Kubernetes node as OVN-Kubernetes annotated it.
type Node struct {
	Name string
	// ID is k8s.ovn.org/node-id; every per-node address and tunnel key derives from it.
	ID int
	// ChassisID is k8s.ovn.org/node-chassis-id, the node's OVN chassis name.
	ChassisID string
	// Subnets maps a Layer3 network's name to this node's subnets in it
	// (k8s.ovn.org/node-subnets).
	Subnets map[string][]netip.Prefix
	// TransitSwitchIPs are the node's addresses on every Layer3 transit switch
	// (k8s.ovn.org/node-transit-switch-port-ifaddr).
	TransitSwitchIPs []netip.Prefix
	// PrimaryIfAddrs are the addresses of the node's primary interface
	// (k8s.ovn.org/node-primary-ifaddr).
	PrimaryIfAddrs []netip.Prefix
	// Gateway is the default network's entry of k8s.ovn.org/l3-gateway-config.
	Gateway Gateway
	// Layer2TopologyVersion is k8s.ovn.org/layer2-topology-version ("2.0" once the node
	// runs the transit-router Layer2 topology, "" before).
	Layer2TopologyVersion string
	// Layer2GatewayTunnelIDs maps a primary Layer2 network's name to the tunnel key of
	// this node's gateway router port on its switch
	// (k8s.ovn.org/udn-layer2-node-gateway-router-lrp-tunnel-ids).
	Layer2GatewayTunnelIDs map[string]int
	Labels                 map[string]string
	// HostCIDRs are every address configured on the host, with its prefix length
	// (k8s.ovn.org/host-cidrs), sorted by text.
	HostCIDRs []netip.Prefix
}

// Gateway is a node's external gateway configuration.
type Gateway struct {
	Mode        string         // "shared" or "local"
	InterfaceID string         // the OVS interface of the external bridge, e.g. breth0_node1
	MAC         string         // the external bridge's MAC
	IPs         []netip.Prefix // the node's addresses on the external network
	NextHops    []netip.Addr   // the external default gateways
	VLANID      int
	// BridgeID is the external bridge, e.g. breth0 ("bridge-id").
	BridgeID string
	// NodePortEnable says whether NodePort services are served ("node-port-enable").
	NodePortEnable bool
}

// Subnet is a network's CIDR and, for Layer3, the prefix length each node gets of it.
type Subnet struct {
	CIDR       netip.Prefix
	HostSubnet int // node subnet prefix length; 0 for Layer2
}

// Network is the cluster default network or a user-defined network.
type Network struct {
	// Name is OVN-Kubernetes' network name: "default", "cluster_udn_<cudn>", or
	// "<namespace>_<udn>".
	Name      string
	Topology  Topology
	Role      Role
	Subnets   []Subnet
	MTU       int
	Transport Transport
	// JoinSubnets connect the cluster router to the gateway routers (Layer3), or hold the
	// gateway routers' join IPs (Layer2).
	JoinSubnets []netip.Prefix
	// TransitSubnets address the transit switch (Layer3) or the transit router's peer
	// pairs (Layer2). For Layer2 they never overlap Subnets (OKEP-5094 option 4).
	TransitSubnets []netip.Prefix
	// TransitSubnetsChanged reports that the default transit subnets overlapped this
	// Layer2 network and others were chosen, which status tells the user.
	TransitSubnetsChanged bool
	// ID is k8s.ovn.org/network-id; 0 for the default network.
	ID int
	// TunnelKeys is k8s.ovn.org/tunnel-keys: the distributed datapaths' keys, in
	// OVN-Kubernetes' order (Layer3: transit switch; Layer2 primary: switch, transit router).
	TunnelKeys []int
	// Namespaces are the namespaces the network serves, sorted.
	Namespaces []string
	// Owner is the object the network comes from: Kind/Namespace/Name.
	Owner ObjectRef
}

// ObjectRef names a Kubernetes object.
type ObjectRef struct {
	Kind, Namespace, Name string
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// OVNPrefix is the prefix of every OVN object of the network: "" for the default
// network, otherwise the name with "-" and "/" replaced by "." and a trailing "_".
func (n *Network) OVNPrefix() string {
	return OVNPrefix(n.Name)
}

// OVNPrefix computes the OVN object prefix of a network name.
func OVNPrefix(network string) string {
	if network == DefaultNetworkName {
		return ""
	}
	return strings.NewReplacer("-", ".", "/", ".").Replace(network) + "_"
}

// IsDefault reports whether this is the cluster default network.
func (n *Network) IsDefault() bool { return n.Name == DefaultNetworkName }

// Pod is a pod with its addresses on every network it is attached to.
type Pod struct {
	Namespace, Name, Node string
	// UID is the pod's metadata.uid. Its ports carry it (iface-id-ver), so OVN binds a
	// port only to the interface made for this pod, never to a leftover of an earlier
	// pod of the same name.
	UID string
	// Running says the pod's phase is Running, or one of its containers (init and
	// sidecar containers included) runs: it may hold connections. A pod none of whose
	// containers has started holds none.
	Running bool
	// DaemonSet names the DaemonSet controlling the pod, "" if none: a drain leaves
	// such a pod on its node.
	DaemonSet string
	// Networks maps a network name (not a NAD name) to the pod's interface on it.
	Networks map[string]PodInterface
}

// PodInterface is one entry of k8s.ovn.org/pod-networks.
type PodInterface struct {
	IPs      []netip.Prefix
	MAC      string
	Gateways []netip.Addr
	Role     string // "primary", "secondary" or "infrastructure-locked"
	// TunnelID is the pod port's tunnel key on a Layer2 network, equal in every zone.
	TunnelID int
	// Routes are extra routes in the pod for this interface.
	Routes []PodRoute
	// GatewayIPv6LLA is the link-local IPv6 gateway the pod learns from router
	// advertisements ("ipv6_lla_gateway_ip"); invalid when not set.
	GatewayIPv6LLA netip.Addr
}

// PodRoute is an extra route of a pod interface.
type PodRoute struct {
	Dest    netip.Prefix
	NextHop netip.Addr // invalid when the route has no next hop
}

// Node returns the node named name, or nil.
func (s *State) Node(name string) *Node {
	i := slices.IndexFunc(s.Nodes, func(n *Node) bool { return n.Name == name })
	if i < 0 {
		return nil
	}
	return s.Nodes[i]
}
