package netconf

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
)

// fakeKernel simulates the part of a network namespace that Host uses, refusing
// what Linux refuses with the same errnos and doing on its own what Linux does on
// its own (measured on 6.18 with iproute2 6.1):
//   - routes need their link up; a gateway must lie in a subnet of the link's
//     addresses or in an on-link route through the link in the route's table or
//     main (IPv6 link-local gateways always do);
//   - IPv6 routes get metric 1024 when given 0; a second route with the same
//     table, destination and metric is EEXIST;
//   - deleting a primary IPv4 address deletes the secondaries of its subnet, and
//     deleting a link's last IPv4 address flushes its IPv4 routes;
//   - an IPv6 address exists once per link whatever its prefix length;
//   - an MTU below 1280 disables IPv6 on the link, taking its addresses and routes;
//   - enslaving a link to a VRF or releasing it cycles it, which flushes its routes;
//   - deleting a link takes its addresses and routes but not the rules selecting
//     its table, which name no device.
type fakeKernel struct {
	mu        sync.Mutex
	vrf       bool // whether VRF devices exist (CONFIG_NET_VRF)
	next      int  // the last link index handed out
	linkList  []*fakeLink
	routeList []route
	ruleList  []rule
}

type fakeLink struct {
	link
	addrs []netip.Prefix // in the order added: the first of an IPv4 subnet is primary
}

func (k *fakeKernel) find(index int) (*fakeLink, error) {
	for _, l := range k.linkList {
		if l.Index == index {
			return l, nil
		}
	}
	return nil, fmt.Errorf("link index %d: %w", index, syscall.ENODEV)
}

func (k *fakeKernel) byName(name string) *fakeLink {
	for _, l := range k.linkList {
		if l.Name == name {
			return l
		}
	}
	return nil
}

func (k *fakeKernel) links() ([]link, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]link, 0, len(k.linkList))
	for _, l := range k.linkList {
		out = append(out, l.link)
	}
	return out, nil
}

func (k *fakeKernel) linkByName(name string) (link, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l := k.byName(name); l != nil {
		return l.link, nil
	}
	return link{}, fmt.Errorf("link %s: %w", name, ErrLinkNotFound)
}

// update runs change on the link of l under the lock.
func (k *fakeKernel) update(l link, change func(*fakeLink) error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	fl, err := k.find(l.Index)
	if err != nil {
		return err
	}
	return change(fl)
}

func (k *fakeKernel) setMAC(l link, mac net.HardwareAddr) error {
	return k.update(l, func(fl *fakeLink) error {
		if len(mac) != 6 || mac[0]&1 != 0 || isZero(mac) {
			return fmt.Errorf("MAC %s: %w", mac, syscall.EADDRNOTAVAIL)
		}
		fl.MAC = slices.Clone(mac)
		return nil
	})
}

func (k *fakeKernel) setMTU(l link, mtu int) error {
	return k.update(l, func(fl *fakeLink) error {
		if mtu < minMTU || mtu > 65535 {
			return fmt.Errorf("MTU %d: %w", mtu, syscall.EINVAL)
		}
		fl.MTU = mtu
		if mtu < minIPv6MTU {
			fl.addrs = slices.DeleteFunc(fl.addrs, func(p netip.Prefix) bool { return p.Addr().Is6() })
			k.flushRoutes(fl.Index, func(r route) bool { return r.Dst.Addr().Is6() })
		}
		return nil
	})
}

func (k *fakeKernel) setUp(l link) error {
	return k.update(l, func(fl *fakeLink) error { fl.Up = true; return nil })
}

func (k *fakeKernel) setAlias(l link, alias string) error {
	return k.update(l, func(fl *fakeLink) error {
		if len(alias) > 255 {
			return fmt.Errorf("alias of %d bytes: %w", len(alias), syscall.EINVAL)
		}
		fl.Alias = alias
		return nil
	})
}

