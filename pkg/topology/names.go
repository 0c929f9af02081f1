package topology

import (
	"strings"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// Names of a network's OVN objects, as OVN-Kubernetes names them. Every name starts with
// the network's prefix ("" for the default network), so networks never collide in a zone.
type names struct{ prefix string }

func namesOf(n *cluster.Network) names { return names{prefix: n.OVNPrefix()} }

func (n names) ClusterRouter() string             { return n.prefix + "ovn_cluster_router" }
func (n names) NodeSwitch(node string) string     { return n.prefix + node }
func (n names) JoinSwitch() string                { return n.prefix + "join" }
func (n names) GatewayRouter(node string) string  { return "GR_" + n.prefix + node }
func (n names) ExternalSwitch(node string) string { return "ext_" + n.prefix + node }
func (n names) TransitSwitch() string             { return n.prefix + "transit_switch" }
func (n names) TransitRouter() string             { return n.prefix + "transit_router" }
func (n names) Layer2Switch() string              { return n.prefix + layer2SwitchName }
func (n names) ManagementPort(node string) string { return "k8s-" + n.prefix + node }

// A node's ports on a Layer3 network's transit switch put the network's prefix first:
// "<prefix>rtots-<node>" on the cluster router, "<prefix>tstor-<node>" on the switch.
func (n names) TransitSwitchRouterPort(node string) string {
	return n.prefix + routerToTransitSwitch + node
}
func (n names) TransitSwitchPort(node string) string { return n.prefix + transitSwitchToRouter + node }

// The external switch's localnet port is the gateway interface id ("breth0_node1"),
// scoped by network so every network's port has a name of its own.
func (n names) LocalnetPort(interfaceID string) string { return n.prefix + interfaceID }

// layer2SwitchName ends the name of every Layer2 network's switch.
const layer2SwitchName = "ovn_layer2_switch"

// Port name prefixes: <from>to<to>-<peer object>.
const (
	routerToSwitch        = "rtos-"
	switchToRouter        = "stor-"
	routerToJoin          = "rtoj-"
	joinToRouter          = "jtor-"
	routerToExternal      = "rtoe-"
	externalToRouter      = "etor-"
	routerToTransitSwitch = "rtots-"
	transitSwitchToRouter = "tstor-"
	transitRouterToRouter = "trtor-"
	routerToTransitRouter = "rtotr-"
	transitRouterToSwitch = "trtos-"
	switchToTransitRouter = "stotr-"
	connectRouterToRouter = "crtor-"
	routerToConnectRouter = "rtocr-"
)

// Layer2PortKind tells which Layer2 topology a router port belongs to.
type Layer2PortKind int

const (
	// NotLayer2Port is any other port.
	NotLayer2Port Layer2PortKind = iota
	// Layer2LegacyGatewayPort is a gateway router's port on a Layer2 switch
	// ("rtos-<prefix>ovn_layer2_switch"): the legacy topology.
	Layer2LegacyGatewayPort
	// Layer2TransitRouterPort is a transit router's port on a Layer2 switch
	// ("trtos-<prefix>ovn_layer2_switch"): OKEP-5094's topology.
	Layer2TransitRouterPort
	// Layer2UpgradePort is the transit router's port kept for nodes still on the
	// legacy topology ("trtos-<prefix>ovn_layer2_switch-upgrade").
	Layer2UpgradePort
)

// ClassifyLayer2Port tells what a router port's name says of a Layer2 topology.
func ClassifyLayer2Port(name string) Layer2PortKind {
	switch {
	case strings.HasPrefix(name, transitRouterToSwitch) && strings.HasSuffix(name, layer2SwitchName+upgradeSuffix):
		return Layer2UpgradePort
	case strings.HasPrefix(name, transitRouterToSwitch) && strings.HasSuffix(name, layer2SwitchName):
		return Layer2TransitRouterPort
	case strings.HasPrefix(name, routerToSwitch) && strings.HasSuffix(name, layer2SwitchName):
		return Layer2LegacyGatewayPort
	}
	return NotLayer2Port
}
