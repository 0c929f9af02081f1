package netconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// RouteProtocol is the routing protocol number on every route and rule this
// package makes. 85 is the number OVN-Kubernetes uses for its own routes, so that
// both agents recognise the same routes as theirs.
const RouteProtocol = 85

// MainTable is the kernel's main routing table, which ManagementPort.Table 0 means.
const MainTable = 254

// ManagementPortPrefix starts the name of every management port (ovn-k8s-mp0,
// ovn-k8s-mp1, …). HostCIDRs leaves out addresses on links named so.
const ManagementPortPrefix = "ovn-k8s-mp"

// Interface is the node's own network configuration. Host implements it on a
// network namespace through netlink; Fake on a simulated kernel. All methods are
// safe for concurrent use; writes are serialised.
type Interface interface {
	// Gateway describes iface for the node annotations: its MAC, global unicast
	// addresses and the next hops of the main table's default routes through it.
	Gateway(ctx context.Context, iface string) (GatewayInfo, error)
	// HostCIDRs returns every global unicast address of the node with its prefix
	// length, except on loopback and management ports (k8s.ovn.org/host-cidrs).
	HostCIDRs(ctx context.Context) ([]netip.Prefix, error)
	// SyncManagementPort makes port's link match port and reports whether it
	// changed anything; repeating it changes nothing.
	SyncManagementPort(ctx context.Context, port ManagementPort) (changed bool, err error)
	// RemoveManagementPort undoes what SyncManagementPort configured on the named
	// port: its addresses, routes, rules, VRF and ownership record.
	RemoveManagementPort(ctx context.Context, name string) (changed bool, err error)
	// ManagementPorts lists, sorted, the links that carry our ownership record.
	ManagementPorts(ctx context.Context) ([]string, error)
	// PruneManagementPorts removes every management port of ours not in keep, and
	// every rule of ours selecting a table that no port in keep uses.
	PruneManagementPorts(ctx context.Context, keep []ManagementPort) (changed bool, err error)
}

// GatewayInfo is what the node publishes about its gateway interface.
type GatewayInfo struct {
	// MAC is the interface's hardware address.
	MAC net.HardwareAddr
	// Addresses are its global unicast addresses with their prefix lengths, IPv4
	// before IPv6, each family sorted; never empty.
	Addresses []netip.Prefix
	// NextHops are the gateways of the main table's best (lowest metric) default
	// route of each family, where that route leaves through the interface; IPv4
	// before IPv6. A family without such a route contributes none.
	NextHops []netip.Addr
}

// ManagementPort is the full desired state of one management port: an existing
// link (an OVS internal port) that SyncManagementPort configures.
type ManagementPort struct {
	// Name is the link's name, e.g. ovn-k8s-mp0.
	Name string
	// MAC, when set, is the hardware address the link must have (unicast). Unset,
	// the link keeps whatever it has — so the result depends on history; the
	// agent always sets it.
	MAC net.HardwareAddr
	// MTU, when not 0, is the link's MTU; at least 1280 when there is an IPv6
	// address, because below that the kernel disables IPv6 on the link. 0 leaves
	// the MTU as it is, like an unset MAC.
	MTU int
	// Addresses are exactly the global unicast addresses the link must have, with
	// their prefix lengths. Link-local addresses are the kernel's: neither accepted
	// here nor ever removed.
	Addresses []netip.Prefix
	// Table is the routing table of the port's routes: 0 (or 254) for main, else a
	// table of its own, which no other port may use.
	Table int
	// VRF, when set, names a VRF device bound to Table that the port is enslaved
	// to (created if missing). Kernels without VRF devices refuse it with
	// ErrVRFUnsupported.
	VRF string
	// Routes are exactly the routes through the port in Table, one per destination.
	Routes []Route
	// Rules are exactly the ip rules selecting Table; only a port with a table of
	// its own has rules.
	Rules []Rule
}

// table returns the kernel number of the port's routing table.
func (p ManagementPort) table() int {
	if p.Table == 0 {
		return MainTable
	}
	return p.Table
}

// Route is a route through a management port.
type Route struct {
	// Dst is the destination prefix (masked: no host bits set).
	Dst netip.Prefix
	// Via is the gateway, of Dst's family and reachable on the link: in one of
	// the port's subnets, in the Dst of one of its on-link routes (in its table or
	// main), or an IPv6 link-local address. Unset for a route straight onto the link.
	Via netip.Addr
}

// String formats r the way ip-route(8) does: "10.96.0.0/16 via 10.244.0.1".
func (r Route) String() string {
	if r.Via.IsValid() {
		return r.Dst.String() + " via " + r.Via.String()
	}
	return r.Dst.String()
}

// Rule is an ip rule "to Dst lookup Table" at Priority, or with Oif, "oif Oif lookup
// Table" for Dst's family (Dst then the family's default prefix): the half of a VRF's
// l3mdev rule this kernel can do, so a socket bound to the port routes in its table.
type Rule struct {
	// Priority orders the rule among the others: 1 to 32765, between the kernel's
	// local (0) and main (32766) rules.
	Priority int
	// Dst is the destination prefix the rule matches (masked).
	Dst netip.Prefix
	// Table is the table looked up: the port's own, never 0 (for table 0 the
	// kernel silently picks an unused table itself).
	Table int
	// Oif, when set, names the link whose outgoing traffic the rule matches instead
	// of a destination; Dst must then be 0.0.0.0/0 or ::/0, giving the family.
	Oif string
}

// String formats r the way ip-rule(8) does: "2000: to 10.96.0.0/16 lookup 1007",
// "2000: from all oif ovn-k8s-mp1 lookup 100001 (IPv6)".
func (r Rule) String() string {
	if r.Oif != "" {
		family := "IPv4"
		if r.Dst.Addr().Is6() {
			family = "IPv6"
		}
		return fmt.Sprintf("%d: from all oif %s lookup %d (%s)", r.Priority, r.Oif, r.Table, family)
	}
	return fmt.Sprintf("%d: to %s lookup %d", r.Priority, r.Dst, r.Table)
}

// Errors that callers can recognise with errors.Is. Every error returned wraps
// one of them or a kernel error, and names the link, address, route or rule.
var (
	// ErrLinkNotFound means no link has the name.
	ErrLinkNotFound = errors.New("link not found")
	// ErrNoAddress means the interface has no global unicast address.
	ErrNoAddress = errors.New("no global unicast address")
	// ErrInvalid means the desired state is refused before anything is written.
	ErrInvalid = errors.New("invalid management port")
	// ErrGatewayUnreachable means a route's gateway is not on any of the port's
	// subnets, so the kernel refuses the route.
	ErrGatewayUnreachable = errors.New("gateway not reachable through the port")
	// ErrTableInUse means another management port of ours records the same table.
	ErrTableInUse = errors.New("routing table used by another management port")
	// ErrVRFUnsupported means the kernel has no VRF devices; fall back to rules.
	ErrVRFUnsupported = errors.New("kernel has no VRF devices")
)

// RouteError is the failure of one route of a management port; the port's other
// routes are applied regardless.
type RouteError struct {
	// Port is the management port's name.
	Port string
	// Table is the kernel table the route was meant for.
	Table int
	// Route is the route that failed.
	Route Route
	// Err is the cause (ErrGatewayUnreachable, or the kernel's error).
	Err error
}

// Error names the port, the table and the route.
func (e *RouteError) Error() string {
	return fmt.Sprintf("management port %s: route %s table %d: %v", e.Port, e.Route, e.Table, e.Err)
}

// Unwrap returns the cause.
func (e *RouteError) Unwrap() error { return e.Err }
