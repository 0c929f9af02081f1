package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/uuid"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ovnk/ovnk/pkg/cluster"

	"github.com/ovnk/ovnk/pkg/host/gateway"
	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/host/openflow"
	"github.com/ovnk/ovnk/pkg/host/sbchassis"
	"github.com/ovnk/ovnk/pkg/host/vswitch"
)

// OVS is the node's Open vSwitch database, as far as the agent uses it
// (pkg/host/vswitch).
type OVS interface {
	ExternalIDs(ctx context.Context) (map[string]string, error)
	SetExternalIDs(ctx context.Context, ids map[string]string) (bool, error)
	EnsureBridge(ctx context.Context, b vswitch.Bridge) (bool, error)
	EnsurePort(ctx context.Context, bridge string, p vswitch.Port) (bool, error)
	DeletePort(ctx context.Context, bridge, name string) (bool, error)
	Port(ctx context.Context, name string) (vswitch.PortState, bool, error)
	OwnedPorts(ctx context.Context, bridge string) ([]string, error)
	BridgePorts(ctx context.Context, bridge string) ([]vswitch.PortState, error)
}

// Southbound is the zone's Southbound database (pkg/host/sbchassis).
type Southbound interface {
	Sync(ctx context.Context, desired []sbchassis.RemoteChassis) (sbchassis.Result, error)
}

// Clients are the node's servers the agent talks to.
type Clients struct {
	OVS   OVS
	SB    Southbound
	Links netconf.Interface
	Flows openflow.Bridges
}

// Node does the node's own part. Open connects its clients; it is called again on
// every sync until it succeeds, so an agent that starts before OVS does reports why
// and catches up once OVS is there.
type Node struct {
	Name string
	// GatewayBridge holds the node's NIC and address (br-ex); IntegrationBridge is
	// ovn-controller's (br-int), of DatapathType.
	GatewayBridge, IntegrationBridge, DatapathType string
	// SBEndpoints are what ovn-controller is pointed at (ovn-remote).
	SBEndpoints []string
	Open        func(ctx context.Context) (*Clients, error)

	clients *Clients
	facts   Facts // as of the last Annotations
}

func (n *Node) connected(ctx context.Context) (*Clients, error) {
	if n.clients != nil {
		return n.clients, nil
	}
	c, err := n.Open(ctx)
	if err != nil {
		return nil, err
	}
	n.clients = c
	return c, nil
}

// Facts reads what the node knows about itself. A chassis without a system-id (a
// fresh OVS) gets one, as an OVS install would have written it: it names the node's
// chassis for as long as the OVS database lives.
func (n *Node) Facts(ctx context.Context) (Facts, error) {
	c, err := n.connected(ctx)
	if err != nil {
		return Facts{}, err
	}
	ids, err := c.OVS.ExternalIDs(ctx)
	if err != nil {
		return Facts{}, fmt.Errorf("read OVS external_ids: %w", err)
	}
	f := Facts{ChassisID: ids["system-id"], Bridge: n.GatewayBridge}
	if f.ChassisID == "" {
		f.ChassisID = uuid.NewString()
		if _, err := c.OVS.SetExternalIDs(ctx, map[string]string{"system-id": f.ChassisID}); err != nil {
			return Facts{}, fmt.Errorf("give OVS a system-id: %w", err)
		}
	}
	gw, err := c.Links.Gateway(ctx, n.GatewayBridge)
	if err != nil {
		return Facts{}, fmt.Errorf("gateway bridge %s: %w", n.GatewayBridge, err)
	}
	f.MAC, f.Addresses, f.NextHops = gw.MAC.String(), gw.Addresses, gw.NextHops
	if f.HostCIDRs, err = c.Links.HostCIDRs(ctx); err != nil {
		return Facts{}, fmt.Errorf("host addresses: %w", err)
	}
	return f, nil
}

// physicalNetwork is the bridge mapping name every network's localnet port uses.
const physicalNetwork = "physnet"

