package topology

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// emitter accumulates the rows of one network in one zone. A network is compiled into
// its own emitter and merged only if it compiled without error, so a bad network never
// leaves half its rows in the result.
type emitter struct {
	set      rows.Set
	warnings []string
	pods     map[string]error // local pods whose port could not be programmed
	// podPrefixes memoizes the network's pod port name prefix by namespace, which
	// cluster.OVNPrefix would otherwise compute anew for each of the network's pods.
	podPrefixes map[string]string
	net         *cluster.Network
	// networkIDs are the external IDs every row of the network carries.
	networkIDs map[string]string

	// The memo's record of the network; all nil when the compile has no memo.
	rec  *recorder
	prev *networkMemo // the last compile's record of the network
	// nodes, gateways and remotePods are the network's pieces (see networkMemo).
	nodes, gateways *nodePieces
	remotePods      *podPieces
	// loops are the calls of loops over the remote nodes and pods (loopRun).
	loops []loopRun
	// localPods are the local node's pods on the network; replay says the network is
	// compiled from prev, only its loops run again (replayNetwork); replayable, that
	// the next compile may do so from this one's record.
	localPods          []*cluster.Pod
	replay, replayable bool
	// recorded is the record of the network's compile, once it compiled.
	recorded *networkMemo
}

func newEmitter(n *cluster.Network) *emitter {
	kind := n.Owner.Kind
	if kind == "" {
		kind = "DefaultNetwork"
	}
	return &emitter{net: n, networkIDs: map[string]string{
		rows.OwnerControllerKey: rows.OwnerController,
		rows.OwnerTypeKey:       kind,
		rows.NetworkKey:         n.Name,
		rows.TopologyKey:        strings.ToLower(string(n.Topology)),
	}}
}

// ids returns the external IDs of a row: ours, the network's, the node's when the row
// belongs to one node (a per-node switch, a remote port), and its identity. Every row
// of a zone gets a map of its own, a million at scale: cloning the keys every row of
// the network shares copies them whole, where setting them would hash each anew.
func (e *emitter) ids(id, node string) map[string]string {
	m := maps.Clone(e.networkIDs)
	m[rows.IDKey] = id
	if node != "" {
		m[rows.NodeKey] = node
	}
	return m
}

// reserve makes room for n more elements in *s, where a loop knows how many rows or
// references it adds: a transit switch has a port per node, its router a route per
// node and subnet, and growing such lists by doubling copies them over and over.
func reserve[T any](s *[]T, n int) { *s = slices.Grow(*s, n) }

func (e *emitter) logicalSwitch(name, node string, otherConfig map[string]string) *nbdb.LogicalSwitch {
	id := "LS:" + name
	ls := &nbdb.LogicalSwitch{UUID: id, Name: name, OtherConfig: otherConfig, ExternalIDs: e.ids(id, node)}
	e.set.Switches = append(e.set.Switches, ls)
	return ls
}

func (e *emitter) switchPort(ls *nbdb.LogicalSwitch, lsp *nbdb.LogicalSwitchPort, node string) *nbdb.LogicalSwitchPort {
	lsp.UUID = "LSP:" + lsp.Name
	ids := e.ids(lsp.UUID, node)
	for k, v := range lsp.ExternalIDs {
		ids[k] = v
	}
	lsp.ExternalIDs = ids
	ls.Ports = append(ls.Ports, lsp.UUID)
	e.set.SwitchPorts = append(e.set.SwitchPorts, lsp)
	return lsp
}

// routerLink is the switch side of a switch-to-router link: a router-type port whose
// router-port option names the router's port.
func (e *emitter) routerLink(ls *nbdb.LogicalSwitch, name, routerPort, node string, extraOptions map[string]string) *nbdb.LogicalSwitchPort {
	opts := map[string]string{"router-port": routerPort}
	for k, v := range extraOptions {
		opts[k] = v
	}
	return e.switchPort(ls, &nbdb.LogicalSwitchPort{Name: name, Type: "router", Addresses: []string{"router"}, Options: opts}, node)
}

func (e *emitter) logicalRouter(name, node string, options map[string]string) *nbdb.LogicalRouter {
	id := "LR:" + name
	lr := &nbdb.LogicalRouter{UUID: id, Name: name, Options: options, ExternalIDs: e.ids(id, node)}
	e.set.Routers = append(e.set.Routers, lr)
	return lr
}

func (e *emitter) routerPort(lr *nbdb.LogicalRouter, lrp *nbdb.LogicalRouterPort, node string) *nbdb.LogicalRouterPort {
	lrp.UUID = "LRP:" + lrp.Name
	lrp.ExternalIDs = e.ids(lrp.UUID, node)
	lr.Ports = append(lr.Ports, lrp.UUID)
	e.set.RouterPorts = append(e.set.RouterPorts, lrp)
	return lrp
}

// gatewayChassis makes lrp a distributed gateway port bound to chassis, which OVN
// requires of the port named by a NAT's logical_port on a distributed router.
func (e *emitter) gatewayChassis(lrp *nbdb.LogicalRouterPort, chassis, node string) {
	id := "GWC:" + lrp.Name + ":" + chassis
	gc := &nbdb.GatewayChassis{UUID: id, Name: lrp.Name + "-" + chassis, ChassisName: chassis, Priority: 1, ExternalIDs: e.ids(id, node)}
	lrp.GatewayChassis = append(lrp.GatewayChassis, id)
	e.set.GatewayChassis = append(e.set.GatewayChassis, gc)
}

