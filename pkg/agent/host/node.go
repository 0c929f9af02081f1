package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ovnk/ovnk/pkg/cluster"

	"github.com/ovnk/ovnk/pkg/host/gateway"
	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/host/openflow"
	"github.com/ovnk/ovnk/pkg/host/sbchassis"
	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/pkg/topology"
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
	WaitPort(ctx context.Context, name string) (vswitch.PortState, error)
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
	// facts are as of the last Publish; synced is what the host holds per network as of
	// the last AfterZone, kept for networks the zone did not apply this time.
	facts  Facts
	synced map[string]synced
	// waitingSince is when AfterZone began waiting for patch ports; zero when none.
	waitingSince time.Time
}

// synced is one network's host state the agent last applied.
type synced struct {
	port    *ManagementPort
	gateway *GatewayPort
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

// Facts reads what the node knows about itself.
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
		// OVS's install writes it (ovs-ctl keeps it in system-id.conf and writes it
		// back at every start): one made here would be replaced at OVS's next start,
		// and every zone would see the node's chassis change.
		return Facts{}, errors.New("OVS has no external_ids:system-id yet, the node's chassis name: its install sets it (ovs-ctl --system-id=random, or ovs-vsctl set Open_vSwitch . external_ids:system-id=<uuid>)")
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
		"ovn-bridge-mappings":      withMapping(ids["ovn-bridge-mappings"], topology.PhysicalNetwork, n.GatewayBridge),
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
// table for its masquerade address, as upstream's.
const udnRulePriority = 2000

// udnTableBase + network id is the routing table of a user-defined network's
// management port. Upstream numbers a VRF's table 1000 + the port's ifindex; a table
// from the network id stays the same when the link is re-made, and this range never
// meets the link-index tables (upstream's, and its EgressIP ones).
const udnTableBase = 100000

// SyncManagementPorts plugs the ports of sync into br-int and configures their links,
// leaves those of hold as they are, and removes every other management port of ours
// first, freeing its table. One port's failure does not stop the others: the errors
// are joined.
func (n *Node) SyncManagementPorts(ctx context.Context, sync, hold []ManagementPort) error {
	c, err := n.connected(ctx)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	links := make([]netconf.ManagementPort, 0, len(sync)+len(hold))
	for _, mp := range append(slices.Clone(sync), hold...) {
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
	for i, mp := range sync {
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
	if _, err := c.OVS.WaitPort(ctx, mp.Link); err != nil {
		return err
	}
	_, err := c.Links.SyncManagementPort(ctx, link)
	return err
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
	// The port's own subnet is on the link, in its table (netconf puts it there, and
	// not in the main table, for a port with a table of its own). No rule sends the
	// host's traffic for the network's subnets there: as upstream, where the port is in
	// a VRF, the host does not route into a user-defined network (whose subnets may
	// overlap the node's own networks, or another network's) — only a socket bound to
	// the port does, through the oif rule a VRF's l3mdev rule stands for here.
	for _, a := range mp.Addresses {
		l.Rules = append(l.Rules, netconf.Rule{Priority: udnRulePriority, Dst: netip.PrefixFrom(unspecified(a.Addr()), 0), Oif: mp.Link, Table: l.Table})
	}
	// The network's pods reach the host from its masquerade address (the cluster
	// router SNATs them): rules send the replies back through the port.
	for _, m := range mp.Masquerade {
		host := netip.PrefixFrom(m, m.BitLen())
		l.Routes = append(l.Routes, netconf.Route{Dst: host})
		l.Rules = append(l.Rules, netconf.Rule{Priority: udnRulePriority, Dst: host, Table: l.Table})
	}
	return l
}

// unspecified is the unspecified address of a's family.
func unspecified(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}

func gatewayOf(gws []netip.Addr, v6 bool) (netip.Addr, bool) {
	i := slices.IndexFunc(gws, func(a netip.Addr) bool { return a.Is6() == v6 })
	if i < 0 {
		return netip.Addr{}, false
	}
	return gws[i], true
}

// SyncGateway programs the gateway bridge's flows for the gateway routers of gws. A
// router whose patch port ovn-controller has not made yet is left out; waiting names
// those of them that wait says to wait for. One router's trouble leaves the others'
// flows in place: its error is joined.
func (n *Node) SyncGateway(ctx context.Context, gws []GatewayPort, wait func(network string) bool, f Facts) (waiting []string, err error) {
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
	var errs []error
	for _, g := range gws {
		st, found, err := c.OVS.Port(ctx, g.Patch)
		if err != nil {
			errs = append(errs, fmt.Errorf("patch port %s of network %s: %w", g.Patch, g.Network, err))
			continue
		}
		if !found || st.OFPort <= 0 {
			if wait(g.Network) {
				waiting = append(waiting, g.Network)
			}
			continue
		}
		cfg.Patches = append(cfg.Patches, gateway.Patch{Network: g.Network, OFPort: st.OFPort, CTMark: g.CTMark, Masquerade: g.Masquerade})
	}
	flows, err := gateway.SharedFlows(cfg)
	if err != nil {
		return waiting, errors.Join(append(errs, err)...)
	}
	if _, err := c.Flows.Sync(ctx, n.GatewayBridge, gateway.Cookie, flows); err != nil {
		errs = append(errs, fmt.Errorf("flows of %s: %w", n.GatewayBridge, err))
	}
	return waiting, errors.Join(errs...)
}

// uplink finds the NIC on the gateway bridge: its one port that is a device (system
// or DPDK), neither the bridge's own, a patch nor a tunnel. (A bond of NICs is not
// handled yet: vswitch.BridgePorts refuses a port of several interfaces.)
func (n *Node) uplink(ctx context.Context, ovs OVS) (int, error) {
	ports, err := ovs.BridgePorts(ctx, n.GatewayBridge)
	if err != nil {
		return 0, fmt.Errorf("ports of %s: %w", n.GatewayBridge, err)
	}
	var nics []vswitch.PortState
	for _, p := range ports {
		if p.Type == "" || p.Type == "system" || p.Type == "dpdk" {
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

// Publish reads the node's facts, points ovn-controller at the zone, and returns the
// annotations that publish the facts (zone.NodeDataplane).
func (n *Node) Publish(ctx context.Context) (map[string]string, error) {
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

// BeforeZone writes the remote chassis (zone.NodeDataplane). A node left out for want
// of an address is reported: the zone still names it in remote ports.
func (n *Node) BeforeZone(ctx context.Context, st *cluster.State) error {
	p, _ := PlanFor(st, n.Name, n.IntegrationBridge)
	res, err := n.SyncChassis(ctx, p)
	if res.Changed() {
		log.FromContext(ctx).Info("remote chassis", "changes", res.String())
	}
	return errors.Join(append(p.ChassisErrors, err)...)
}

// patchPortPatience is how long AfterZone asks to come back soon for a patch port
// ovn-controller has not made; after that it is an error (is ovn-controller running?)
// and retried with the zone's back-off.
const patchPortPatience = 30 * time.Second

// AfterZone plugs the management ports and programs the gateway flows
// (zone.NodeDataplane). The networks keep names are held as last applied; it asks to
// come back while an applied network's patch port is still missing.
func (n *Node) AfterZone(ctx context.Context, st *cluster.State, keep func(network string) bool) (bool, error) {
	if len(n.facts.Addresses) == 0 {
		return false, errors.New("the node's facts are not known yet (it could not be published)")
	}
	p, _ := PlanFor(st, n.Name, n.IntegrationBridge) // networks left out are reported by the zone
	var sync, hold []ManagementPort
	var gws []GatewayPort
	planned := map[string]bool{}
	for _, mp := range p.ManagementPorts {
		planned[mp.Network] = true
		if !keep(mp.Network) {
			sync = append(sync, mp)
		}
	}
	for _, g := range p.Gateways {
		if !keep(g.Network) {
			gws = append(gws, g)
		}
	}
	for name, last := range n.synced {
		if !keep(name) {
			continue
		}
		if last.port != nil {
			hold = append(hold, *last.port)
		}
		if last.gateway != nil {
			gws = append(gws, *last.gateway)
		}
	}
	portsErr := n.SyncManagementPorts(ctx, sync, hold)
	waiting, gwErr := n.SyncGateway(ctx, gws, func(network string) bool { return !keep(network) }, n.facts)

	next := map[string]synced{}
	for name, last := range n.synced {
		if keep(name) {
			next[name] = last
		}
	}
	for i := range sync {
		e := next[sync[i].Network]
		e.port = &sync[i]
		next[sync[i].Network] = e
	}
	for i := range gws {
		if keep(gws[i].Network) {
			continue
		}
		e := next[gws[i].Network]
		e.gateway = &gws[i]
		next[gws[i].Network] = e
	}
	n.synced = next

	errs := []error{portsErr, gwErr}
	if len(waiting) == 0 {
		n.waitingSince = time.Time{}
	} else if n.waitingSince.IsZero() {
		n.waitingSince = time.Now()
	} else if time.Since(n.waitingSince) > patchPortPatience {
		errs = append(errs, fmt.Errorf("ovn-controller has not plugged the gateway routers of %v into %s for %v: is it running and pointed at the zone?",
			waiting, n.GatewayBridge, time.Since(n.waitingSince).Round(time.Second)))
	}
	return len(waiting) > 0, errors.Join(errs...)
}