// Prepare points ovn-controller at the zone (OVS external_ids) and makes br-int.
func (n *Node) Prepare(ctx context.Context, f Facts) error {
	c, err := n.connected(ctx)
	if err != nil {
		return err
	}
	encap, ok := EncapIP(f.Addresses)
	if !ok {
		return fmt.Errorf("gateway bridge %s has no address for the tunnels", n.GatewayBridge)
	}
	ids, err := c.OVS.ExternalIDs(ctx)
	if err != nil {
		return fmt.Errorf("read OVS external_ids: %w", err)
	}
	if _, err := c.OVS.SetExternalIDs(ctx, map[string]string{
		"hostname":                 n.Name,
		"ovn-encap-type":           "geneve",
		"ovn-encap-ip":             encap.String(),
		"ovn-remote":               strings.Join(n.SBEndpoints, ","),
		"ovn-bridge":               n.IntegrationBridge,
		"ovn-bridge-datapath-type": n.DatapathType,
		"ovn-bridge-mappings":      withMapping(ids["ovn-bridge-mappings"], physicalNetwork, n.GatewayBridge),
		// One zone per node: without it ovn-controller makes no tunnels to remote
		// chassis.
		"ovn-is-interconn": "true",
	}); err != nil {
		return fmt.Errorf("point ovn-controller at the zone: %w", err)
	}
	if _, err := c.OVS.EnsureBridge(ctx, vswitch.Bridge{
		Name:         n.IntegrationBridge,
		DatapathType: n.DatapathType,
		FailMode:     "secure",
		OtherConfig:  map[string]string{"disable-in-band": "true"},
	}); err != nil {
		return fmt.Errorf("integration bridge: %w", err)
	}
	return nil
}

// withMapping sets name's bridge in an ovn-bridge-mappings value, keeping the others.
func withMapping(mappings, name, bridge string) string {
	out := []string{name + ":" + bridge}
	for _, m := range strings.Split(mappings, ",") {
		if k, _, ok := strings.Cut(m, ":"); ok && k != name {
			out = append(out, m)
		}
	}
	return strings.Join(out, ",")
}

// SyncChassis writes the other nodes into the zone's Southbound as remote chassis,
// before the zone's remote ports name them.
func (n *Node) SyncChassis(ctx context.Context, p Plan) (sbchassis.Result, error) {
	c, err := n.connected(ctx)
	if err != nil {
		return sbchassis.Result{}, err
	}
	return c.SB.Sync(ctx, p.Chassis)
}

// udnRulePriority is the priority of the rules that select a user-defined network's
// table for its subnets.
const udnRulePriority = 2000

// udnTableBase is the first routing table of user-defined networks' management
// ports: 1000 + network id. (Upstream numbers a VRF's table 1000 + the port's
// ifindex; a table from the network id stays the same when the link is re-made.)
const udnTableBase = 1000

// SyncManagementPorts plugs every planned management port into br-int and configures
// its link; ports of networks no longer planned go first, freeing their tables. One
// port's failure does not stop the others: the errors are joined.
func (n *Node) SyncManagementPorts(ctx context.Context, p Plan) error {
	c, err := n.connected(ctx)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	links := make([]netconf.ManagementPort, 0, len(p.ManagementPorts))
	for _, mp := range p.ManagementPorts {
		want[mp.Link] = true
		links = append(links, linkOf(mp))
	}
	var errs []error
	if _, err := c.Links.PruneManagementPorts(ctx, links); err != nil {
		errs = append(errs, fmt.Errorf("remove stale management ports: %w", err))
	}
	owned, err := c.OVS.OwnedPorts(ctx, n.IntegrationBridge)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list our ports on %s: %w", n.IntegrationBridge, err))...)
	}
	for _, name := range owned {
		if strings.HasPrefix(name, netconf.ManagementPortPrefix) && !want[name] {
			if _, err := c.OVS.DeletePort(ctx, n.IntegrationBridge, name); err != nil {
				errs = append(errs, fmt.Errorf("remove stale management port %s: %w", name, err))
			}
		}
	}
	for i, mp := range p.ManagementPorts {
		if err := n.plug(ctx, c, mp, links[i]); err != nil {
			errs = append(errs, fmt.Errorf("management port %s of network %s: %w", mp.Link, mp.Network, err))
		}
	}
	return errors.Join(errs...)
}

