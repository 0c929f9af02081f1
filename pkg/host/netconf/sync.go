package netconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
)

// SyncManagementPort makes the named link match port and reports whether it
// changed anything. It is safe to repeat and writes nothing when the link already
// matches.
//
// In order: it refuses invalid state (ErrInvalid), a missing link
// (ErrLinkNotFound), a table another port records (ErrTableInUse) and a VRF the
// kernel cannot make (ErrVRFUnsupported), all before writing anything. Then it
// writes the ownership record, MAC, MTU, VRF membership and up state; removes
// addresses not wanted (never link-local ones) and adds the missing ones; adds or
// replaces routes in the port's table — on-link routes before gateway routes, as a
// gateway may be reachable only through one — and deletes our other routes through
// the port; adds the wanted rules and deletes our other rules of the port's table
// (and of its previous table, when the table changed).
//
// A route or address the kernel refuses does not stop the others: the error (for
// a route a *RouteError) is returned joined with any others after everything else
// is applied, and a route that cannot be applied is absent rather than left at an
// older gateway, so the result is the same whatever the port had before.
func (h *Host) SyncManagementPort(ctx context.Context, port ManagementPort) (bool, error) {
	if err := port.validate(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("sync management port %s: %w", port.Name, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	fail := func(err error) (bool, error) {
		return false, fmt.Errorf("management port %s: %w", port.Name, err)
	}
	l, err := h.k.linkByName(port.Name)
	if err != nil {
		return fail(err)
	}
	links, err := h.k.links()
	if err != nil {
		return fail(err)
	}
	table := port.table()
	for _, o := range links {
		if rec, ours := parseRecord(o.Alias); ours && o.Index != l.Index && table != MainTable && rec.table == table {
			return fail(fmt.Errorf("table %d: %w %s", table, ErrTableInUse, o.Name))
		}
	}
	prev, hadPrev := parseRecord(l.Alias)
	s := &syncer{k: h.k, port: port.Name}
	vrfIndex := 0
	if port.VRF != "" {
		if vrfIndex, err = s.ensureVRF(links, port.VRF, table); err != nil {
			return s.changed, fmt.Errorf("management port %s: %w", port.Name, err)
		}
	}
	if want := (record{table: table, vrf: port.VRF}).String(); l.Alias != want {
		s.do("set ownership record", func() error { return h.k.setAlias(l, want) })
	}
	if port.MAC != nil && !bytes.Equal(l.MAC, port.MAC) {
		s.do("set MAC "+port.MAC.String(), func() error { return h.k.setMAC(l, port.MAC) })
	}
	if port.MTU != 0 && l.MTU != port.MTU {
		s.do(fmt.Sprintf("set MTU %d", port.MTU), func() error { return h.k.setMTU(l, port.MTU) })
	}
	s.master(l, links, vrfIndex, prev.vrf)
	if hadPrev && prev.vrf != "" && prev.vrf != port.VRF {
		s.deleteVRF(links, prev.vrf)
	}
	if len(s.errs) > 0 {
		// The link itself is not as wanted; addresses and routes would only add noise.
		return s.result()
	}
	if !l.Up {
		s.do("set up", func() error { return h.k.setUp(l) })
	}
	// A port with a table of its own keeps its subnets out of the main table and in
	// its own, as a VRF's kernel does: its addresses carry noprefixroute, and their
	// subnets are on-link routes of its table.
	ownTable := table != MainTable
	s.addresses(l, port.Addresses, ownTable)
	routes := port.Routes
	if ownTable {
		routes = withOnLink(routes, port.Addresses)
	}
	s.routes(l, table, routes)
	tables := []int{table}
	if hadPrev && prev.table != table {
		tables = append(tables, prev.table)
	}
	s.rules(tables, table, port.Rules)
	return s.result()
}

// syncer applies one port's changes, remembering whether it wrote anything and
// the errors that did not stop it.
type syncer struct {
	k       kernel
	port    string
	changed bool
	errs    []error
}

// do runs one write; what names it in the error.
func (s *syncer) do(what string, write func() error) bool {
	if err := write(); err != nil {
		s.errs = append(s.errs, fmt.Errorf("management port %s: %s: %w", s.port, what, err))
		return false
	}
	s.changed = true
	return true
}

func (s *syncer) result() (bool, error) {
	return s.changed, errors.Join(s.errs...)
}

// ensureVRF returns the index of the VRF device name bound to table, creating it
// when missing. A link of that name that is not such a VRF is refused.
func (s *syncer) ensureVRF(links []link, name string, table int) (int, error) {
	for _, o := range links {
		if o.Name != name {
			continue
		}
		if o.Kind != "vrf" || o.VRFTable != table {
			return 0, fmt.Errorf("%w: link %s exists but is not a VRF on table %d", ErrInvalid, name, table)
		}
		if !o.Up && !s.do("set VRF "+name+" up", func() error { return s.k.setUp(o) }) {
			return 0, s.errs[len(s.errs)-1]
		}
		return o.Index, nil
	}
	if err := s.k.addVRF(name, table); err != nil {
		return 0, fmt.Errorf("create VRF %s on table %d: %w", name, table, err)
	}
	s.changed = true
	v, err := s.k.linkByName(name)
	if err != nil {
		return 0, fmt.Errorf("VRF %s just created: %w", name, err)
	}
	if !s.do("set VRF "+name+" up", func() error { return s.k.setUp(v) }) {
		return 0, s.errs[len(s.errs)-1]
	}
	return v.Index, nil
}

// master enslaves l to the VRF at vrfIndex, or releases it from the VRF we made
// before (prevVRF); a master someone else set is left alone when no VRF is wanted.
func (s *syncer) master(l link, links []link, vrfIndex int, prevVRF string) {
	if l.MasterIndex == vrfIndex {
		return
	}
	if vrfIndex == 0 {
		if prevVRF == "" || linkName(links, l.MasterIndex) != prevVRF {
			return
		}
		s.do("leave VRF "+prevVRF, func() error { return s.k.setMaster(l, 0) })
		return
	}
	s.do("join VRF "+linkName(links, vrfIndex), func() error { return s.k.setMaster(l, vrfIndex) })
}

// deleteVRF deletes the VRF device we made, if it is still there and still a VRF.
func (s *syncer) deleteVRF(links []link, name string) {
	for _, o := range links {
		if o.Name == name && o.Kind == "vrf" {
			s.do("delete VRF "+name, func() error { return s.k.deleteLink(o) })
		}
	}
}

func linkName(links []link, index int) string {
	for _, o := range links {
		if o.Index == index {
			return o.Name
		}
	}
	return ""
}

// addresses deletes what is not wanted first and adds what is missing after a
// fresh look: deleting a primary IPv4 address also deletes the secondaries of its
// subnet (net.ipv4.conf.*.promote_secondaries is 0 by default), and an IPv6
// address cannot be added again with another prefix length until the old is gone.
// withOnLink adds to routes an on-link route for each address's subnet that routes
// lack.
func withOnLink(routes []Route, addrs []netip.Prefix) []Route {
	out := slices.Clone(routes)
	for _, a := range addrs {
		dst := a.Masked()
		if !slices.ContainsFunc(out, func(r Route) bool { return r.Dst == dst }) {
			out = append(out, Route{Dst: dst})
		}
	}
	return out
}

func (s *syncer) addresses(l link, want []netip.Prefix, noPrefixRoute bool) {
	cur, err := s.k.addrs(l.Index)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("management port %s: list addresses: %w", s.port, err))
		return
	}
	deleted := false
	for _, a := range cur {
		if !a.Addr().IsLinkLocalUnicast() && !containsPrefix(want, a) {
			deleted = s.do("delete address "+a.String(), func() error { return s.k.delAddr(l, a) }) || deleted
		}
	}
	if deleted {
		if cur, err = s.k.addrs(l.Index); err != nil {
			s.errs = append(s.errs, fmt.Errorf("management port %s: list addresses: %w", s.port, err))
			return
		}
	}
	for _, a := range want {
		if !containsPrefix(cur, a) {
			s.do("add address "+a.String(), func() error { return s.k.addAddr(l, a, noPrefixRoute) })
		}
	}
}

