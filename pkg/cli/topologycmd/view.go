package topologycmd

import (
	"net"
	"net/netip"
	"slices"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// View is what `kubectl ovnk topology -o json|yaml` prints: one network's logical
// routers and switches in one node's zone, as its NB held them.
type View struct {
	// Node is the node whose zone was read.
	Node    string           `json:"node"`
	Network livezone.Network `json:"network"`
	// Routers and Switches are sorted by name; their ports too.
	Routers  []Router `json:"routers"`
	Switches []Switch `json:"switches"`
}

// Router is a logical router.
type Router struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
	// Role is cluster router, gateway router or transit router ("" when the name is
	// not one OVN-Kubernetes gives).
	Role string `json:"role,omitempty"`
	// Node is the node the router belongs to (a gateway router's), "" for a router of
	// the whole network.
	Node string `json:"node,omitempty"`
	// Chassis is the chassis a gateway router is bound to (options:chassis).
	Chassis string `json:"chassis,omitempty"`
	// TunnelKey is the router's datapath tunnel key (options:requested-tnl-key), set on
	// routers that span zones.
	TunnelKey string       `json:"tunnelKey,omitempty"`
	Ports     []RouterPort `json:"ports"`
	// NAT rules in `ovn-nbctl lr-nat-list` order.
	NAT []livezone.NAT `json:"nat,omitempty"`
	// StaticRoutes and Policies count the router's tables (`kubectl ovnk routes` prints
	// them).
	StaticRoutes int `json:"staticRoutes"`
	Policies     int `json:"policies"`
}

// RouterPort is a logical router port.
type RouterPort struct {
	Name     string   `json:"name"`
	UUID     string   `json:"uuid"`
	MAC      string   `json:"mac"`
	Networks []string `json:"networks"`
	// IPv6LinkLocal is the link-local address OVN derives from the MAC for a port
	// with IPv6 networks; it is not stored in the NB.
	IPv6LinkLocal string `json:"ipv6LinkLocal,omitempty"`
	// Peer is the port at the other end: a router port (peer column) or the switch
	// port of type router that names this port.
	Peer *PortRef `json:"peer,omitempty"`
	// Remote says the port stands for another node's side of a router spanning zones:
	// it is bound to that node's chassis.
	Remote bool `json:"remote,omitempty"`
	// Node is the node the port belongs to (external_ids:k8s.ovn.org/node).
	Node string `json:"node,omitempty"`
	// Chassis is options:requested-chassis, TunnelKey options:requested-tnl-key.
	Chassis        string   `json:"chassis,omitempty"`
	TunnelKey      string   `json:"tunnelKey,omitempty"`
	GatewayChassis []string `json:"gatewayChassis,omitempty"`
}

// Switch is a logical switch.
type Switch struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
	// Role is node switch, join switch, transit switch, layer2 switch or external switch.
	Role string `json:"role,omitempty"`
	// Node is the node the switch belongs to, "" for a switch of the whole network.
	Node string `json:"node,omitempty"`
	// Subnet and IPv6Prefix are what OVN assigns addresses from (other_config).
	Subnet     string `json:"subnet,omitempty"`
	IPv6Prefix string `json:"ipv6Prefix,omitempty"`
	// TunnelKey is other_config:requested-tnl-key, set on switches that span zones.
	TunnelKey string       `json:"tunnelKey,omitempty"`
	Ports     []SwitchPort `json:"ports"`
}

