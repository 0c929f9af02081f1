package cni

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/ovnk/ovnk/pkg/podnet"
)

// netlinkTimeout bounds every netlink request: the calls take no context.
const netlinkTimeout = 10 * time.Second

// namespace is a netlink handle inside one network namespace, and the namespace's
// file descriptor (to move a veth end there). Every call goes through the handle's
// socket: the thread's own namespace is never switched.
type namespace struct {
	path string
	h    *netlink.Handle
	ns   netns.NsHandle
}

// errNoNetns is the error of openNamespace for a namespace that does not exist.
var errNoNetns = errors.New("network namespace does not exist")

// openNamespace opens a namespace by path (/var/run/netns/cni-…), by name (under
// /run/netns), or "" for the one the process runs in.
func openNamespace(path string) (*namespace, error) {
	var (
		nsh netns.NsHandle
		err error
	)
	switch {
	case path == "":
		nsh, err = netns.Get()
	case strings.Contains(path, "/"):
		nsh, err = netns.GetFromPath(path)
	default:
		nsh, err = netns.GetFromName(path)
	}
	if errors.Is(err, syscall.ENOENT) {
		return nil, fmt.Errorf("open network namespace %s: %w", path, errNoNetns)
	}
	if err != nil {
		return nil, fmt.Errorf("open network namespace %q: %w", path, err)
	}
	h, err := netlink.NewHandleAt(nsh, syscall.NETLINK_ROUTE)
	if err != nil {
		nsh.Close()
		return nil, fmt.Errorf("open netlink in network namespace %q: %w", path, err)
	}
	if err := h.SetSocketTimeout(netlinkTimeout); err != nil {
		h.Close()
		nsh.Close()
		return nil, fmt.Errorf("netlink socket timeout in network namespace %q: %w", path, err)
	}
	return &namespace{path: path, h: h, ns: nsh}, nil
}

func (n *namespace) Close() {
	n.h.Close()
	n.ns.Close()
}

// name is the namespace for messages.
func (n *namespace) name() string {
	if n.path == "" {
		return "the host's network namespace"
	}
	return "network namespace " + n.path
}

// createInterface makes one pod interface: a veth whose end host stays in the host
// namespace and whose other end is created right in the pod's namespace with the
// plan's name, MAC and MTU (so it never shows up, not even briefly, among the host's
// interfaces), gets its addresses without duplicate address detection (nothing in
// the pod's namespace can hold them already, and an IPv6 address would otherwise be
// unusable for a second), and goes up. The host end is a br-int port and nothing
// else: no ARP, so the host's kernel never answers a pod's ARP on it. It returns the
// host end's MAC.
func createInterface(host, pod *namespace, hostName, podName string, ifc podnet.Interface) (string, error) {
	mac, err := net.ParseMAC(ifc.MAC)
	if err != nil {
		return "", fmt.Errorf("interface %s: MAC %q: %w", podName, ifc.MAC, err)
	}
	veth := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: hostName, MTU: ifc.MTU},
		PeerName:         podName,
		PeerHardwareAddr: mac,
		PeerNamespace:    netlink.NsFd(int(pod.ns)),
		PeerMTU:          uint32(ifc.MTU),
	}
	if err := host.h.LinkAdd(veth); err != nil {
		return "", fmt.Errorf("create veth %s (in %s) - %s (in %s): %w", hostName, host.name(), podName, pod.name(), err)
	}
	l, err := pod.h.LinkByName(podName)
	if err != nil {
		return "", fmt.Errorf("find %s in %s: %w", podName, pod.name(), err)
	}
	for _, a := range ifc.IPs {
		addr := &netlink.Addr{IPNet: ipNet(a)}
		if a.Addr().Is6() {
			addr.Flags = syscall.IFA_F_NODAD
		}
		if err := pod.h.AddrAdd(l, addr); err != nil {
			return "", fmt.Errorf("add address %s to %s in %s: %w", a, podName, pod.name(), err)
		}
	}
	if err := pod.h.LinkSetUp(l); err != nil {
		return "", fmt.Errorf("set %s up in %s: %w", podName, pod.name(), err)
	}
	hl, err := host.h.LinkByName(hostName)
	if err != nil {
		return "", fmt.Errorf("find %s in %s: %w", hostName, host.name(), err)
	}
	if err := host.h.LinkSetARPOff(hl); err != nil {
		return "", fmt.Errorf("turn ARP off on %s in %s: %w", hostName, host.name(), err)
	}
	if err := host.h.LinkSetUp(hl); err != nil {
		return "", fmt.Errorf("set %s up in %s: %w", hostName, host.name(), err)
	}
	return hl.Attrs().HardwareAddr.String(), nil
}