func containsPrefix(list []netip.Prefix, p netip.Prefix) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

// routes makes our routes through l exactly want in table.
func (s *syncer) routes(l link, table int, want []Route) {
	cur, err := s.k.ownRoutes(l.Index)
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("management port %s: list routes: %w", s.port, err))
		return
	}
	used := make([]bool, len(cur))
	var missing []Route
	for _, w := range want {
		found := false
		for i, c := range cur {
			if !used[i] && c.Table == table && c.Dst == w.Dst && c.Via == w.Via {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	// On-link routes first: a gateway may be reachable only through one of them.
	for pass := 0; pass < 2; pass++ {
		for _, w := range missing {
			if w.Via.IsValid() != (pass == 1) {
				continue
			}
			r := route{Table: table, Dst: w.Dst, Via: w.Via, LinkIndex: l.Index, Protocol: RouteProtocol}
			// A route of ours to the same destination is replaced in place, so the
			// destination is never without a route during the change.
			old := -1
			for i, c := range cur {
				if !used[i] && c.Table == table && c.Dst == w.Dst {
					old = i
					break
				}
			}
			var err error
			if old >= 0 {
				r.Metric = cur[old].Metric
				if err = s.k.replaceRoute(r); err == nil {
					used[old] = true
				}
			} else {
				err = s.k.addRoute(r)
			}
			if err != nil {
				s.errs = append(s.errs, &RouteError{Port: s.port, Table: table, Route: w, Err: err})
				continue
			}
			s.changed = true
		}
	}
	for i, c := range cur {
		if !used[i] {
			s.do(fmt.Sprintf("delete route %s table %d", Route{Dst: c.Dst, Via: c.Via}, c.Table),
				func() error { return s.k.delRoute(c) })
		}
	}
}

// rules makes our rules selecting any of tables exactly want (which select table).
// Wanted rules are added before stale ones go, so traffic keeps a rule throughout.
func (s *syncer) rules(tables []int, table int, want []Rule) {
	cur, err := s.k.ownRules()
	if err != nil {
		s.errs = append(s.errs, fmt.Errorf("management port %s: list rules: %w", s.port, err))
		return
	}
	wanted := map[rule]bool{}
	for _, w := range want {
		r := rule{Priority: w.Priority, Dst: w.Dst, Table: table, Protocol: RouteProtocol, Oif: w.Oif}
		wanted[r] = true
		if !containsRule(cur, r) {
			s.do("add rule "+w.String(), func() error { return s.k.addRule(r) })
		}
	}
	for _, c := range cur {
		if !wanted[c] && containsInt(tables, c.Table) {
			s.do("delete rule "+ruleString(c), func() error { return s.k.delRule(c) })
		}
	}
}

func containsRule(list []rule, r rule) bool {
	for _, c := range list {
		if c == r {
			return true
		}
	}
	return false
}

func containsInt(list []int, n int) bool {
	for _, c := range list {
		if c == n {
			return true
		}
	}
	return false
}

// remove undoes a port: routes, rules of its recorded table, addresses, VRF,
// record. Routes of ours through the link go even when the record is missing.
func (s *syncer) remove(l link) {
	rec, ours := parseRecord(l.Alias)
	if routes, err := s.k.ownRoutes(l.Index); err != nil {
		s.errs = append(s.errs, fmt.Errorf("management port %s: list routes: %w", s.port, err))
	} else {
		for _, c := range routes {
			s.do(fmt.Sprintf("delete route %s table %d", Route{Dst: c.Dst, Via: c.Via}, c.Table),
				func() error { return s.k.delRoute(c) })
		}
	}
	if !ours {
		return
	}
	if rec.table != MainTable {
		s.rules([]int{rec.table}, rec.table, nil)
	}
	s.addresses(l, nil, false)
	if rec.vrf != "" {
		if links, err := s.k.links(); err != nil {
			s.errs = append(s.errs, fmt.Errorf("management port %s: list links: %w", s.port, err))
		} else {
			s.master(l, links, 0, rec.vrf)
			s.deleteVRF(links, rec.vrf)
		}
	}
	s.do("clear ownership record", func() error { return s.k.setAlias(l, "") })
}
