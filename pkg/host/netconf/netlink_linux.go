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
	n, err := OpenNamespace(ns)
	if err != nil {
		return nil, err
	}
	// The socket keeps the namespace alive; the file descriptor is not needed.
	n.FD.Close()
	return &Host{k: &netlinkKernel{h: n.Handle}, close: n.Handle.Close}, nil
}

// ErrNoNamespace is the error of OpenNamespace for a namespace that does not exist
// (a pod sandbox's, deleted already).
var ErrNoNamespace = errors.New("network namespace does not exist")

// Namespace is an rtnetlink handle inside one network namespace, with every request
// bounded in time, and the namespace's file descriptor (to move or create a link
// there). It is for callers that need netlink calls Host does not make, such as the
// CNI plugin's veths; Close releases both.
type Namespace struct {
	// Name is the namespace as it was given to OpenNamespace, "" for the process's own.
	Name   string
	Handle *netlink.Handle
	FD     netns.NsHandle
}

// OpenNamespace opens a namespace as Open does (a name under /run/netns, a path, or ""
// for the process's own) without switching the calling thread into it. A namespace
// that does not exist is an error wrapping ErrNoNamespace.
func OpenNamespace(ns string) (*Namespace, error) {
	var (
		fd  netns.NsHandle
		err error
	)
	switch {
	case ns == "":
		fd, err = netns.Get()
	case strings.Contains(ns, "/"):
		fd, err = netns.GetFromPath(ns)
	default:
		fd, err = netns.GetFromName(ns)
	}
	if errors.Is(err, syscall.ENOENT) {
		return nil, fmt.Errorf("open network namespace %s: %w", ns, ErrNoNamespace)
	}
	if err != nil {
		return nil, fmt.Errorf("open network namespace %q: %w", ns, err)
	}
	h, err := netlink.NewHandleAt(fd, syscall.NETLINK_ROUTE)
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("open netlink in network namespace %q: %w", ns, err)
	}
	if err := h.SetSocketTimeout(socketTimeout); err != nil {
		h.Close()
		fd.Close()
		return nil, fmt.Errorf("netlink socket timeout in network namespace %q: %w", ns, err)
	}
	return &Namespace{Name: ns, Handle: h, FD: fd}, nil
}

// Close releases the handle and the namespace's file descriptor.
func (n *Namespace) Close() {
	n.Handle.Close()
	n.FD.Close()
}

// String names the namespace for messages.
func (n *Namespace) String() string {
	if n.Name == "" {
		return "the host's network namespace"
	}
	return "network namespace " + n.Name
}

// netlinkKernel is the kernel seam over a netlink handle.
type netlinkKernel struct {
	h *netlink.Handle
}

// RetryDump reads a dump again while the kernel reports it interrupted; netlink
// v1.3.1 returns such dumps with ErrDumpInterrupted alongside possibly torn data.
func RetryDump[T any](list func() (T, error)) (T, error) {
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
	nls, err := RetryDump(k.h.LinkList)
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

// PrefixOf is n as a netip.Prefix, an IPv4 address unmapped; false for nil or a
// malformed address.
func PrefixOf(n *net.IPNet) (netip.Prefix, bool) {
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

// IPNetOf is p as the *net.IPNet netlink takes (the address, not the masked subnet).
func IPNetOf(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func (k *netlinkKernel) addrs(linkIndex int) ([]netip.Prefix, error) {
	as, err := RetryDump(func() ([]netlink.Addr, error) {
		return k.h.AddrList(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: linkIndex}}, netlink.FAMILY_ALL)
	})
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	var out []netip.Prefix
	for _, a := range as {
		if p, ok := PrefixOf(a.IPNet); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func (k *netlinkKernel) addAddr(l link, p netip.Prefix, noPrefixRoute bool) error {
	a := &netlink.Addr{IPNet: IPNetOf(p)}
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
	err := k.h.AddrDel(ref(l), &netlink.Addr{IPNet: IPNetOf(p)})
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return nil // already gone, e.g. with the primary address of its subnet
	}
	return err
}

// toRoutes turns a netlink route into one entry per next hop.
func toRoutes(r netlink.Route) []route {
	dst, ok := PrefixOf(r.Dst)
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
	rs, err := RetryDump(func() ([]netlink.Route, error) {
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
	rs, err := RetryDump(func() ([]netlink.Route, error) {
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
		Dst:       IPNetOf(r.Dst),
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
	rs, err := RetryDump(func() ([]netlink.Rule, error) { return k.h.RuleList(netlink.FAMILY_ALL) })
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	var out []rule
	for _, r := range rs {
		if int(r.Protocol) != RouteProtocol || r.Table == 0 || r.Src != nil || r.Mark != 0 || r.IifName != "" ||
			r.Invert || r.Goto != -1 || r.Dport != nil || r.Sport != nil || r.IPProto != 0 || r.UIDRange != nil {
			continue
		}
		dst, ok := PrefixOf(r.Dst)
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
		nr.Dst = IPNetOf(r.Dst)
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
