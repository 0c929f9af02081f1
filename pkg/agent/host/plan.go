// Package host is the agent's part on the node itself, what ovnkube-node and the zone
// controller do upstream: it reads what the node knows about itself (its chassis,
// its gateway bridge's MAC, addresses and next hops, its host addresses) and publishes
// it as the node's annotations; it points ovn-controller at the zone (OVS external_ids,
// br-int), writes a remote chassis into the zone's Southbound for every other node,
// plugs and configures a management port per network, and programs the external
// bridge's flows so the host and every gateway router share the node's address.
//
// What the node should look like is decided here, purely, from the cluster state
// (plan.go); the I/O goes through the small interfaces of pkg/host/….
package host

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/host/gateway"
	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/host/sbchassis"
	"github.com/ovnk/ovnk/pkg/topology"
)

// Facts are what the node knows about itself, read from its OVS and its links.
type Facts struct {
	// ChassisID is OVS's external_ids:system-id, the node's OVN chassis name.
	ChassisID string
	// Bridge is the gateway bridge (br-ex), MAC its MAC, Addresses its global
	// addresses and NextHops the default routes' gateways.
	Bridge    string
	MAC       string
	Addresses []netip.Prefix
	NextHops  []netip.Addr
	// HostCIDRs are every global address of the host (k8s.ovn.org/host-cidrs).
	HostCIDRs []netip.Prefix
}

// EncapIP is the address other nodes' tunnels reach this node at: the gateway bridge's
// first IPv4 address, else its first IPv6 one (userspace tunnelling needs the tunnel
// endpoint on an OVS bridge).
func EncapIP(addrs []netip.Prefix) (netip.Addr, bool) {
	first := firstOfEachFamily(addrs) // IPv4 before IPv6
	if len(first) == 0 {
		return netip.Addr{}, false
	}
	return first[0].Addr(), true
}

// Annotations are the node annotations that publish f for node, in OVN-Kubernetes'
// formats: chassis id, primary interface addresses, host CIDRs and the shared gateway.
func (f Facts) Annotations(node string) (map[string]string, error) {
	if f.ChassisID == "" {
		return nil, errors.New("OVS has no external_ids:system-id (the chassis name)")
	}
	if len(f.Addresses) == 0 {
		return nil, fmt.Errorf("gateway bridge %s has no global address: give it the node's address", f.Bridge)
	}
	chassis, err := cluster.NodeChassisIDCodec.Format(f.ChassisID)
	if err != nil {
		return nil, fmt.Errorf("chassis id %q: %w", f.ChassisID, err)
	}
	primary, err := cluster.PrimaryIfAddrCodec.Format(firstOfEachFamily(f.Addresses))
	if err != nil {
		return nil, fmt.Errorf("primary interface addresses of %s: %w", f.Bridge, err)
	}
	hostCIDRs, err := cluster.HostCIDRsCodec.Format(f.HostCIDRs)
	if err != nil {
		return nil, fmt.Errorf("host addresses: %w", err)
	}
	gateway, err := cluster.L3GatewayConfigCodec.Format(cluster.Gateway{
		Mode:           cluster.GatewayModeShared,
		InterfaceID:    f.Bridge + "_" + node,
		BridgeID:       f.Bridge,
		MAC:            f.MAC,
		IPs:            firstOfEachFamily(f.Addresses),
		NextHops:       f.NextHops,
		NodePortEnable: true,
	})
	if err != nil {
		return nil, fmt.Errorf("gateway of %s: %w", f.Bridge, err)
	}
	return map[string]string{
		cluster.AnnotationNodeChassisID:     chassis,
		cluster.AnnotationNodePrimaryIfAddr: primary,
		cluster.AnnotationHostCIDRs:         hostCIDRs,
		cluster.AnnotationL3GatewayConfig:   gateway,
	}, nil
}

func firstOfEachFamily(addrs []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, v6 := range []bool{false, true} {
		if i := slices.IndexFunc(addrs, func(a netip.Prefix) bool { return a.Addr().Is6() == v6 }); i >= 0 {
			out = append(out, addrs[i])
		}
	}
	return out
}

