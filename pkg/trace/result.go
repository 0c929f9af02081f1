package trace

import (
	"cmp"
	"strings"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// SchemaVersion names the JSON form of a Result (docs/trace.md documents it). Fields
// are only ever added within a version; a change that is not backwards compatible gets
// a new version.
const SchemaVersion = "ovnk.trace/v1"

// Result is what happened to one packet, and to its reply when that was traced.
type Result struct {
	SchemaVersion string `json:"schemaVersion"`
	Forward       *Path  `json:"forward"`
	Reply         *Path  `json:"reply,omitempty"`
}

// Path is one direction of a trace: the packet as it started, every hop, the verdict.
type Path struct {
	Packet  Header  `json:"packet"`
	Hops    []Hop   `json:"hops"`
	Verdict Verdict `json:"verdict"`
	// Warnings name rows on the path that never apply, in OVN either: their match is
	// one OVN refuses (a syntax error, an unknown field), or names an address set or
	// port group the zone lacks. The trace treats them as OVN does. (A row the
	// simulator cannot evaluate is not a warning but an unevaluated hop.)
	Warnings []string `json:"warnings,omitempty"`
}

// Header is the part of a packet a trace reports and rewrites.
type Header struct {
	InPort  string `json:"inport,omitempty"`
	EthSrc  string `json:"ethSrc"`
	EthDst  string `json:"ethDst"`
	IPSrc   string `json:"ipSrc"`
	IPDst   string `json:"ipDst"`
	TTL     int    `json:"ttl"`
	Proto   string `json:"proto"`
	SrcPort int    `json:"srcPort,omitempty"`
	DstPort int    `json:"dstPort,omitempty"`
	PktMark uint32 `json:"pktMark,omitempty"`
}

// Stage names where in a datapath's pipeline a hop's decision was taken.
type Stage string

// The stages a hop can report.
const (
	StageACL      Stage = "acl"       // a switch's from-lport or to-lport ACL
	StageL2       Stage = "l2-lookup" // a switch chose the output port by destination MAC
	StageAdmit    Stage = "admission" // a router accepted or refused the frame
	StageDNAT     Stage = "dnat"      // a router rewrote the destination
	StageUnSNAT   Stage = "unsnat"    // a reply's destination restored after an SNAT
	StageUnDNAT   Stage = "undnat"    // a reply's source restored after a DNAT
	StageRoute    Stage = "route"     // a router's static or connected route
	StagePolicy   Stage = "policy"    // a logical router policy
	StageResolve  Stage = "resolve"   // a next hop's MAC address resolved
	StageSNAT     Stage = "snat"      // a router rewrote the source
	StageOutput   Stage = "output"    // the packet left a datapath through a port
	StageHandoff  Stage = "handoff"   // the packet crossed to another zone
	StageDelivery Stage = "delivery"  // the packet reached its final port
)

// Hop is one decision on the path.
type Hop struct {
	// Zone is the node whose zone the decision was taken in.
	Zone string `json:"zone"`
	// Datapath is the logical switch or router, and Kind says which.
	Datapath string `json:"datapath"`
	Kind     string `json:"kind"`
	Stage    Stage  `json:"stage"`
	InPort   string `json:"inport,omitempty"`
	OutPort  string `json:"outport,omitempty"`
	// Row is the NB row that decided, when a row did (a route, policy, ACL, NAT or port).
	Row *Row `json:"row,omitempty"`
	// Note says what happened, in words.
	Note string `json:"note"`
	// Nexthops lists every next hop of an ECMP route or policy; the trace follows the
	// first, and reports the others here.
	Nexthops []string `json:"nexthops,omitempty"`
	// Unevaluated marks a hop that decided nothing: Row is a row the simulator could not
	// evaluate (its match reads what the simulator does not follow, such as a register,
	// or uses what it does not read, such as vlan.tci), met before the row that decided
	// or at its priority, and acting otherwise. Note says why. OVN may have applied it,
	// so the verdict is uncertain.
	Unevaluated bool `json:"unevaluated,omitempty"`
}

// Row names an NB row and the Kubernetes object behind it.
type Row struct {
	Table    string `json:"table"`
	UUID     string `json:"uuid"`
	Priority *int   `json:"priority,omitempty"`
	Match    string `json:"match,omitempty"`
	Action   string `json:"action,omitempty"`
	Owner    *Owner `json:"owner,omitempty"`
}

// Owner is what a row was written for, read from its external IDs: ours and
// OVN-Kubernetes' keys alike.
type Owner struct {
	// Kind is Network or Node for the rows of a network or a node, and otherwise the
	// row's k8s.ovn.org/owner-type: ClusterNetworkConnect, EgressIP, Pod,
	// NetworkPolicy, EgressFirewall, UDNIsolation, NetpolNode, MulticastCluster, and so
	// on.
	Kind string `json:"kind"`
	// Name is its k8s.ovn.org/name: a network as users name it, a Kubernetes object's
	// name (namespace/name for namespaced objects: a NetworkPolicy, an EgressFirewall),
	// or for a feature that is no object (UDNIsolation) the name of its rule
	// (DenyPrimaryUDN).
	Name string `json:"name"`
	// Network is the network the row serves, when it names one and Kind is not Network.
	Network string `json:"network,omitempty"`
	// Node is the node the row belongs to, when it belongs to one: k8s.ovn.org/node, or
	// upstream's ic-node of an interconnect route and node of a transit switch port.
	Node string `json:"node,omitempty"`
	// Controller is the external ID naming who wrote the row ("ovnk" for our agent,
	// "default-network-controller" and the like for OVN-Kubernetes).
	Controller string `json:"controller,omitempty"`
	// ID is the row's k8s.ovn.org/id, its identity to the controller that wrote it,
	// e.g. "default-network-controller:UDNIsolation:DenyPrimaryUDN:Ingress".
	ID string `json:"id,omitempty"`
}

// VerdictKind says how a path ended.
type VerdictKind string

// The ways a path can end.
const (
	Delivered   VerdictKind = "delivered"    // reached a logical switch port (a pod, a management port)
	ToRouter    VerdictKind = "to-router"    // addressed to a router's own IP
	Dropped     VerdictKind = "dropped"      // a row dropped or rejected it
	NoRoute     VerdictKind = "no-route"     // a router had no route for it
	LeftCluster VerdictKind = "left-cluster" // left through a gateway's external port
	Stuck       VerdictKind = "stuck"        // the simulation could not go on (missing zone, loop)
)

// Verdict is how a path ended.
type Verdict struct {
	Kind VerdictKind `json:"kind"`
	// Zone and Datapath are where it ended.
	Zone     string `json:"zone"`
	Datapath string `json:"datapath,omitempty"`
	// Port is the logical port it was delivered to or left through.
	Port string `json:"port,omitempty"`
	// Pod is "namespace/name" of the pod the packet was delivered to; on a packet dropped
	// on its way to another network's pod (Port is then where it left), that pod.
	Pod string `json:"pod,omitempty"`
	// Row is the row that dropped it, when one did.
	Row *Row `json:"row,omitempty"`
	// Uncertain is set when a row the simulator could not evaluate could have changed
	// what happened: OVN may treat the packet otherwise than Kind says. The path's hops
	// marked unevaluated name those rows.
	Uncertain bool `json:"uncertain,omitempty"`
	// Reason says it in words: "delivered to pod blue/web on node1", "dropped by …".
	Reason string `json:"reason"`
	// Packet is the packet as it was at the end, after every rewrite.
	Packet Header `json:"packet"`
}

// ownerOf reads what a row was written for from its external IDs, in OVN-Kubernetes'
// keys, which our agent writes too. Rows with none of them have no owner.
func ownerOf(ids map[string]string) *Owner {
	if len(ids) == 0 {
		return nil
	}
	o := &Owner{Node: cmp.Or(ids[rows.NodeKey], ids[upstreamICNodeKey], ids[upstreamNodeKey]), Controller: ids[rows.OwnerControllerKey], ID: ids[rows.IDKey]}
	network := ids[rows.NetworkKey]
	if network == "" && o.Controller != "" {
		network = ids[upstreamNetworkKey]
	}
	if network != "" {
		network = cluster.UserNetworkName(network)
	}
	switch kind := ids[rows.OwnerTypeKey]; {
	case kind != "" && !networkKinds[kind]:
		o.Kind, o.Name, o.Network = kind, objectName(kind, ids[nameKey]), network
	case network != "":
		o.Kind, o.Name = "Network", network
	case o.Node != "":
		o.Kind, o.Name = "Node", o.Node
	default:
		return nil
	}
	return o
}

// External-ID keys of OVN-Kubernetes that package rows does not define: the name of
// the object (or rule) a row was written for, the network of an EgressIP row, and the
// node of an interconnect route (to a remote node's subnets) and of a transit switch
// port.
const (
	nameKey            = "k8s.ovn.org/name"
	upstreamNetworkKey = "network"
	upstreamICNodeKey  = "ic-node"
	upstreamNodeKey    = "node"
)

// networkKinds are the owner types of a network's own rows (ours): their owner is the
// network.
var networkKinds = map[string]bool{"DefaultNetwork": true, "ClusterUserDefinedNetwork": true, "UserDefinedNetwork": true}

// objectName is the name of the object behind k8s.ovn.org/name, as kubectl names it:
// OVN-Kubernetes writes a NetworkPolicy's as "namespace:name", and an EgressFirewall's
// as its namespace (the object is always named "default").
func objectName(kind, name string) string {
	switch kind {
	case "NetworkPolicy":
		return strings.Replace(name, ":", "/", 1)
	case "EgressFirewall":
		if name != "" && !strings.Contains(name, "/") {
			return name + "/default"
		}
	}
	return name
}
