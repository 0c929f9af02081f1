package trace

import (
	"fmt"
	"iter"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/ovnk/ovnk/pkg/alloc"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/match"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// Zone is one node's NB contents, indexed for the simulator. Names (of switches,
// routers and ports) are the keys: the same transit switch or router exists under one
// name in every zone, and that is how a packet finds its way on in the next zone.
type Zone struct {
	// Node is the node whose zone this is.
	Node string

	// ix resolves the rows' keys (UUIDs in a dump) and switch and router names.
	ix          *rows.Index
	rows        int
	switchPorts map[string]*nbdb.LogicalSwitchPort  // by name
	routerPorts map[string]*nbdb.LogicalRouterPort  // by name
	switchOf    map[string]*nbdb.LogicalSwitch      // switch port name → its switch
	keyed       map[portKey]*nbdb.LogicalSwitchPort // a switch's ports by requested tunnel key
	routerOf    map[string]*nbdb.LogicalRouter      // router port name → its router
	attachment  map[string]*nbdb.LogicalSwitchPort  // router port name → the switch port of type router attaching it
	acls        map[string]*nbdb.ACL
	portGroups  map[string]*nbdb.PortGroup   // by name
	groupsOn    map[string][]*nbdb.PortGroup // switch name → the groups with a port on it
	addrSets    map[string]*nbdb.AddressSet  // by name
	addrSetByID map[string]*nbdb.AddressSet

	mu       sync.Mutex
	matches  map[string]parsedMatch
	sets     map[string][]netip.Prefix
	stateful map[string]bool // switch name → has an allow-related ACL
}

// parsedMatch is a match as the simulator reads it: parsed, or why not, and the first
// field it reads that the simulator does not follow (see unmodelledField).
type parsedMatch struct {
	expr       *match.Expr
	err        error
	unmodelled string
}

// NewZone indexes a dump of node's zone, as `ovnk-agent dump` or a live NB gives it.
func NewZone(node string, d *ovn.Dump) (*Zone, error) {
	s, err := d.Rows()
	if err != nil {
		return nil, fmt.Errorf("zone of node %s: %w", node, err)
	}
	var extra Extra
	if err := d.DecodeTable("Address_Set", &extra.AddressSets); err != nil {
		return nil, fmt.Errorf("zone of node %s: %w", node, err)
	}
	return ZoneFromRows(node, s, extra), nil
}

// Extra holds the tables a rows.Set has no place for: the address sets ACL matches
// name.
type Extra struct {
	AddressSets []*nbdb.AddressSet
}

// ZoneFromRows indexes node's zone from a row set (a compiled zone or a snapshot).
// References that do not resolve are ignored, as OVN ignores dangling ones.
func ZoneFromRows(node string, s *rows.Set, extra Extra) *Zone {
	z := &Zone{
		Node:        node,
		ix:          rows.NewIndex(s),
		rows:        s.Len() + len(extra.AddressSets),
		switchPorts: make(map[string]*nbdb.LogicalSwitchPort, len(s.SwitchPorts)),
		routerPorts: make(map[string]*nbdb.LogicalRouterPort, len(s.RouterPorts)),
		switchOf:    make(map[string]*nbdb.LogicalSwitch, len(s.SwitchPorts)),
		routerOf:    make(map[string]*nbdb.LogicalRouter, len(s.RouterPorts)),
		attachment:  map[string]*nbdb.LogicalSwitchPort{},
		acls:        make(map[string]*nbdb.ACL, len(s.ACLs)),
		portGroups:  make(map[string]*nbdb.PortGroup, len(s.PortGroups)),
		groupsOn:    map[string][]*nbdb.PortGroup{},
		addrSets:    make(map[string]*nbdb.AddressSet, len(extra.AddressSets)),
		addrSetByID: make(map[string]*nbdb.AddressSet, len(extra.AddressSets)),
		matches:     map[string]parsedMatch{},
		sets:        map[string][]netip.Prefix{},
		stateful:    map[string]bool{},
	}
	for _, p := range s.SwitchPorts {
		z.switchPorts[p.Name] = p
		if p.Type == "router" {
			if rp := p.Options["router-port"]; rp != "" {
				z.attachment[rp] = p
			}
		}
	}
	for _, p := range s.RouterPorts {
		z.routerPorts[p.Name] = p
	}
	z.keyed = map[portKey]*nbdb.LogicalSwitchPort{}
	for _, ls := range s.Switches {
		for _, id := range ls.Ports {
			if p := z.ix.SwitchPorts[id]; p != nil {
				z.switchOf[p.Name] = ls
				if key := p.Options["requested-tnl-key"]; key != "" {
					z.keyed[portKey{ls.Name, key}] = p
				}
			}
		}
	}
	for _, lr := range s.Routers {
		for _, id := range lr.Ports {
			if p := z.ix.RouterPorts[id]; p != nil {
				z.routerOf[p.Name] = lr
			}
		}
	}
	for _, a := range s.ACLs {
		z.acls[a.UUID] = a
	}
	for _, as := range extra.AddressSets {
		z.addrSets[as.Name] = as
		z.addrSetByID[as.UUID] = as
	}
	// A port group's ACLs apply on every switch one of its ports is on, to every
	// packet there: the ACL's match decides which ports it concerns.
	for _, pg := range s.PortGroups {
		z.portGroups[pg.Name] = pg
		on := map[string]bool{}
		for _, id := range pg.Ports {
			if p := z.ix.SwitchPorts[id]; p != nil {
				if ls := z.switchOf[p.Name]; ls != nil && !on[ls.Name] {
					on[ls.Name] = true
					z.groupsOn[ls.Name] = append(z.groupsOn[ls.Name], pg)
				}
			}
		}
	}
	return z
}

// Rows is the number of rows the zone holds.
func (z *Zone) Rows() int { return z.rows }

// SwitchPort returns the named logical switch port and its switch, or nils.
func (z *Zone) SwitchPort(name string) (*nbdb.LogicalSwitchPort, *nbdb.LogicalSwitch) {
	p := z.switchPorts[name]
	if p == nil {
		return nil, nil
	}
	return p, z.switchOf[name]
}

// portKey names a port the way a tunnel does: its switch and its tunnel key.
type portKey struct{ datapath, key string }

// SwitchPortByKey returns the port of the switch named datapath whose requested tunnel
// key is key, or nil. Between zones a packet travels with its port's tunnel key, not its
// name: a port may stand under another name in the receiving zone (OKEP-5094's upgrade
// port keeps the key of the gateway router port it replaces).
func (z *Zone) SwitchPortByKey(datapath, key string) *nbdb.LogicalSwitchPort {
	return z.keyed[portKey{datapath, key}]
}

// isStateful reports whether ls has an allow-related ACL, of either direction, of its
// own or of a port group on it: OVN then commits every connection on the switch to
// conntrack, and replies of established connections pass without ACLs.
func (z *Zone) isStateful(ls *nbdb.LogicalSwitch) bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	if v, ok := z.stateful[ls.Name]; ok {
		return v
	}
	ids := slices.Clone(ls.ACLs)
	for _, pg := range z.groupsOn[ls.Name] {
		ids = append(ids, pg.ACLs...)
	}
	v := slices.ContainsFunc(ids, func(id string) bool {
		a := z.acls[id]
		return a != nil && a.Action == nbdb.ACLActionAllowRelated
	})
	z.stateful[ls.Name] = v
	return v
}

