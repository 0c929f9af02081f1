package netconf

import (
	"fmt"
	"net/netip"
)

// Limits the kernel imposes, checked before anything is written so that an
// invalid port changes nothing.
const (
	maxLinkName  = 15   // IFNAMSIZ - 1
	minMTU       = 68   // IPv4's minimum
	minIPv6MTU   = 1280 // below it the kernel removes the link's IPv6 addresses
	maxPriority  = 32765
	defaultTable = 253
	localTable   = 255
)

// validate refuses desired state that the kernel would refuse, do something
// surprising with, or that would make ownership ambiguous. Errors wrap ErrInvalid
// and name the port and the offending value.
func (p ManagementPort) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrInvalid, p.Name, fmt.Sprintf(format, args...))
	}
	if err := validLinkName(p.Name); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if p.MAC != nil && (len(p.MAC) != 6 || p.MAC[0]&1 != 0 || isZero(p.MAC)) {
		return bad("MAC %q is not a 6-byte unicast address", p.MAC)
	}
	seen := map[netip.Addr]netip.Prefix{}
	hasIPv6 := false
	for _, a := range p.Addresses {
		if !a.IsValid() {
			return bad("address %v is not a valid prefix", a)
		}
		if !a.Addr().IsGlobalUnicast() {
			return bad("address %s is not global unicast (link-local addresses belong to the kernel)", a)
		}
		if a.Addr().Is4In6() || a.Addr().Zone() != "" {
			return bad("address %s must be plain IPv4 or IPv6", a)
		}
		if prev, dup := seen[a.Addr()]; dup {
			return bad("duplicate address %s (also %s)", a, prev)
		}
		seen[a.Addr()] = a
		hasIPv6 = hasIPv6 || a.Addr().Is6()
	}
	if p.MTU != 0 && p.MTU < minMTU {
		return bad("MTU %d is below %d", p.MTU, minMTU)
	}
	if p.MTU != 0 && hasIPv6 && p.MTU < minIPv6MTU {
		return bad("MTU %d is below %d, where the kernel disables IPv6, yet the port has IPv6 addresses", p.MTU, minIPv6MTU)
	}
	if p.Table < 0 || p.Table == defaultTable || p.Table == localTable {
		return bad("table %d is not usable (0 or 254 is main; 253 and 255 are the kernel's)", p.Table)
	}
	if p.VRF != "" {
		if err := validLinkName(p.VRF); err != nil {
			return bad("VRF: %v", err)
		}
		if p.VRF == p.Name {
			return bad("VRF %s has the port's own name", p.VRF)
		}
		if p.table() == MainTable {
			return bad("VRF %s needs a table of its own, not main", p.VRF)
		}
	}
	dsts := map[netip.Prefix]bool{}
	for _, r := range p.Routes {
		if !r.Dst.IsValid() || r.Dst != r.Dst.Masked() {
			return bad("route %s: destination must be a prefix without host bits (%s)", r, r.Dst.Masked())
		}
		if r.Via.IsValid() && (r.Via.Is4() != r.Dst.Addr().Is4() || r.Via.IsUnspecified() || r.Via.Is4In6()) {
			return bad("route %s: gateway must be an address of the destination's family", r)
		}
		if dsts[r.Dst] {
			return bad("route %s: a second route to %s", r, r.Dst)
		}
		dsts[r.Dst] = true
	}
	if len(p.Rules) > 0 && p.table() == MainTable {
		return bad("rules need a table of its own: the port uses main")
	}
	type ruleKey struct {
		prio int
		dst  netip.Prefix
		oif  string
	}
	rules := map[ruleKey]bool{}
	for _, r := range p.Rules {
		switch {
		case r.Table == 0:
			return bad("rule %s: table 0 (the kernel would pick an unused table itself)", r)
		case r.Table != p.table():
			return bad("rule %s: selects table %d, not the port's table %d", r, r.Table, p.table())
		case r.Priority < 1 || r.Priority > maxPriority:
			return bad("rule %s: priority must be between 1 and %d", r, maxPriority)
		case !r.Dst.IsValid() || r.Dst != r.Dst.Masked():
			return bad("rule %s: destination must be a prefix without host bits", r)
		case r.Oif != "" && r.Dst.Bits() != 0:
			return bad("rule %s: an oif rule takes the family's default prefix (0.0.0.0/0 or ::/0) as its destination", r)
		case rules[ruleKey{r.Priority, r.Dst, r.Oif}]:
			return bad("rule %s: duplicate", r)
		}
		rules[ruleKey{r.Priority, r.Dst, r.Oif}] = true
	}
	return nil
}

// validLinkName refuses what the kernel's dev_valid_name refuses.
func validLinkName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > maxLinkName {
		return fmt.Errorf("link name %q must have 1 to %d characters", name, maxLinkName)
	}
	for _, c := range name {
		if c == '/' || c == ':' || c <= ' ' || c == 0x7f {
			return fmt.Errorf("link name %q has a forbidden character %q", name, c)
		}
	}
	return nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