// SwitchPort is a logical switch port.
type SwitchPort struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
	// Type is OVN's port type: "" for a VIF (a pod, a management port), router,
	// remote, localnet, ….
	Type      string   `json:"type,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
	// Peer is the router port of a port of type router.
	Peer *PortRef `json:"peer,omitempty"`
	// Remote says the port lives on another node (type remote).
	Remote    bool   `json:"remote,omitempty"`
	Node      string `json:"node,omitempty"`
	Chassis   string `json:"chassis,omitempty"`
	TunnelKey string `json:"tunnelKey,omitempty"`
}

// PortRef names a port and the router or switch it belongs to.
type PortRef struct {
	// Kind is router or switch.
	Kind string `json:"kind"`
	// Name is the router's or switch's name, "" when it is not in the zone.
	Name string `json:"name,omitempty"`
	Port string `json:"port"`
	// Network is the network the router or switch belongs to (its external_ids), set
	// only when that is not the network shown: on a connect router's ports, the
	// network each links to.
	Network *livezone.Network `json:"network,omitempty"`
}

// builder resolves ports to their owners and peers across the whole zone: a peer may
// belong to a row of another network or to no network ovnk knows.
type builder struct {
	z            *livezone.Zone
	net          livezone.Network
	routerOfPort map[string]*nbdb.LogicalRouter     // router port name -> its router
	switchOfPort map[string]*nbdb.LogicalSwitch     // switch port key -> its switch
	patchOf      map[string]*nbdb.LogicalSwitchPort // router port name -> the switch port naming it
}

func newBuilder(z *livezone.Zone, net livezone.Network) *builder {
	b := &builder{
		z: z, net: net,
		routerOfPort: map[string]*nbdb.LogicalRouter{},
		switchOfPort: map[string]*nbdb.LogicalSwitch{},
		patchOf:      map[string]*nbdb.LogicalSwitchPort{},
	}
	for _, lr := range z.Rows.Routers {
		for _, key := range lr.Ports {
			if lrp := z.Index.RouterPorts[key]; lrp != nil {
				b.routerOfPort[lrp.Name] = lr
			}
		}
	}
	for _, ls := range z.Rows.Switches {
		for _, key := range ls.Ports {
			b.switchOfPort[key] = ls
		}
	}
	for _, lsp := range z.Rows.SwitchPorts {
		if rp := lsp.Options["router-port"]; lsp.Type == "router" && rp != "" {
			b.patchOf[rp] = lsp
		}
	}
	return b
}

// build assembles the view of the network.
func (b *builder) build() View {
	v := View{Node: b.z.Node, Network: b.net, Routers: []Router{}, Switches: []Switch{}}
	for _, lr := range b.z.Routers(b.net) {
		v.Routers = append(v.Routers, b.routerView(lr))
	}
	for _, ls := range b.z.Switches(b.net) {
		v.Switches = append(v.Switches, b.switchView(ls))
	}
	return v
}

func (b *builder) routerView(lr *nbdb.LogicalRouter) Router {
	r := Router{
		Name: lr.Name, UUID: lr.UUID, Role: livezone.RouterRole(b.net, lr.Name),
		Node: lr.ExternalIDs[rows.NodeKey], Chassis: lr.Options["chassis"], TunnelKey: lr.Options["requested-tnl-key"],
		Ports: []RouterPort{}, NAT: b.z.NATs(lr),
	}
	for _, key := range lr.StaticRoutes {
		if b.z.Index.Routes[key] != nil {
			r.StaticRoutes++
		}
	}
	for _, key := range lr.Policies {
		if b.z.Index.Policies[key] != nil {
			r.Policies++
		}
	}
	for _, lrp := range b.z.RouterPorts(lr) {
		r.Ports = append(r.Ports, b.routerPort(lrp))
	}
	return r
}

func (b *builder) routerPort(lrp *nbdb.LogicalRouterPort) RouterPort {
	networks := slices.Clone(lrp.Networks)
	slices.Sort(networks)
	p := RouterPort{
		Name: lrp.Name, UUID: lrp.UUID, MAC: lrp.MAC, Networks: networks, IPv6LinkLocal: linkLocal(lrp),
		Node: lrp.ExternalIDs[rows.NodeKey], Chassis: lrp.Options["requested-chassis"], TunnelKey: lrp.Options["requested-tnl-key"],
	}
	// A router port bound to a chassis stands for the node it belongs to; ovnk binds
	// only other nodes' ports of a transit router, and foreign rows name no node.
	p.Remote = p.Chassis != "" && p.Node != b.z.Node
	switch {
	case lrp.Peer != nil:
		p.Peer = b.routerRef(*lrp.Peer)
	case b.patchOf[lrp.Name] != nil:
		lsp := b.patchOf[lrp.Name]
		p.Peer = &PortRef{Kind: "switch", Port: lsp.Name}
		if ls := b.switchOfPort[lsp.UUID]; ls != nil {
			p.Peer.Name, p.Peer.Network = ls.Name, b.otherNetwork(ls.ExternalIDs)
		}
	}
	for _, key := range lrp.GatewayChassis {
		if gc := b.z.Index.GatewayChassis[key]; gc != nil {
			p.GatewayChassis = append(p.GatewayChassis, gc.ChassisName)
		}
	}
	slices.Sort(p.GatewayChassis)
	return p
}

func (b *builder) switchView(ls *nbdb.LogicalSwitch) Switch {
	node := ls.ExternalIDs[rows.NodeKey]
	s := Switch{
		Name: ls.Name, UUID: ls.UUID, Role: livezone.SwitchRole(b.net, ls.Name, node), Node: node,
		Subnet: ls.OtherConfig["subnet"], IPv6Prefix: ls.OtherConfig["ipv6_prefix"], TunnelKey: ls.OtherConfig["requested-tnl-key"],
		Ports: []SwitchPort{},
	}
	for _, lsp := range b.z.SwitchPorts(ls) {
		p := SwitchPort{
			Name: lsp.Name, UUID: lsp.UUID, Type: lsp.Type, Remote: lsp.Type == "remote",
			Node: lsp.ExternalIDs[rows.NodeKey], Chassis: lsp.Options["requested-chassis"], TunnelKey: lsp.Options["requested-tnl-key"],
		}
		// A router-type port's addresses are the word "router": its peer says more.
		if !(lsp.Type == "router" && slices.Equal(lsp.Addresses, []string{"router"})) {
			p.Addresses = lsp.Addresses
		}
		if rp := lsp.Options["router-port"]; lsp.Type == "router" && rp != "" {
			p.Peer = b.routerRef(rp)
		}
		s.Ports = append(s.Ports, p)
	}
	return s
}

// routerRef refers to a router port, naming its router when the zone has it.
func (b *builder) routerRef(port string) *PortRef {
	ref := &PortRef{Kind: "router", Port: port}
	if lr := b.routerOfPort[port]; lr != nil {
		ref.Name, ref.Network = lr.Name, b.otherNetwork(lr.ExternalIDs)
	}
	return ref
}

// otherNetwork is the network of a row with these external_ids, nil when it is the
// network shown or none.
func (b *builder) otherNetwork(ids map[string]string) *livezone.Network {
	if n := networkOf(ids); n != nil && n.OVNName != b.net.OVNName {
		return n
	}
	return nil
}

// networkOf is the network a row's external_ids name, nil if none.
func networkOf(ids map[string]string) *livezone.Network {
	name := ids[rows.NetworkKey]
	if name == "" {
		return nil
	}
	return &livezone.Network{Name: cluster.UserNetworkName(name), OVNName: name, Topology: ids[rows.TopologyKey]}
}

// linkLocal is the IPv6 link-local address OVN gives a router port with IPv6 networks.
func linkLocal(lrp *nbdb.LogicalRouterPort) string {
	hasV6 := slices.ContainsFunc(lrp.Networks, func(n string) bool {
		p, err := netip.ParsePrefix(n)
		return err == nil && p.Addr().Is6()
	})
	mac, err := net.ParseMAC(lrp.MAC)
	if !hasV6 || err != nil {
		return ""
	}
	lla, err := alloc.LinkLocalFromMAC(mac)
	if err != nil {
		return ""
	}
	return lla.String()
}