// route adds a static route. policy is "" (dst-ip, OVN's default) or "src-ip".
func (e *emitter) route(lr *nbdb.LogicalRouter, prefix, nexthop, policy, outputPort, node string) {
	id := "route:" + lr.Name + ":" + prefix + ":" + policyName(policy) + ":" + nexthop
	r := &nbdb.LogicalRouterStaticRoute{UUID: id, IPPrefix: prefix, Nexthop: nexthop, ExternalIDs: e.ids(id, node)}
	if policy != "" {
		p := nbdb.LogicalRouterStaticRoutePolicy(policy)
		r.Policy = &p
	}
	if outputPort != "" {
		port := outputPort // a copy, so that routes without one leave no string on the heap
		r.OutputPort = &port
	}
	lr.StaticRoutes = append(lr.StaticRoutes, id)
	e.set.Routes = append(e.set.Routes, r)
}

func policyName(p string) string {
	if p == "" {
		return "dst-ip"
	}
	return p
}

// policy adds a logical router policy; nexthops only for reroute.
func (e *emitter) policy(lr *nbdb.LogicalRouter, priority int, match string, action nbdb.LogicalRouterPolicyAction, nexthops []string, options map[string]string, node string) {
	id := "policy:" + lr.Name + ":" + strconv.Itoa(priority) + ":" + match
	p := &nbdb.LogicalRouterPolicy{UUID: id, Priority: priority, Match: match, Action: action, Nexthops: nexthops, Options: options, ExternalIDs: e.ids(id, node)}
	lr.Policies = append(lr.Policies, id)
	e.set.Policies = append(e.set.Policies, p)
}

// ephemeralPortRange is the source port range SNAT picks from: Linux's default
// ephemeral range, as upstream sets it, so translated connections never take a port
// a host service listens on.
const ephemeralPortRange = "32768-60999"

// snat adds an SNAT rule; logicalPort and match are optional.
func (e *emitter) snat(lr *nbdb.LogicalRouter, externalIP, logicalIP, logicalPort, match, node string) {
	id := "nat:" + lr.Name + ":snat:" + externalIP + ":" + logicalIP + ":" + logicalPort
	nat := &nbdb.NAT{UUID: id, Type: nbdb.NATTypeSNAT, ExternalIP: externalIP, LogicalIP: logicalIP, Match: match,
		ExternalPortRange: ephemeralPortRange, Options: map[string]string{"stateless": "false"}, ExternalIDs: e.ids(id, node)}
	if logicalPort != "" {
		port := logicalPort // a copy, so that NATs without one leave no string on the heap
		nat.LogicalPort = &port
	}
	lr.Nat = append(lr.Nat, id)
	e.set.NATs = append(e.set.NATs, nat)
}

// podPortName is PodPortName(e.net, p).
func (e *emitter) podPortName(p *cluster.Pod) string {
	prefix, ok := e.podPrefixes[p.Namespace]
	if !ok {
		if e.podPrefixes == nil {
			e.podPrefixes = map[string]string{}
		}
		prefix = podPortPrefix(e.net, p.Namespace)
		e.podPrefixes[p.Namespace] = prefix
	}
	return prefix + p.Namespace + "_" + p.Name
}

func (e *emitter) warnf(format string, args ...any) {
	e.warnings = append(e.warnings, fmt.Sprintf(format, args...))
}

// External-ID keys upstream gives the objects of a feature beside its owner type.
const (
	nameKey      = "k8s.ovn.org/name"
	directionKey = "direction"
)

// acl adds an ACL owned by a feature (ownerType, as upstream's owner-type) whose
// identity is made of parts; extra holds the feature's own external IDs. Every ACL
// names the ACL-logging meter, as upstream's do.
func (e *emitter) acl(ownerType string, parts []string, extra map[string]string, a *nbdb.ACL, node string) *nbdb.ACL {
	a.UUID = "ACL:" + ownerType + ":" + strings.Join(parts, ":")
	a.ExternalIDs = e.ids(a.UUID, node)
	a.ExternalIDs[rows.OwnerTypeKey] = ownerType
	for k, v := range extra {
		a.ExternalIDs[k] = v
	}
	meter := aclLoggingMeter
	a.Meter = &meter
	e.set.ACLs = append(e.set.ACLs, a)
	return a
}

// portGroup adds a port group owned by a feature; pg holds its name, ports and ACLs.
func (e *emitter) portGroup(pg *nbdb.PortGroup, ownerType, objectName string) {
	pg.UUID = "PG:" + ownerType + ":" + objectName
	pg.ExternalIDs = e.ids(pg.UUID, "")
	pg.ExternalIDs[rows.OwnerTypeKey] = ownerType
	pg.ExternalIDs[nameKey] = objectName
	e.set.PortGroups = append(e.set.PortGroups, pg)
}

// aclLoggingMeter adds the meter that limits how many packets per second ACLs log.
func (e *emitter) aclLoggingMeter() {
	fair := true
	band := &nbdb.MeterBand{UUID: "MeterBand:" + aclLoggingMeter, Action: nbdb.MeterBandActionDrop, Rate: aclLoggingRateLimit, ExternalIDs: e.ids("MeterBand:"+aclLoggingMeter, "")}
	meter := &nbdb.Meter{UUID: "Meter:" + aclLoggingMeter, Name: aclLoggingMeter, Unit: nbdb.MeterUnitPktps, Fair: &fair, Bands: []string{band.UUID}, ExternalIDs: e.ids("Meter:"+aclLoggingMeter, "")}
	e.set.Meters = append(e.set.Meters, meter)
	e.set.MeterBands = append(e.set.MeterBands, band)
}
