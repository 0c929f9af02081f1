// Package rows holds a set of OVN Northbound rows of the tables ovnk programs and
// inspects. The same Set describes what a zone should contain (the topology compiler's
// output) and what it does contain (a snapshot read from a live NB): in both, a row's
// UUID field is its key inside the set, and references between rows (a router's ports,
// routes, policies and NAT; a switch's ports and ACLs; a port's gateway chassis; a port
// group's ports and ACLs; a meter's bands) hold those keys.
// In a compiled set the keys are stable identities; in a snapshot they are real UUIDs.
package rows

import "github.com/ovnk/ovnk/pkg/ovn/nbdb"

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
	n := 0
	for _, t := range Tables {
		n += t.len(s)
	}
	return n
}

// SameRows reports whether s and o hold the very same rows (the same pointers), table
// by table and in the same order.
func (s *Set) SameRows(o *Set) bool {
	for _, t := range Tables {
		if !t.sameRows(s, o) {
			return false
		}
	}
	return true
}

// Sort orders every table by key, so equal sets compare and print equally.
func (s *Set) Sort() {
	for _, t := range Tables {
		t.sort(s)
	}
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

// AppendAll adds the rows of every set to s, table by table, each table grown once.
func (s *Set) AppendAll(sets ...*Set) {
	for _, t := range Tables {
		n := 0
		for _, o := range sets {
			n += t.len(o)
		}
		t.grow(s, n)
		for _, o := range sets {
			t.appendAll(s, o)
		}
	}
}

// Append adds o's rows to s, table by table.
func (s *Set) Append(o *Set) {
	for _, t := range Tables {
		t.appendAll(s, o)
	}
}