func (n *Node) plug(ctx context.Context, c *Clients, mp ManagementPort, link netconf.ManagementPort) error {
	if _, err := c.OVS.EnsurePort(ctx, n.IntegrationBridge, vswitch.Port{
		Name:        mp.Link,
		Type:        "internal",
		ExternalIDs: map[string]string{"iface-id": mp.LSP},
		MAC:         mp.MAC,
		MTURequest:  mp.MTU,
	}); err != nil {
		return err
	}
	if _, err := waitPort(ctx, c.OVS, mp.Link); err != nil {
		return err
	}
	_, err := c.Links.SyncManagementPort(ctx, link)
	return err
}

// waitPort waits until vswitchd has made the port, or says why it could not.
func waitPort(ctx context.Context, ovs OVS, name string) (vswitch.PortState, error) {
	if w, ok := ovs.(interface {
		WaitPort(ctx context.Context, name string) (vswitch.PortState, error)
	}); ok {
		return w.WaitPort(ctx, name)
	}
	st, found, err := ovs.Port(ctx, name)
	if err == nil && (!found || st.OFPort <= 0) {
		err = fmt.Errorf("port %s has no OpenFlow number yet", name)
	}
	return st, err
}

// linkOf is the host side of a management port: the default network's routes are in
// the main table; a user-defined network's in a table of its own, selected by rules
// for its subnets (where upstream binds the port to a VRF, which this package keeps
// for kernels that have them).
func linkOf(mp ManagementPort) netconf.ManagementPort {
	mac, _ := net.ParseMAC(mp.MAC) // derived from an address: always valid
	l := netconf.ManagementPort{Name: mp.Link, MAC: mac, MTU: mp.MTU, Addresses: mp.Addresses}
	for _, dst := range mp.Routed {
		if via, ok := gatewayOf(mp.Gateways, dst.Addr().Is6()); ok {
			l.Routes = append(l.Routes, netconf.Route{Dst: dst, Via: via})
		}
	}
	if !mp.OwnTable {
		return l
	}
	l.Table = udnTableBase + mp.NetworkID
	subnets := slices.Clone(mp.Routed)
	for _, a := range mp.Addresses {
		on := a.Masked()
		// The port's own subnet is on the link: in its table too, since the rules
		// send the network's traffic there and the main table's connected route is
		// not consulted.
		l.Routes = append(l.Routes, netconf.Route{Dst: on})
		if !slices.ContainsFunc(subnets, func(s netip.Prefix) bool { return s.Overlaps(on) }) {
			subnets = append(subnets, on)
		}
	}
	// The network's pods reach the host from its masquerade address (the cluster
	// router SNATs them): the replies go back through the port.
	for _, m := range mp.Masquerade {
		host := netip.PrefixFrom(m, m.BitLen())
		l.Routes = append(l.Routes, netconf.Route{Dst: host})
		subnets = append(subnets, host)
	}
	for _, s := range subnets {
		l.Rules = append(l.Rules, netconf.Rule{Priority: udnRulePriority, Dst: s, Table: l.Table})
	}
	return l
}

func gatewayOf(gws []netip.Addr, v6 bool) (netip.Addr, bool) {
	i := slices.IndexFunc(gws, func(a netip.Addr) bool { return a.Is6() == v6 })
	if i < 0 {
		return netip.Addr{}, false
	}
	return gws[i], true
}

