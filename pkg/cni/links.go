package cni

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/podnet"
)

// Every netlink call goes through a netconf.Namespace: a handle opened inside the
// namespace, with a bounded socket timeout, so the thread's own namespace is never
// switched and no call hangs; every dump is read again a bounded number of times while
// the kernel reports it interrupted (netconf.RetryDump).

// createInterface makes one pod interface: a veth whose end host stays in the host
// namespace and whose other end is created right in the pod's namespace with the
// plan's name, MAC and MTU (so it never shows up, not even briefly, among the host's
// interfaces), gets its addresses without duplicate address detection (nothing in
// the pod's namespace can hold them already, and an IPv6 address would otherwise be
// unusable for a second), and goes up. The host end is a br-int port and nothing
// else: no ARP, so the host's kernel never answers a pod's ARP on it. It returns the
// host end's MAC.
func createInterface(host, pod *netconf.Namespace, hostName, podName string, ifc podnet.Interface) (string, error) {
	mac, err := net.ParseMAC(ifc.MAC)
	if err != nil {
		return "", fmt.Errorf("interface %s: MAC %q: %w", podName, ifc.MAC, err)
	}
	veth := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: hostName, MTU: ifc.MTU},
		PeerName:         podName,
		PeerHardwareAddr: mac,
		PeerNamespace:    netlink.NsFd(int(pod.FD)),
		PeerMTU:          uint32(ifc.MTU),
	}
	if err := host.Handle.LinkAdd(veth); err != nil {
		return "", fmt.Errorf("create veth %s (in %s) - %s (in %s): %w", hostName, host, podName, pod, err)
	}
	l, err := pod.Handle.LinkByName(podName)
	if err != nil {
		return "", fmt.Errorf("find %s in %s: %w", podName, pod, err)
	}
	for _, a := range ifc.IPs {
		addr := &netlink.Addr{IPNet: netconf.IPNetOf(a)}
		if a.Addr().Is6() {
			addr.Flags = syscall.IFA_F_NODAD
		}
		if err := pod.Handle.AddrAdd(l, addr); err != nil {
			return "", fmt.Errorf("add address %s to %s in %s: %w", a, podName, pod, err)
		}
	}
	if err := pod.Handle.LinkSetUp(l); err != nil {
		return "", fmt.Errorf("set %s up in %s: %w", podName, pod, err)
	}
	hl, err := host.Handle.LinkByName(hostName)
	if err != nil {
		return "", fmt.Errorf("find %s in %s: %w", hostName, host, err)
	}
	if err := host.Handle.LinkSetARPOff(hl); err != nil {
		return "", fmt.Errorf("turn ARP off on %s in %s: %w", hostName, host, err)
	}
	if err := host.Handle.LinkSetUp(hl); err != nil {
		return "", fmt.Errorf("set %s up in %s: %w", hostName, host, err)
	}
	return hl.Attrs().HardwareAddr.String(), nil
}

// addRoutes adds the routes of a pod interface, those without a next hop first (a
// next hop may need one of them to be reachable).
func addRoutes(pod *netconf.Namespace, podName string, routes []podnet.Route) error {
	if len(routes) == 0 {
		return nil
	}
	l, err := pod.Handle.LinkByName(podName)
	if err != nil {
		return fmt.Errorf("find %s in %s: %w", podName, pod, err)
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
		route := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: netconf.IPNetOf(r.Dst.Masked())}
		if r.Via.IsValid() {
			route.Gw = net.IP(r.Via.AsSlice())
		} else {
			route.Scope = netlink.SCOPE_LINK
		}
		// Replace, not add: a plan may hold the same destination twice (two
		// gateways of one family), and the last one wins rather than failing.
		if err := pod.Handle.RouteReplace(route); err != nil {
			return fmt.Errorf("add route to %s via %s dev %s in %s: %w", r.Dst, viaText(r.Via), podName, pod, err)
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
// It returns the names it deleted; a link that went away meanwhile is no error. A list
// of the links that stays interrupted (netconf.RetryDump gives up) is an error, after
// deleting what it did show: the runtime calls DEL again.
func removeHostEnds(host *netconf.Namespace, containerID string) ([]string, error) {
	links, listErr := netconf.RetryDump(host.Handle.LinkList)
	if listErr != nil && !errors.Is(listErr, netlink.ErrDumpInterrupted) {
		return nil, fmt.Errorf("list the links of %s: %w", host, listErr)
	}
	var removed []string
	var errs []error
	for _, l := range links {
		name := l.Attrs().Name
		if l.Type() != "veth" || !podnet.IsHostInterfaceOf(containerID, name) {
			continue
		}
		if err := host.Handle.LinkDel(l); err != nil && !errors.Is(err, syscall.ENODEV) {
			errs = append(errs, fmt.Errorf("delete veth %s of container %s in %s: %w", name, containerID, host, err))
			continue
		}
		removed = append(removed, name)
	}
	if listErr != nil {
		errs = append(errs, fmt.Errorf("list the links of %s: %w", host, listErr))
	}
	return removed, errors.Join(errs...)
}

// checkInterface checks that the pod's namespace holds the interface with the MAC and
// the addresses.
func checkInterface(pod *netconf.Namespace, name, mac string, addrs []netip.Prefix) error {
	l, err := pod.Handle.LinkByName(name)
	if err != nil {
		return fmt.Errorf("interface %s in %s: %w", name, pod, err)
	}
	if mac != "" && !strings.EqualFold(l.Attrs().HardwareAddr.String(), mac) {
		return fmt.Errorf("interface %s in %s has MAC %s, not %s", name, pod, l.Attrs().HardwareAddr, mac)
	}
	have, err := netconf.RetryDump(func() ([]netlink.Addr, error) { return pod.Handle.AddrList(l, netlink.FAMILY_ALL) })
	if err != nil {
		return fmt.Errorf("addresses of %s in %s: %w", name, pod, err)
	}
	for _, want := range addrs {
		if !slices.ContainsFunc(have, func(a netlink.Addr) bool { p, _ := netconf.PrefixOf(a.IPNet); return p == want }) {
			return fmt.Errorf("interface %s in %s lacks address %s", name, pod, want)
		}
	}
	return nil
}
