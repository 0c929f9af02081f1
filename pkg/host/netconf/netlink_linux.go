package netconf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// socketTimeout bounds every netlink request, so a wedged kernel reply cannot hang
// the agent (netlink calls take no context).
const socketTimeout = 10 * time.Second

// dumpAttempts is how often a dump that the kernel marked interrupted (the table
// changed while it was read; netlink.ErrDumpInterrupted) is read again.
const dumpAttempts = 5

// Open returns the Host of a network namespace: ns is a name under /run/netns, a
// path to a namespace file (/proc/PID/ns/net), or "" for the namespace the process
// runs in. It opens one rtnetlink socket inside that namespace and never switches
// the calling thread's namespace afterwards; Close releases it.
func Open(ns string) (*Host, error) {
	var (
		h   *netlink.Handle
		err error
	)
	if ns == "" {
		h, err = netlink.NewHandle(syscall.NETLINK_ROUTE)
	} else {
		var nsh netns.NsHandle
		if strings.Contains(ns, "/") {
			nsh, err = netns.GetFromPath(ns)
		} else {
			nsh, err = netns.GetFromName(ns)
		}
		if err != nil {
			return nil, fmt.Errorf("open network namespace %s: %w", ns, err)
		}
		// The socket keeps the namespace alive; the file descriptor is not needed.
		defer nsh.Close()
		h, err = netlink.NewHandleAt(nsh, syscall.NETLINK_ROUTE)
	}
	if err != nil {
		return nil, fmt.Errorf("open netlink in network namespace %q: %w", ns, err)
	}
	if err := h.SetSocketTimeout(socketTimeout); err != nil {
		h.Close()
		return nil, fmt.Errorf("netlink socket timeout in network namespace %q: %w", ns, err)
	}
	return &Host{k: &netlinkKernel{h: h}, close: h.Close}, nil
}

// netlinkKernel is the kernel seam over a netlink handle.
type netlinkKernel struct {
	h *netlink.Handle
}

// retryDump reads a dump again while the kernel reports it interrupted; netlink
// v1.3.1 returns such dumps with ErrDumpInterrupted alongside possibly torn data.
func retryDump[T any](list func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for range dumpAttempts {
		if v, err = list(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			return v, err
		}
	}
	return v, err
}

// ref is the least a netlink call needs to find a link: its index.
func ref(l link) netlink.Link {
	return &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: l.Index, Name: l.Name}}
}

func toLink(nl netlink.Link) link {
	a := nl.Attrs()
	l := link{
		Index:       a.Index,
		Name:        a.Name,
		Kind:        nl.Type(),
		MAC:         a.HardwareAddr,
		MTU:         a.MTU,
		Up:          a.Flags&net.FlagUp != 0,
		Loopback:    a.Flags&net.FlagLoopback != 0,
		Alias:       a.Alias,
		MasterIndex: a.MasterIndex,
	}
	if v, ok := nl.(*netlink.Vrf); ok {
		l.VRFTable = int(v.Table)
	}
	return l
}

func (k *netlinkKernel) links() ([]link, error) {
	nls, err := retryDump(k.h.LinkList)
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	out := make([]link, 0, len(nls))
	for _, nl := range nls {
		out = append(out, toLink(nl))
	}
	return out, nil
}

func (k *netlinkKernel) linkByName(name string) (link, error) {
	nl, err := k.h.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) || errors.Is(err, syscall.ENODEV) {
		return link{}, fmt.Errorf("link %s: %w", name, ErrLinkNotFound)
	}
	if err != nil {
		return link{}, fmt.Errorf("link %s: %w", name, err)
	}
	return toLink(nl), nil
}

func (k *netlinkKernel) setMAC(l link, mac net.HardwareAddr) error {
	err := k.h.LinkSetHardwareAddr(ref(l), mac)
	if errors.Is(err, syscall.EBUSY) {
		// A device without live MAC changes takes a new MAC only while down.
		if err = k.h.LinkSetDown(ref(l)); err == nil {
			if err = k.h.LinkSetHardwareAddr(ref(l), mac); err == nil && l.Up {
				err = k.h.LinkSetUp(ref(l))
			}
		}
	}
	return err
}

func (k *netlinkKernel) setMTU(l link, mtu int) error { return k.h.LinkSetMTU(ref(l), mtu) }
func (k *netlinkKernel) setUp(l link) error           { return k.h.LinkSetUp(ref(l)) }

// setAlias sets IFLA_IFALIAS; an empty alias removes it.
func (k *netlinkKernel) setAlias(l link, alias string) error { return k.h.LinkSetAlias(ref(l), alias) }