// expr parses a match once per zone.
func (z *Zone) expr(s string) parsedMatch {
	z.mu.Lock()
	defer z.mu.Unlock()
	if m, ok := z.matches[s]; ok {
		return m
	}
	e, err := match.Parse(s)
	m := parsedMatch{expr: e, err: err}
	if err == nil {
		m.unmodelled = unmodelledField(e)
	}
	z.matches[s] = m
	return m
}

// AddressSet resolves $name for match expressions. Like northd, it also knows the
// address sets every port group implies: $<group>_ip4 and $<group>_ip6.
func (z *Zone) AddressSet(name string) ([]netip.Prefix, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if p, ok := z.sets[name]; ok {
		return p, true
	}
	var out []netip.Prefix
	if as := z.addrSets[name]; as != nil {
		out = parsePrefixes(as.Addresses)
	} else if group, v6, ok := portGroupSet(name); ok && z.portGroups[group] != nil {
		for _, id := range z.portGroups[group].Ports {
			if p := z.ix.SwitchPorts[id]; p != nil {
				for _, a := range portAddresses(p) {
					for _, ip := range a.ips {
						if ip.Addr().Is6() == v6 {
							out = append(out, netip.PrefixFrom(ip.Addr(), ip.Addr().BitLen()))
						}
					}
				}
			}
		}
	} else {
		return nil, false
	}
	z.sets[name] = out
	return out, true
}