func (k *fakeKernel) setMaster(l link, masterIndex int) error {
	return k.update(l, func(fl *fakeLink) error {
		if masterIndex != 0 {
			m, err := k.find(masterIndex)
			if err != nil {
				return err
			}
			if m.Kind != "vrf" {
				return fmt.Errorf("master %s is no VRF: %w", m.Name, syscall.EINVAL)
			}
		}
		fl.MasterIndex = masterIndex
		k.flushRoutes(fl.Index, func(route) bool { return true })
		return nil
	})
}

func (k *fakeKernel) addVRF(name string, table int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.vrf {
		return fmt.Errorf("%w: %w", ErrVRFUnsupported, syscall.EOPNOTSUPP)
	}
	if k.byName(name) != nil {
		return fmt.Errorf("link %s: %w", name, syscall.EEXIST)
	}
	k.next++
	mac := net.HardwareAddr{0x02, 0, 0, 0, byte(k.next >> 8), byte(k.next)}
	k.linkList = append(k.linkList, &fakeLink{link: link{Index: k.next, Name: name, Kind: "vrf", MAC: mac, MTU: 65575, VRFTable: table}})
	return nil
}

func (k *fakeKernel) deleteLink(l link) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := k.find(l.Index); err != nil {
		return err
	}
	k.linkList = slices.DeleteFunc(k.linkList, func(o *fakeLink) bool { return o.Index == l.Index })
	k.flushRoutes(l.Index, func(route) bool { return true })
	for _, o := range k.linkList {
		if o.MasterIndex == l.Index {
			o.MasterIndex = 0
		}
	}
	return nil
}

func (k *fakeKernel) addrs(linkIndex int) ([]netip.Prefix, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, err := k.find(linkIndex)
	if err != nil {
		return nil, err
	}
	return slices.Clone(l.addrs), nil
}

func (k *fakeKernel) addAddr(l link, p netip.Prefix, _ bool) error { // kernel prefix routes are not simulated
	return k.update(l, func(fl *fakeLink) error {
		for _, a := range fl.addrs {
			if a == p || (p.Addr().Is6() && a.Addr() == p.Addr()) {
				return fmt.Errorf("address %s on %s: %w", p, fl.Name, syscall.EEXIST)
			}
		}
		if p.Addr().Is6() && fl.MTU < minIPv6MTU {
			return fmt.Errorf("address %s on %s (IPv6 disabled): %w", p, fl.Name, syscall.EACCES)
		}
		fl.addrs = append(fl.addrs, p)
		return nil
	})
}

func (k *fakeKernel) delAddr(l link, p netip.Prefix) error {
	return k.update(l, func(fl *fakeLink) error {
		i := slices.Index(fl.addrs, p)
		if i < 0 {
			return nil // the real seam treats EADDRNOTAVAIL as done
		}
		primary := p.Addr().Is4() && !slices.ContainsFunc(fl.addrs[:i], func(a netip.Prefix) bool {
			return a.Addr().Is4() && a.Masked() == p.Masked()
		})
		fl.addrs = slices.DeleteFunc(fl.addrs, func(a netip.Prefix) bool {
			return a == p || (primary && a.Addr().Is4() && a.Masked() == p.Masked())
		})
		if p.Addr().Is4() && !slices.ContainsFunc(fl.addrs, func(a netip.Prefix) bool { return a.Addr().Is4() }) {
			k.flushRoutes(fl.Index, func(r route) bool { return r.Dst.Addr().Is4() })
		}
		return nil
	})
}

// flushRoutes drops routes through linkIndex that match; k.mu is held.
func (k *fakeKernel) flushRoutes(linkIndex int, match func(route) bool) {
	k.routeList = slices.DeleteFunc(k.routeList, func(r route) bool { return r.LinkIndex == linkIndex && match(r) })
}

