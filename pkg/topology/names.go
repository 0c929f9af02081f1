package topology

import "github.com/ovnk/ovnk/pkg/cluster"

// Names of a network's OVN objects, as OVN-Kubernetes names them. Every name starts with
// the network's prefix ("" for the default network), so networks never collide in a zone.
type names struct{ prefix string }

func namesOf(n *cluster.Network) names { return names{prefix: n.OVNPrefix()} }

func (n names) ClusterRouter() string             { return n.prefix + "ovn_cluster_router" }
func (n names) NodeSwitch(node string) string     { return n.prefix + node }
func (n names) JoinSwitch() string                { return n.prefix + "join" }
func (n names) GatewayRouter(node string) string  { return "GR_" + n.prefix + node }
func (n names) ExternalSwitch(node string) string { return n.prefix + "ext_" + node }
func (n names) TransitSwitch() string             { return n.prefix + "transit_switch" }
func (n names) TransitRouter() string             { return n.prefix + "transit_router" }
func (n names) Layer2Switch() string              { return n.prefix + "ovn_layer2_switch" }
func (n names) ManagementPort(node string) string { return "k8s-" + n.prefix + node }

// The external switch's localnet port is the gateway interface id ("breth0_node1"),
// scoped by network so every network's port has a name of its own.
func (n names) LocalnetPort(interfaceID string) string { return n.prefix + interfaceID }

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