func (k *netlinkKernel) setMaster(l link, masterIndex int) error {
	if masterIndex == 0 {
		return k.h.LinkSetNoMaster(ref(l))
	}
	return k.h.LinkSetMasterByIndex(ref(l), masterIndex)
}

func (k *netlinkKernel) addVRF(name string, table int) error {
	err := k.h.LinkAdd(&netlink.Vrf{LinkAttrs: netlink.LinkAttrs{Name: name}, Table: uint32(table)})
	if errors.Is(err, syscall.EOPNOTSUPP) {
		// rtnetlink's "Unknown device type": CONFIG_NET_VRF is off and no module loads.
		return fmt.Errorf("%w: %w", ErrVRFUnsupported, err)
	}
	return err
}

func (k *netlinkKernel) deleteLink(l link) error { return k.h.LinkDel(ref(l)) }

func toPrefix(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones), true
}

func toIPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func (k *netlinkKernel) addrs(linkIndex int) ([]netip.Prefix, error) {
	as, err := retryDump(func() ([]netlink.Addr, error) {
		return k.h.AddrList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: linkIndex}}, netlink.FAMILY_ALL)
	})
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	var out []netip.Prefix
	for _, a := range as {
		if p, ok := toPrefix(a.IPNet); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func (k *netlinkKernel) addAddr(l link, p netip.Prefix, noPrefixRoute bool) error {
	a := &netlink.Addr{IPNet: toIPNet(p)}
	if p.Addr().Is6() {
		// Uniqueness is the network's IPAM's business; duplicate address detection
		// would only keep the address (and routes through it) tentative for a while.
		a.Flags = syscall.IFA_F_NODAD
	}
	if noPrefixRoute {
		a.Flags |= ifaFNoPrefixRoute
	}
	return k.h.AddrAdd(ref(l), a)
}

// ifaFNoPrefixRoute is IFA_F_NOPREFIXROUTE (linux/if_addr.h), which package syscall
// lacks.
const ifaFNoPrefixRoute = 0x200

func (k *netlinkKernel) delAddr(l link, p netip.Prefix) error {
	err := k.h.AddrDel(ref(l), &netlink.Addr{IPNet: toIPNet(p)})
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return nil // already gone, e.g. with the primary address of its subnet
	}
	return err
}