func (k *fakeKernel) ownRoutes(linkIndex int) ([]route, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []route
	for _, r := range k.routeList {
		if r.Protocol == RouteProtocol && (linkIndex == 0 || r.LinkIndex == linkIndex) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (k *fakeKernel) defaultRoutes() ([]route, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []route
	for _, r := range k.routeList {
		if r.Table == MainTable && r.Dst.Bits() == 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

// checkRoute refuses what the kernel refuses when r is added; k.mu is held.
func (k *fakeKernel) checkRoute(r route) (route, error) {
	l, err := k.find(r.LinkIndex)
	if err != nil {
		return r, err
	}
	if !l.Up {
		return r, fmt.Errorf("route %s: link %s is down: %w", r.Dst, l.Name, syscall.ENETDOWN)
	}
	if r.Dst.Addr().Is6() && r.Metric == 0 {
		r.Metric = 1024
	}
	if r.Via.IsValid() && !k.reachable(l, r.Table, r.Via) {
		errno := syscall.EINVAL // IPv4: "Nexthop has invalid gateway"
		if r.Via.Is6() {
			errno = syscall.EHOSTUNREACH
		}
		return r, fmt.Errorf("%w: %w", ErrGatewayUnreachable, errno)
	}
	return r, nil
}

// reachable tells whether gw is on-link through l for a route in table.
func (k *fakeKernel) reachable(l *fakeLink, table int, gw netip.Addr) bool {
	if gw.Is6() && gw.IsLinkLocalUnicast() {
		return true
	}
	for _, a := range l.addrs {
		if a.Masked().Contains(gw) {
			return true
		}
	}
	for _, r := range k.routeList {
		if r.LinkIndex == l.Index && !r.Via.IsValid() && (r.Table == table || r.Table == MainTable) && r.Dst.Contains(gw) {
			return true
		}
	}
	return false
}

func sameKey(a, b route) bool {
	return a.Table == b.Table && a.Dst == b.Dst && a.Metric == b.Metric
}

func (k *fakeKernel) addRoute(r route) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, err := k.checkRoute(r)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(k.routeList, func(o route) bool { return sameKey(o, r) }) {
		return fmt.Errorf("route %s table %d: %w", r.Dst, r.Table, syscall.EEXIST)
	}
	k.routeList = append(k.routeList, r)
	return nil
}

func (k *fakeKernel) replaceRoute(r route) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, err := k.checkRoute(r)
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(k.routeList, func(o route) bool { return sameKey(o, r) }); i >= 0 {
		k.routeList[i] = r
		return nil
	}
	k.routeList = append(k.routeList, r)
	return nil
}

func (k *fakeKernel) delRoute(r route) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.IndexFunc(k.routeList, func(o route) bool {
		return o.Table == r.Table && o.Dst == r.Dst && o.Via == r.Via && o.LinkIndex == r.LinkIndex && o.Protocol == r.Protocol
	})
	if i >= 0 {
		k.routeList = slices.Delete(k.routeList, i, i+1)
	}
	return nil // the real seam treats ESRCH as done
}

func (k *fakeKernel) ownRules() ([]rule, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []rule
	for _, r := range k.ruleList {
		if r.Protocol == RouteProtocol {
			out = append(out, r)
		}
	}
	return out, nil
}

func (k *fakeKernel) addRule(r rule) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r.Table == 0 {
		// The kernel would pick an unused table itself; nothing here asks for that.
		return fmt.Errorf("rule %s: table 0: %w", ruleString(r), syscall.EINVAL)
	}
	if slices.Contains(k.ruleList, r) {
		return fmt.Errorf("rule %s: %w", ruleString(r), syscall.EEXIST)
	}
	k.ruleList = append(k.ruleList, r)
	return nil
}

func (k *fakeKernel) delRule(r rule) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ruleList = slices.DeleteFunc(k.ruleList, func(o rule) bool { return o == r })
	return nil // the real seam treats ENOENT as done
}
