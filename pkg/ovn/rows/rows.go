// Package rows holds a set of OVN Northbound rows of the tables ovnk programs and
// inspects. The same Set describes what a zone should contain (the topology compiler's
// output) and what it does contain (a snapshot read from a live NB): in both, a row's
// UUID field is its key inside the set, and references between rows (a router's ports,
// routes, policies and NAT; a switch's ports and ACLs; a port's gateway chassis; a port
// group's ports and ACLs; a meter's bands) hold those keys.
// In a compiled set the keys are stable identities; in a snapshot they are real UUIDs.
package rows

import (
	"cmp"
	"slices"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// Set is a collection of NB rows whose references resolve within the set.
type Set struct {
	Switches       []*nbdb.LogicalSwitch
	SwitchPorts    []*nbdb.LogicalSwitchPort
	Routers        []*nbdb.LogicalRouter
	RouterPorts    []*nbdb.LogicalRouterPort
	Routes         []*nbdb.LogicalRouterStaticRoute
	Policies       []*nbdb.LogicalRouterPolicy
	NATs           []*nbdb.NAT
	GatewayChassis []*nbdb.GatewayChassis
	ACLs           []*nbdb.ACL
	PortGroups     []*nbdb.PortGroup
	Meters         []*nbdb.Meter
	MeterBands     []*nbdb.MeterBand
}

// Len is the number of rows in the set.
func (s *Set) Len() int {
	return len(s.Switches) + len(s.SwitchPorts) + len(s.Routers) + len(s.RouterPorts) +
		len(s.Routes) + len(s.Policies) + len(s.NATs) + len(s.GatewayChassis) +
		len(s.ACLs) + len(s.PortGroups) + len(s.Meters) + len(s.MeterBands)
}

// Sort orders every table by key, so equal sets compare and print equally.
func (s *Set) Sort() {
	sortByUUID(s.Switches, func(r *nbdb.LogicalSwitch) string { return r.UUID })
	sortByUUID(s.SwitchPorts, func(r *nbdb.LogicalSwitchPort) string { return r.UUID })
	sortByUUID(s.Routers, func(r *nbdb.LogicalRouter) string { return r.UUID })
	sortByUUID(s.RouterPorts, func(r *nbdb.LogicalRouterPort) string { return r.UUID })
	sortByUUID(s.Routes, func(r *nbdb.LogicalRouterStaticRoute) string { return r.UUID })
	sortByUUID(s.Policies, func(r *nbdb.LogicalRouterPolicy) string { return r.UUID })
	sortByUUID(s.NATs, func(r *nbdb.NAT) string { return r.UUID })
	sortByUUID(s.GatewayChassis, func(r *nbdb.GatewayChassis) string { return r.UUID })
	sortByUUID(s.ACLs, func(r *nbdb.ACL) string { return r.UUID })
	sortByUUID(s.PortGroups, func(r *nbdb.PortGroup) string { return r.UUID })
	sortByUUID(s.Meters, func(r *nbdb.Meter) string { return r.UUID })
	sortByUUID(s.MeterBands, func(r *nbdb.MeterBand) string { return r.UUID })
}

func sortByUUID[T any](rows []T, key func(T) string) {
	slices.SortFunc(rows, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
}

// Index resolves keys and names to rows. Build it once per set with NewIndex; it does
// not follow later changes to the set.
type Index struct {
	SwitchPorts    map[string]*nbdb.LogicalSwitchPort
	RouterPorts    map[string]*nbdb.LogicalRouterPort
	Routes         map[string]*nbdb.LogicalRouterStaticRoute
	Policies       map[string]*nbdb.LogicalRouterPolicy
	NATs           map[string]*nbdb.NAT
	GatewayChassis map[string]*nbdb.GatewayChassis
	ACLs           map[string]*nbdb.ACL
	MeterBands     map[string]*nbdb.MeterBand

	switchByName map[string]*nbdb.LogicalSwitch
	routerByName map[string]*nbdb.LogicalRouter
}

// NewIndex indexes the set by key, and switches and routers by name.
func NewIndex(s *Set) *Index {
	ix := &Index{
		SwitchPorts:    byKey(s.SwitchPorts, func(r *nbdb.LogicalSwitchPort) string { return r.UUID }),
		RouterPorts:    byKey(s.RouterPorts, func(r *nbdb.LogicalRouterPort) string { return r.UUID }),
		Routes:         byKey(s.Routes, func(r *nbdb.LogicalRouterStaticRoute) string { return r.UUID }),
		Policies:       byKey(s.Policies, func(r *nbdb.LogicalRouterPolicy) string { return r.UUID }),
		NATs:           byKey(s.NATs, func(r *nbdb.NAT) string { return r.UUID }),
		GatewayChassis: byKey(s.GatewayChassis, func(r *nbdb.GatewayChassis) string { return r.UUID }),
		ACLs:           byKey(s.ACLs, func(r *nbdb.ACL) string { return r.UUID }),
		MeterBands:     byKey(s.MeterBands, func(r *nbdb.MeterBand) string { return r.UUID }),
		switchByName:   byKey(s.Switches, func(r *nbdb.LogicalSwitch) string { return r.Name }),
		routerByName:   byKey(s.Routers, func(r *nbdb.LogicalRouter) string { return r.Name }),
	}
	return ix
}

func byKey[T any](rows []T, key func(T) string) map[string]T {
	m := make(map[string]T, len(rows))
	for _, r := range rows {
		m[key(r)] = r
	}
	return m
}

// Switch returns the switch of that name, or nil.
func (ix *Index) Switch(name string) *nbdb.LogicalSwitch { return ix.switchByName[name] }

// Router returns the router of that name, or nil.
func (ix *Index) Router(name string) *nbdb.LogicalRouter { return ix.routerByName[name] }

// Append adds o's rows to s, table by table.
func (s *Set) Append(o *Set) {
	s.Switches = append(s.Switches, o.Switches...)
	s.SwitchPorts = append(s.SwitchPorts, o.SwitchPorts...)
	s.Routers = append(s.Routers, o.Routers...)
	s.RouterPorts = append(s.RouterPorts, o.RouterPorts...)
	s.Routes = append(s.Routes, o.Routes...)
	s.Policies = append(s.Policies, o.Policies...)
	s.NATs = append(s.NATs, o.NATs...)
	s.GatewayChassis = append(s.GatewayChassis, o.GatewayChassis...)
	s.ACLs = append(s.ACLs, o.ACLs...)
	s.PortGroups = append(s.PortGroups, o.PortGroups...)
	s.Meters = append(s.Meters, o.Meters...)
	s.MeterBands = append(s.MeterBands, o.MeterBands...)
}
