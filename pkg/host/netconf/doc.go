// Package netconf reads and writes the node's own network configuration through
// netlink: what the node publishes about itself (its gateway interface and host
// addresses, for the k8s.ovn.org node annotations) and the management ports that
// join the host to each network's logical switch (ovn-k8s-mp0 for the default
// network, one per primary user-defined network).
//
// # Model
//
// Interface is small: two readers (Gateway, HostCIDRs) and an idempotent
// SyncManagementPort that receives a port's full desired state — MAC, MTU,
// addresses, its routing table, routes and ip rules — changes only what
// differs, and reports whether it changed anything. RemoveManagementPort undoes
// a port, ManagementPorts lists the ports configured so far, and
// PruneManagementPorts removes everything of ours that a resync no longer wants.
//
// Host is the real thing: a netlink handle opened on one network namespace
// (never setns on the calling thread). Fake is the same Host logic over a
// simulated kernel that refuses what the kernel refuses; the package's tests run
// one table of cases against both and compare the resulting state as text.
//
// # What is ours
//
//   - Routes carry protocol 85 (RouteProtocol), the number OVN-Kubernetes uses
//     for its own routes, so both recognise them. A port's routes are the
//     protocol-85 routes whose output device is the port, in whatever table.
//   - Rules carry protocol 85 too (FRA_PROTOCOL, Linux 5.3+; this kernel has it).
//     Rules outlive links and name no device, so a port's rules are found by
//     their table: each port with rules has a table of its own, recorded on the
//     link, and a rule selects that table and no other. Only rules of our shape
//     (a destination and a table, no source, mark or interface) count as ours,
//     so protocol-85 rules of other shapes are never touched.
//   - The link itself carries an ownership record in its alias (IFLA_IFALIAS),
//     "ovnk.io/owner=ovnk-agent table=1007", which marks it as a configured port
//     and remembers its table across restarts (so a table change finds the old
//     rules).
//   - Addresses carry no tag: the kernel has IFA_PROTO since 5.18, but
//     vishvananda/netlink v1.3.1 neither sets nor reads it. A management port is
//     an OVS internal port that exists for the agent alone, so every address on it
//     is ours except link-local ones, which belong to the kernel and are never
//     removed (nor accepted as desired addresses).
//
// # Errors, and one bad route
//
// A route whose gateway is not reachable through the port fails with a
// *RouteError naming the port, table and route (errors.Is ErrGatewayUnreachable);
// the rest of the port is still applied, so one bad route never stops the others
// and a repeated Sync retries only that route. Invalid desired state (ErrInvalid)
// and a missing link (ErrLinkNotFound) fail before anything is written.
//
// # VRF, and which half runs here
//
// Upstream OVN-Kubernetes puts a user-defined network's management port in a VRF
// device whose table holds the network's routes. ManagementPort.VRF asks for that:
// SyncManagementPort creates the VRF device with the port's table and enslaves the
// port. A kernel without VRF support (CONFIG_NET_VRF off: "Unknown device type",
// EOPNOTSUPP) makes it fail with ErrVRFUnsupported before anything is written, and
// the caller falls back to the same port with VRF empty and ip rules selecting the
// table. The machines this package is developed and tested on have no VRF devices:
// there only the rules half runs against the kernel (and the refusal is tested);
// the VRF half is exercised against the Fake only.
package netconf