// Plan is the node's own dataplane as the cluster state wants it.
type Plan struct {
	// Chassis are the other nodes, as remote chassis of this zone's Southbound.
	Chassis []sbchassis.RemoteChassis
	// ManagementPorts are one per network programmed on this node.
	ManagementPorts []ManagementPort
	// Gateways are the networks' gateway routers as the external bridge sees them.
	Gateways []GatewayPort
	// ChassisErrors say which other nodes have no remote chassis, and why.
	ChassisErrors []error
}

// ManagementPort is a network's management port as the host plugs it: an OVS internal
// port on br-int, bound to the network's management LSP, configured as a link.
type ManagementPort struct {
	topology.ManagementPort
	// Link is ovn-k8s-mp<network id>: ovn-k8s-mp0 for the default network.
	Link string
	// NetworkID is the network's k8s.ovn.org/network-id, 0 for the default network.
	NetworkID int
	// OwnTable says the port routes in a table of its own, selected by rules, as a
	// user-defined network's port does in its VRF upstream; the default network's
	// routes are in the main table.
	OwnTable bool
}

// GatewayPort is a network's gateway router behind the external bridge: the patch
// port ovn-controller makes for the localnet port of its external switch, and the
// conntrack mark that steers replies back to it.
type GatewayPort struct {
	Network string
	// Patch is the patch port's name on the external bridge.
	Patch string
	// CTMark is 1 for the default network and 3 + network id for a user-defined one,
	// as OVN-Kubernetes marks them (2 is the host's).
	CTMark int
	// Masquerade says the gateway router's traffic leaves from the network's
	// masquerade address, which br-ex translates to the node's (user-defined
	// networks).
	Masquerade bool
}

// ManagementLink is the host interface of a network's management port.
func ManagementLink(n *cluster.Network) string {
	return netconf.ManagementPortPrefix + strconv.Itoa(n.ID)
}

// PatchPort is the name ovn-controller gives, on the external bridge, to the patch port
// of a localnet port.
func PatchPort(localnetPort, integrationBridge string) string {
	return "patch-" + localnetPort + "-to-" + integrationBridge
}

// PlanFor plans node local's own dataplane from st. A network that cannot be planned
// yet (its node subnet not allocated) is left out, with its reason among the errors,
// and so is another node without an address (Plan.ChassisErrors); the rest is planned.
func PlanFor(st *cluster.State, local, integrationBridge string) (Plan, []error) {
	var p Plan
	var errs []error
	node := st.Node(local)
	if node == nil {
		return p, []error{topology.NodeNotReadyError(local)}
	}
	for _, o := range st.Nodes {
		if o.Name == local || o.ChassisID == "" {
			continue
		}
		ip, ok := EncapIP(o.PrimaryIfAddrs)
		if !ok {
			p.ChassisErrors = append(p.ChassisErrors, fmt.Errorf("node %s publishes no primary interface address (k8s.ovn.org/node-primary-ifaddr): no tunnel to it", o.Name))
			continue
		}
		p.Chassis = append(p.Chassis, sbchassis.RemoteChassis{Name: o.ChassisID, Hostname: o.Name, EncapIP: ip})
	}
	for _, n := range st.Networks {
		if n.Role != cluster.Primary {
			continue
		}
		mp, err := topology.ManagementPortOf(st.Config, n, node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.ManagementPorts = append(p.ManagementPorts, ManagementPort{ManagementPort: mp, Link: ManagementLink(n), NetworkID: n.ID, OwnTable: !n.IsDefault()})
		mark := gateway.DefaultNetworkCTMark
		if !n.IsDefault() {
			mark = gateway.NetworkCTMark(n.ID)
		}
		p.Gateways = append(p.Gateways, GatewayPort{
			Network:    n.Name,
			Patch:      PatchPort(topology.LocalnetPortOf(n, node), integrationBridge),
			CTMark:     mark,
			Masquerade: !n.IsDefault(),
		})
	}
	return p, errs
}
