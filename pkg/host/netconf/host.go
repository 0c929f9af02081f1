package netconf

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
)

// Host is the node's network configuration in one network namespace: the real
// kernel through netlink when made by Open, a simulated one inside a Fake.
type Host struct {
	mu    sync.Mutex // serialises every call: a Sync reads, compares, then writes
	k     kernel
	close func()
}

var (
	_ Interface = (*Host)(nil)
	_ Interface = (*Fake)(nil)
)

// Close releases the netlink handle. The Host must not be used afterwards.
func (h *Host) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.close != nil {
		h.close()
		h.close = nil
	}
	return nil
}

// Gateway describes iface: its MAC, its global unicast addresses (ErrNoAddress
// when it has none) and, per family, the next hops of the lowest-metric default
// route of the main table that leaves through iface. A default route without a
// gateway, or through another interface, gives no next hop.
func (h *Host) Gateway(ctx context.Context, iface string) (GatewayInfo, error) {
	if err := ctx.Err(); err != nil {
		return GatewayInfo{}, fmt.Errorf("gateway interface %s: %w", iface, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	l, err := h.k.linkByName(iface)
	if err != nil {
		return GatewayInfo{}, fmt.Errorf("gateway interface: %w", err)
	}
	addrs, err := h.k.addrs(l.Index)
	if err != nil {
		return GatewayInfo{}, fmt.Errorf("gateway interface %s: %w", iface, err)
	}
	info := GatewayInfo{MAC: l.MAC, Addresses: globalUnicast(addrs)}
	if len(info.Addresses) == 0 {
		return GatewayInfo{}, fmt.Errorf("gateway interface %s: %w", iface, ErrNoAddress)
	}
	defaults, err := h.k.defaultRoutes()
	if err != nil {
		return GatewayInfo{}, fmt.Errorf("gateway interface %s: default routes: %w", iface, err)
	}
	for _, is4 := range []bool{true, false} {
		best := -1
		var hops []netip.Addr
		for _, r := range defaults {
			if r.LinkIndex != l.Index || r.Dst.Addr().Is4() != is4 {
				continue
			}
			if best == -1 || r.Metric < best {
				best, hops = r.Metric, nil
			}
			if r.Metric == best && r.Via.IsValid() && !slices.Contains(hops, r.Via) {
				hops = append(hops, r.Via)
			}
		}
		slices.SortFunc(hops, netip.Addr.Compare)
		info.NextHops = append(info.NextHops, hops...)
	}
	return info, nil
}

// HostCIDRs returns every global unicast address of the node with its prefix
// length — IPv4 before IPv6, sorted, without duplicates — except addresses on
// loopback and on management ports (links named ovn-k8s-mp*), as upstream's
// k8s.ovn.org/host-cidrs annotation has them.
func (h *Host) HostCIDRs(ctx context.Context) ([]netip.Prefix, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("host addresses: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	links, err := h.k.links()
	if err != nil {
		return nil, fmt.Errorf("host addresses: %w", err)
	}
	var all []netip.Prefix
	for _, l := range links {
		if l.Loopback || strings.HasPrefix(l.Name, ManagementPortPrefix) {
			continue
		}
		addrs, err := h.k.addrs(l.Index)
		if err != nil {
			return nil, fmt.Errorf("host addresses of %s: %w", l.Name, err)
		}
		all = append(all, globalUnicast(addrs)...)
	}
	slices.SortFunc(all, comparePrefix)
	return slices.Compact(all), nil
}

// ManagementPorts lists, sorted, the links that carry our ownership record:
// those SyncManagementPort configured and RemoveManagementPort has not undone.
func (h *Host) ManagementPorts(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list management ports: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	links, err := h.k.links()
	if err != nil {
		return nil, fmt.Errorf("list management ports: %w", err)
	}
	var names []string
	for _, l := range links {
		if _, ok := parseRecord(l.Alias); ok {
			names = append(names, l.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// RemoveManagementPort undoes what SyncManagementPort configured on the named
// port: its routes (protocol 85, through the port), the rules of its recorded
// table, its addresses except link-local ones, the VRF made for it, and the
// ownership record. The link itself, its MAC, MTU and up state stay. A missing
// link is nothing to do (false, nil): its routes and addresses went with it, and
// its rules, which no longer name it, are for PruneManagementPorts.
func (h *Host) RemoveManagementPort(ctx context.Context, name string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("remove management port %s: %w", name, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	l, err := h.k.linkByName(name)
	if errors.Is(err, ErrLinkNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove management port %s: %w", name, err)
	}
	s := &syncer{k: h.k, port: name}
	s.remove(l)
	return s.result()
}

// PruneManagementPorts removes what a resync no longer wants: every port of ours
// (see ManagementPorts) not named in keep, as RemoveManagementPort does, and every
// rule of ours selecting a table that no port in keep uses — such as the rules of a
// port whose link vanished before it was removed. Only the names and tables of keep
// matter here; SyncManagementPort configures the kept ports.
func (h *Host) PruneManagementPorts(ctx context.Context, keep []ManagementPort) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("prune management ports: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	names := map[string]bool{}
	tables := map[int]bool{}
	for _, p := range keep {
		names[p.Name] = true
		tables[p.table()] = true
	}
	links, err := h.k.links()
	if err != nil {
		return false, fmt.Errorf("prune management ports: %w", err)
	}
	s := &syncer{k: h.k}
	for _, l := range links {
		if _, ours := parseRecord(l.Alias); ours && !names[l.Name] {
			s.port = l.Name
			s.remove(l)
		}
	}
	rules, err := h.k.ownRules()
	if err != nil {
		return s.changed, errors.Join(append(s.errs, fmt.Errorf("prune management ports: %w", err))...)
	}
	for _, r := range rules {
		// Ours never select the kernel's own tables, whoever else tags rules 85.
		if !tables[r.Table] && r.Table != MainTable && r.Table != defaultTable && r.Table != localTable {
			s.do(fmt.Sprintf("delete orphaned rule %s", ruleString(r)), func() error { return h.k.delRule(r) })
		}
	}
	return s.result()
}

// globalUnicast keeps the global unicast addresses, sorted.
func globalUnicast(addrs []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range addrs {
		if a.Addr().IsGlobalUnicast() {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, comparePrefix)
	return out
}

// ruleString formats a kernel-side rule for errors.
func ruleString(r rule) string {
	return Rule{Priority: r.Priority, Dst: r.Dst, Table: r.Table, Oif: r.Oif}.String()
}