// toRoutes turns a netlink route into one entry per next hop.
func toRoutes(r netlink.Route) []route {
	dst, ok := toPrefix(r.Dst)
	if !ok {
		// netlink leaves Dst nil for a default route.
		dst = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if r.Family == syscall.AF_INET6 {
			dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
	}
	base := route{Table: r.Table, Dst: dst, Protocol: int(r.Protocol), Metric: r.Priority}
	if len(r.MultiPath) == 0 {
		base.LinkIndex = r.LinkIndex
		base.Via, _ = netip.AddrFromSlice(r.Gw)
		base.Via = base.Via.Unmap()
		return []route{base}
	}
	var out []route
	for _, nh := range r.MultiPath {
		hop := base
		hop.LinkIndex = nh.LinkIndex
		hop.Via, _ = netip.AddrFromSlice(nh.Gw)
		hop.Via = hop.Via.Unmap()
		out = append(out, hop)
	}
	return out
}

func (k *netlinkKernel) ownRoutes(linkIndex int) ([]route, error) {
	// Without RT_FILTER_TABLE, netlink v1.3.1 drops every route outside main.
	filter := &netlink.Route{Table: syscall.RT_TABLE_UNSPEC, Protocol: RouteProtocol, LinkIndex: linkIndex}
	mask := netlink.RT_FILTER_TABLE | netlink.RT_FILTER_PROTOCOL
	if linkIndex != 0 {
		mask |= netlink.RT_FILTER_OIF
	}
	rs, err := retryDump(func() ([]netlink.Route, error) {
		return k.h.RouteListFiltered(netlink.FAMILY_ALL, filter, mask)
	})
	if err != nil {
		return nil, fmt.Errorf("list routes of protocol %d: %w", RouteProtocol, err)
	}
	var out []route
	for _, r := range rs {
		if r.Type == syscall.RTN_UNICAST && len(r.MultiPath) == 0 {
			out = append(out, toRoutes(r)...)
		}
	}
	return out, nil
}

func (k *netlinkKernel) defaultRoutes() ([]route, error) {
	filter := &netlink.Route{Table: syscall.RT_TABLE_MAIN}
	rs, err := retryDump(func() ([]netlink.Route, error) {
		return k.h.RouteListFiltered(netlink.FAMILY_ALL, filter, netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return nil, fmt.Errorf("list main table: %w", err)
	}
	var out []route
	for _, r := range rs {
		if r.Type != syscall.RTN_UNICAST {
			continue
		}
		for _, hop := range toRoutes(r) {
			if hop.Dst.Bits() == 0 {
				out = append(out, hop)
			}
		}
	}
	return out, nil
}

func toNetlinkRoute(r route) *netlink.Route {
	nr := &netlink.Route{
		LinkIndex: r.LinkIndex,
		Dst:       toIPNet(r.Dst),
		Table:     r.Table,
		Protocol:  netlink.RouteProtocol(r.Protocol),
		Priority:  r.Metric,
		Family:    syscall.AF_INET,
	}
	if r.Dst.Addr().Is6() {
		nr.Family = syscall.AF_INET6
	}
	if r.Via.IsValid() {
		nr.Gw = r.Via.AsSlice()
	} else if r.Dst.Addr().Is4() {
		nr.Scope = netlink.SCOPE_LINK // what ip-route(8) gives a route without gateway
	}
	return nr
}

// gatewayError marks the kernel's refusals of a gateway: IPv4 says EINVAL
// ("Nexthop has invalid gateway"), IPv6 EHOSTUNREACH; validation has already
// excluded the other causes of EINVAL.
func gatewayError(r route, err error) error {
	if err != nil && r.Via.IsValid() &&
		(errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)) {
		return fmt.Errorf("%w: %w", ErrGatewayUnreachable, err)
	}
	return err
}

func (k *netlinkKernel) addRoute(r route) error {
	return gatewayError(r, k.h.RouteAdd(toNetlinkRoute(r)))
}

func (k *netlinkKernel) replaceRoute(r route) error {
	return gatewayError(r, k.h.RouteReplace(toNetlinkRoute(r)))
}

func (k *netlinkKernel) delRoute(r route) error {
	nr := toNetlinkRoute(r)
	// netlink copies Scope into the request, and the kernel matches it exactly
	// unless it is RT_SCOPE_NOWHERE.
	nr.Scope = netlink.SCOPE_NOWHERE
	err := k.h.RouteDel(nr)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}

// ownRules lists rules of protocol RouteProtocol shaped like ours: a destination or
// an outgoing interface, and a table, no other selector. Rules of that protocol with a
// source, mark or incoming interface are someone else's (OVN-Kubernetes tags its
// fwmark rules 85 too).
func (k *netlinkKernel) ownRules() ([]rule, error) {
	rs, err := retryDump(func() ([]netlink.Rule, error) { return k.h.RuleList(netlink.FAMILY_ALL) })
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	var out []rule
	for _, r := range rs {
		if int(r.Protocol) != RouteProtocol || r.Table == 0 || r.Src != nil || r.Mark != 0 || r.IifName != "" ||
			r.Invert || r.Goto != -1 || r.Dport != nil || r.Sport != nil || r.IPProto != 0 || r.UIDRange != nil {
			continue
		}
		dst, ok := toPrefix(r.Dst)
		switch {
		case r.OifName != "" && r.Dst == nil:
			dst = netip.PrefixFrom(netip.IPv4Unspecified(), 0)
			if r.Family == syscall.AF_INET6 {
				dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
			}
		case r.OifName != "" || !ok:
			continue // an oif rule with a destination is not one of ours
		}
		out = append(out, rule{Priority: r.Priority, Dst: dst, Table: r.Table, Protocol: int(r.Protocol), Oif: r.OifName})
	}
	return out, nil
}

func toNetlinkRule(r rule) *netlink.Rule {
	nr := netlink.NewRule()
	nr.Priority = r.Priority
	nr.Family = syscall.AF_INET
	if r.Dst.Addr().Is6() {
		nr.Family = syscall.AF_INET6
	}
	if r.Oif == "" {
		nr.Dst = toIPNet(r.Dst)
	}
	nr.OifName = r.Oif
	nr.Table = r.Table
	nr.Protocol = uint8(r.Protocol)
	return nr
}

func (k *netlinkKernel) addRule(r rule) error { return k.h.RuleAdd(toNetlinkRule(r)) }

func (k *netlinkKernel) delRule(r rule) error {
	err := k.h.RuleDel(toNetlinkRule(r))
	if errors.Is(err, syscall.ENOENT) {
		return nil // already gone
	}
	return err
}
