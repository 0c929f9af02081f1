package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// What `ip -j` says about a namespace's interfaces and routes: the pod wiring compares
// it with the plan and runs only the commands that make up the difference.

// ipLink is an interface of `ip -j addr show`.
type ipLink struct {
	IfName   string   `json:"ifname"`
	Address  string   `json:"address"`
	MTU      int      `json:"mtu"`
	Flags    []string `json:"flags"`
	AddrInfo []struct {
		Family    string `json:"family"`
		Local     string `json:"local"`
		PrefixLen int    `json:"prefixlen"`
		Scope     string `json:"scope"`
	} `json:"addr_info"`
}

// ipRoute is a route of `ip -j route show`. Protocol is empty for "boot", which is
// what `ip route add` gives: routes someone added rather than the kernel.
type ipRoute struct {
	Dst      string `json:"dst"`
	Gateway  string `json:"gateway"`
	Dev      string `json:"dev"`
	Protocol string `json:"protocol"`
}

// observeLinks returns the interfaces of a namespace by name.
func observeLinks(ctx context.Context, netns string) (map[string]ipLink, error) {
	out, err := run(ctx, nil, "ip", "-j", "-n", netns, "addr", "show")
	if err != nil {
		return nil, err
	}
	var links []ipLink
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		return nil, fmt.Errorf("interfaces of %s: ip -j printed %q: %w", netns, out, err)
	}
	m := make(map[string]ipLink, len(links))
	for _, l := range links {
		m[l.IfName] = l
	}
	return m, nil
}

// setLink gives an interface its MAC (unless mac is empty) and MTU, turns ARP off on
// it when noARP says so, and sets it up, running each command only when the observed
// link differs.
func setLink(netns, name string, l ipLink, mac string, mtu int, noARP bool, do func(argv ...string) error) error {
	ip := []string{"ip", "-n", netns, "link", "set", name}
	if noARP && !slices.Contains(l.Flags, "NOARP") {
		if err := do(append(ip, "arp", "off")...); err != nil {
			return err
		}
	}
	if mac != "" && !strings.EqualFold(l.Address, mac) {
		if err := do(append(ip, "address", mac)...); err != nil {
			return err
		}
	}
	if mtu != 0 && l.MTU != mtu {
		if err := do(append(ip, "mtu", fmt.Sprint(mtu))...); err != nil {
			return err
		}
	}
	if !slices.Contains(l.Flags, "UP") {
		return do(append(ip, "up")...)
	}
	return nil
}

// syncAddrs makes the interface's global addresses exactly ifc.IPs; link-local ones are
// the kernel's and stay. Unwanted addresses go first: deleting an interface's primary
// IPv4 address deletes the secondaries of its subnet with it (unless
// promote_secondaries is on), which would take a new address of the same subnet away.
func syncAddrs(netns string, ifc podIface, l ipLink, do func(argv ...string) error) error {
	have := map[string]bool{}
	for _, a := range l.AddrInfo {
		if a.Scope == "global" {
			have[fmt.Sprintf("%s/%d", a.Local, a.PrefixLen)] = true
		}
	}
	want := map[string]bool{}
	for _, p := range ifc.IPs {
		want[p.String()] = true
	}
	for a := range have {
		if !want[a] {
			if err := do("ip", "-n", netns, "addr", "del", a, "dev", ifc.Name); err != nil {
				return err
			}
		}
	}
	for _, p := range ifc.IPs {
		if have[p.String()] {
			continue
		}
		argv := []string{"ip", "-n", netns, "addr", "add", p.String(), "dev", ifc.Name}
		if p.Addr().Is6() {
			argv = append(argv, "nodad") // nothing in a private namespace can be duplicated
		}
		if err := do(argv...); err != nil {
			return err
		}
	}
	return nil
}

// routeKey identifies a route by destination, next hop and interface.
type routeKey struct {
	dst netip.Prefix
	via netip.Addr
	dev string
}

func (k routeKey) argv(netns, verb string) []string {
	argv := []string{"ip", "-n", netns, "route", verb, k.dst.String()}
	if k.via.IsValid() {
		argv = append(argv, "via", k.via.String())
	}
	return append(argv, "dev", k.dev)
}

// syncRoutes makes the routes added to the pod's namespace (protocol boot) exactly the
// plan's; the kernel's routes to the interfaces' subnets stay.
func syncRoutes(ctx context.Context, plan podPlan, do func(argv ...string) error) error {
	want := map[routeKey]bool{}
	for _, ifc := range plan.Ifaces {
		for _, r := range ifc.Routes {
			want[routeKey{dst: r.Dst.Masked(), via: r.Via, dev: ifc.Name}] = true
		}
	}
	have := map[routeKey]bool{}
	for _, family := range []string{"-4", "-6"} {
		out, err := run(ctx, nil, "ip", "-j", family, "-n", plan.Netns, "route", "show")
		if err != nil {
			return err
		}
		var routes []ipRoute
		if err := json.Unmarshal([]byte(out), &routes); err != nil {
			return fmt.Errorf("routes of %s: ip -j printed %q: %w", plan.Netns, out, err)
		}
		for _, r := range routes {
			if r.Protocol != "" {
				continue
			}
			k, err := parseRoute(r, family == "-6")
			if err != nil {
				return fmt.Errorf("routes of %s: %w", plan.Netns, err)
			}
			have[k] = true
		}
	}
	// Routes with a next hop need the route to it: those without go in first.
	keys := make([]routeKey, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b routeKey) int {
		if a.via.IsValid() != b.via.IsValid() {
			if a.via.IsValid() {
				return 1
			}
			return -1
		}
		return strings.Compare(a.dst.String()+a.dev, b.dst.String()+b.dev)
	})
	for _, k := range keys {
		if !have[k] {
			if err := do(k.argv(plan.Netns, "replace")...); err != nil {
				return err
			}
		}
	}
	for k := range have {
		if !want[k] {
			if err := do(k.argv(plan.Netns, "del")...); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseRoute reads a route of `ip -j route show`: dst is "default", a prefix, or an
// address for a host route.
func parseRoute(r ipRoute, v6 bool) (routeKey, error) {
	k := routeKey{dev: r.Dev}
	switch {
	case r.Dst == "default" && v6:
		k.dst = netip.MustParsePrefix("::/0")
	case r.Dst == "default":
		k.dst = netip.MustParsePrefix("0.0.0.0/0")
	case strings.Contains(r.Dst, "/"):
		p, err := netip.ParsePrefix(r.Dst)
		if err != nil {
			return k, fmt.Errorf("route to %q: %w", r.Dst, err)
		}
		k.dst = p.Masked()
	default:
		a, err := netip.ParseAddr(r.Dst)
		if err != nil {
			return k, fmt.Errorf("route to %q: %w", r.Dst, err)
		}
		k.dst = netip.PrefixFrom(a, a.BitLen())
	}
	if r.Gateway != "" {
		via, err := netip.ParseAddr(r.Gateway)
		if err != nil {
			return k, fmt.Errorf("route to %s via %q: %w", r.Dst, r.Gateway, err)
		}
		k.via = via
	}
	return k, nil
}