func portGroupSet(name string) (group string, v6, ok bool) {
	if g, found := strings.CutSuffix(name, "_ip4"); found {
		return g, false, true
	}
	if g, found := strings.CutSuffix(name, "_ip6"); found {
		return g, true, true
	}
	return "", false, false
}

// PortGroup resolves @name for match expressions: the names of the group's ports.
func (z *Zone) PortGroup(name string) ([]string, bool) {
	pg := z.portGroups[name]
	if pg == nil {
		return nil, false
	}
	names := make([]string, 0, len(pg.Ports))
	for _, id := range pg.Ports {
		if p := z.ix.SwitchPorts[id]; p != nil {
			names = append(names, p.Name)
		}
	}
	return names, true
}

// parsePrefixes reads addresses and CIDRs, skipping what is neither.
func parsePrefixes(in []string) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(in))
	for _, s := range in {
		if p, ok := parsePrefixOrAddr(s); ok {
			out = append(out, p)
		}
	}
	return out
}

// parsePrefixOrAddr reads "10.0.0.0/8" or "10.0.0.1" (a host prefix).
func parsePrefixOrAddr(s string) (netip.Prefix, bool) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p, err == nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, a.BitLen()), true
}

// portAddress is one entry of a switch port's addresses column: a MAC and its IPs.
type portAddress struct {
	mac [6]byte
	ips []netip.Prefix
}

// portAddresses reads a switch port's "MAC IP…" entries; "router", "unknown" and
// "dynamic" carry no address of their own here.
func portAddresses(p *nbdb.LogicalSwitchPort) []portAddress {
	var out []portAddress
	entries := p.Addresses
	if p.DynamicAddresses != nil && slices.Contains(p.Addresses, "dynamic") {
		entries = append(slices.Clone(entries), *p.DynamicAddresses)
	}
	for _, entry := range entries {
		fields := strings.Fields(entry)
		if len(fields) == 0 {
			continue
		}
		mac, err := net.ParseMAC(fields[0])
		if err != nil || len(mac) != 6 {
			continue
		}
		a := portAddress{mac: [6]byte(mac)}
		for _, f := range fields[1:] {
			if p, ok := parsePrefixOrAddr(f); ok {
				a.ips = append(a.ips, p)
			}
		}
		out = append(out, a)
	}
	return out
}

// addressedPorts yields each port of lr that has a valid MAC, with its networks.
func (z *Zone) addressedPorts(lr *nbdb.LogicalRouter) iter.Seq2[*nbdb.LogicalRouterPort, []netip.Prefix] {
	return func(yield func(*nbdb.LogicalRouterPort, []netip.Prefix) bool) {
		for _, id := range lr.Ports {
			p := z.ix.RouterPorts[id]
			if p == nil {
				continue
			}
			if _, nets, ok := routerPortAddrs(p); ok && !yield(p, nets) {
				return
			}
		}
	}
}

// PortIPs are the IP addresses of a switch port, from its addresses column and, when
// that says "dynamic", its dynamic addresses.
func PortIPs(p *nbdb.LogicalSwitchPort) []netip.Addr {
	var out []netip.Addr
	for _, a := range portAddresses(p) {
		for _, ip := range a.ips {
			out = append(out, ip.Addr())
		}
	}
	return out
}

// routerPortAddrs are a router port's MAC and networks.
// Like northd, it counts the port's IPv6 link-local address (EUI-64 from its MAC) among
// its networks, as fe80::/64.
func routerPortAddrs(p *nbdb.LogicalRouterPort) (mac [6]byte, networks []netip.Prefix, ok bool) {
	m, err := net.ParseMAC(p.MAC)
	if err != nil || len(m) != 6 {
		return mac, nil, false
	}
	networks = parsePrefixes(p.Networks)
	if lla, err := alloc.LinkLocalFromMAC(m); err == nil {
		networks = append(networks, netip.PrefixFrom(lla, 64))
	}
	return [6]byte(m), networks, true
}