// SyncGateway programs the gateway bridge's flows for the planned networks' gateway
// routers. A network whose patch port ovn-controller has not made yet is left out and
// named in waiting: the caller comes back shortly.
func (n *Node) SyncGateway(ctx context.Context, p Plan, f Facts) (waiting []string, err error) {
	c, err := n.connected(ctx)
	if err != nil {
		return nil, err
	}
	nic, err := n.uplink(ctx, c.OVS)
	if err != nil {
		return nil, err
	}
	cfg := gateway.Config{NIC: nic}
	for _, a := range firstOfEachFamily(f.Addresses) {
		if a.Addr().Is4() {
			cfg.IPv4, cfg.NodeIPv4 = true, a.Addr()
		} else {
			cfg.IPv6, cfg.NodeIPv6 = true, a.Addr()
		}
	}
	for _, g := range p.Gateways {
		st, found, err := c.OVS.Port(ctx, g.Patch)
		if err != nil {
			return nil, fmt.Errorf("patch port %s: %w", g.Patch, err)
		}
		if !found || st.OFPort <= 0 {
			waiting = append(waiting, g.Network)
			continue
		}
		cfg.Patches = append(cfg.Patches, gateway.Patch{Network: g.Network, OFPort: st.OFPort, CTMark: g.CTMark, Masquerade: g.Masquerade})
	}
	flows, err := gateway.SharedFlows(cfg)
	if err != nil {
		return waiting, err
	}
	if _, err := c.Flows.Sync(ctx, n.GatewayBridge, gateway.Cookie, flows); err != nil {
		return waiting, fmt.Errorf("flows of %s: %w", n.GatewayBridge, err)
	}
	return waiting, nil
}

// uplink finds the NIC on the gateway bridge: its one port that is neither the
// bridge's own nor a patch port.
func (n *Node) uplink(ctx context.Context, ovs OVS) (int, error) {
	ports, err := ovs.BridgePorts(ctx, n.GatewayBridge)
	if err != nil {
		return 0, fmt.Errorf("ports of %s: %w", n.GatewayBridge, err)
	}
	var nics []vswitch.PortState
	for _, p := range ports {
		if p.Type == "" || p.Type == "system" {
			nics = append(nics, p)
		}
	}
	if len(nics) != 1 {
		names := make([]string, len(nics))
		for i, p := range nics {
			names[i] = p.Name
		}
		return 0, fmt.Errorf("gateway bridge %s has %d NICs %v: want exactly one (the node's uplink)", n.GatewayBridge, len(nics), names)
	}
	if nics[0].OFPort <= 0 {
		return 0, fmt.Errorf("NIC %s of %s has no OpenFlow number (%s)", nics[0].Name, n.GatewayBridge, nics[0].Error)
	}
	return nics[0].OFPort, nil
}

// Annotations reads the node's facts, points ovn-controller at the zone, and
// returns the annotations that publish the facts (zone.NodeDataplane).
func (n *Node) Annotations(ctx context.Context) (map[string]string, error) {
	f, err := n.Facts(ctx)
	if err != nil {
		return nil, err
	}
	if err := n.Prepare(ctx, f); err != nil {
		return nil, err
	}
	n.facts = f
	return f.Annotations(n.Name)
}

// BeforeZone writes the remote chassis (zone.NodeDataplane).
func (n *Node) BeforeZone(ctx context.Context, st *cluster.State) error {
	p, _ := PlanFor(st, n.Name, n.IntegrationBridge) // what is left out is reported by the zone
	res, err := n.SyncChassis(ctx, p)
	if res.Changed() {
		log.FromContext(ctx).Info("remote chassis", "changes", res.String())
	}
	return err
}

// AfterZone plugs the management ports and programs the gateway flows
// (zone.NodeDataplane); it asks to come back while a gateway router's patch port is
// still missing.
func (n *Node) AfterZone(ctx context.Context, st *cluster.State) (bool, error) {
	p, _ := PlanFor(st, n.Name, n.IntegrationBridge)
	portsErr := n.SyncManagementPorts(ctx, p)
	waiting, err := n.SyncGateway(ctx, p, n.facts)
	return len(waiting) > 0, errors.Join(portsErr, err)
}