// addRoutes adds the routes of a pod interface, those without a next hop first (a
// next hop may need one of them to be reachable).
func addRoutes(pod *namespace, podName string, routes []podnet.Route) error {
	if len(routes) == 0 {
		return nil
	}
	l, err := pod.h.LinkByName(podName)
	if err != nil {
		return fmt.Errorf("find %s in %s: %w", podName, pod.name(), err)
	}
	ordered := slices.Clone(routes)
	slices.SortStableFunc(ordered, func(a, b podnet.Route) int {
		switch {
		case a.Via.IsValid() == b.Via.IsValid():
			return 0
		case a.Via.IsValid():
			return 1
		default:
			return -1
		}
	})
	for _, r := range ordered {
		route := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: ipNet(r.Dst.Masked())}
		if r.Via.IsValid() {
			route.Gw = net.IP(r.Via.AsSlice())
		} else {
			route.Scope = netlink.SCOPE_LINK
		}
		// Replace, not add: a plan may hold the same destination twice (two
		// gateways of one family), and the last one wins rather than failing.
		if err := pod.h.RouteReplace(route); err != nil {
			return fmt.Errorf("add route to %s via %s dev %s in %s: %w", r.Dst, viaText(r.Via), podName, pod.name(), err)
		}
	}
	return nil
}

func viaText(a netip.Addr) string {
	if !a.IsValid() {
		return "(on link)"
	}
	return a.String()
}

// removeHostEnds deletes the veths of the host namespace that are the host ends of
// the sandbox's interfaces (podnet.IsHostInterfaceOf); their pod ends go with them.
// It returns the names it deleted; a link that went away meanwhile is no error.
func removeHostEnds(host *namespace, containerID string) ([]string, error) {
	links, err := host.h.LinkList()
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, fmt.Errorf("list the links of %s: %w", host.name(), err)
	}
	var removed []string
	var errs []error
	for _, l := range links {
		name := l.Attrs().Name
		if l.Type() != "veth" || !podnet.IsHostInterfaceOf(containerID, name) {
			continue
		}
		if err := host.h.LinkDel(l); err != nil && !errors.Is(err, syscall.ENODEV) {
			errs = append(errs, fmt.Errorf("delete veth %s of container %s in %s: %w", name, containerID, host.name(), err))
			continue
		}
		removed = append(removed, name)
	}
	if errors.Is(err, netlink.ErrDumpInterrupted) && len(errs) == 0 {
		// The list changed while it was read: read it again for what it may have missed.
		more, err := removeHostEnds(host, containerID)
		return append(removed, more...), err
	}
	return removed, errors.Join(errs...)
}

// checkInterface checks that the pod's namespace holds the interface with the MAC and
// the addresses.
func checkInterface(pod *namespace, name, mac string, addrs []netip.Prefix) error {
	l, err := pod.h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("interface %s in %s: %w", name, pod.name(), err)
	}
	if mac != "" && !strings.EqualFold(l.Attrs().HardwareAddr.String(), mac) {
		return fmt.Errorf("interface %s in %s has MAC %s, not %s", name, pod.name(), l.Attrs().HardwareAddr, mac)
	}
	have, err := pod.h.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return fmt.Errorf("addresses of %s in %s: %w", name, pod.name(), err)
	}
	for _, want := range addrs {
		if !slices.ContainsFunc(have, func(a netlink.Addr) bool { return prefixOf(a.IPNet) == want }) {
			return fmt.Errorf("interface %s in %s lacks address %s", name, pod.name(), want)
		}
	}
	return nil
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func prefixOf(n *net.IPNet) netip.Prefix {
	if n == nil {
		return netip.Prefix{}
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones)
}
