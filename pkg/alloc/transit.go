package alloc

import (
	"fmt"
	"net/netip"
)

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598), where OVN-Kubernetes' IPv4 join and
// transit subnets live; a moved IPv4 transit subnet stays inside it.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// TransitSubnets picks a Layer2 network's transit subnets (OKEP-5094, option 4): each
// default (100.88.0.0/16, fd97::/64) is kept unless it overlaps a prefix of avoid (the
// network's subnets and join subnets), in which case the first prefix of the same size
// after it that overlaps none is taken, wrapping around within its search space:
// 100.64.0.0/10 for an IPv4 default inside it (100.88.0.0/16 → 100.89.0.0/16, …,
// 100.127.0.0/16, 100.64.0.0/16, …), else the /8 holding it; for IPv6 the /48 holding it
// (fd97::/64 → fd97:0:0:1::/64, …), else the /16 holding it. A default as short as its
// search space cannot move. The result is a pure function of the arguments, so every
// zone picks the same; changed reports whether any default moved. It fails for a zero or
// unmasked default, a zero prefix in avoid, or a default with no free alternative.
func TransitSubnets(defaults []netip.Prefix, avoid []netip.Prefix) ([]netip.Prefix, bool, error) {
	for _, a := range avoid {
		if !a.IsValid() {
			return nil, false, fmt.Errorf("transit subnet: a subnet to avoid is not set (the zero prefix)")
		}
	}
	out := make([]netip.Prefix, len(defaults))
	changed := false
	for i, d := range defaults {
		if !d.IsValid() {
			return nil, false, fmt.Errorf("default transit subnet is not set; give one such as 100.88.0.0/16 or fd97::/64")
		}
		if d != d.Masked() {
			return nil, false, fmt.Errorf("default transit subnet %s has host bits set; use %s", d, d.Masked())
		}
		p, err := freeTransitSubnet(d, avoid)
		if err != nil {
			return nil, false, err
		}
		out[i] = p
		changed = changed || p != d
	}
	return out, changed, nil
}

// transitSearchSpace returns the prefix within which default transit subnet d may move.
func transitSearchSpace(d netip.Prefix) netip.Prefix {
	widen := func(bits int) netip.Prefix {
		if d.Bits() <= bits {
			return d
		}
		return netip.PrefixFrom(d.Addr(), bits).Masked()
	}
	switch {
	case d.Addr().Is4() && sharedAddressSpace.Contains(d.Addr()) && d.Bits() > sharedAddressSpace.Bits():
		return sharedAddressSpace
	case d.Addr().Is4():
		return widen(8)
	case d.Bits() > 48:
		return widen(48)
	default:
		return widen(16)
	}
}

// freeTransitSubnet returns d if it overlaps nothing in avoid, else the next prefix of
// d's size in d's search space that overlaps nothing. It jumps past an avoided prefix
// larger than the candidate, so it runs at most about 2·len(avoid) steps whatever the
// size of the search space.
func freeTransitSubnet(d netip.Prefix, avoid []netip.Prefix) (netip.Prefix, error) {
	space := transitSearchSpace(d)
	is4 := d.Addr().Is4()
	base := addrNum(space.Addr())
	spaceSize := prefixSize(space)
	step := prefixSize(d)
	start := addrNum(d.Addr()).sub(base) // offsets from base
	off, wrapped := start, false
	for {
		cand := netip.PrefixFrom(base.add(off).addr(is4), d.Bits())
		hit, ok := firstOverlap(cand, avoid)
		if !ok {
			return cand, nil
		}
		if hit.Bits() <= space.Bits() {
			break // hit covers the whole search space
		}
		next := off.add(step)
		if hit.Bits() < d.Bits() {
			next = addrNum(hit.Masked().Addr()).sub(base).add(prefixSize(hit))
		}
		if !next.less(spaceSize) {
			if wrapped {
				break
			}
			wrapped, next = true, uint128{}
		}
		if wrapped && !next.less(start) {
			break
		}
		off = next
	}
	if space == d {
		return netip.Prefix{}, fmt.Errorf("transit subnet %s overlaps %s and, being as large as its search space, cannot move; change the network's subnets or join subnets",
			d, overlapping(d, avoid))
	}
	return netip.Prefix{}, fmt.Errorf("transit subnet %s overlaps %s, and so does every other /%d of %s; change the network's subnets or join subnets to leave one free",
		d, overlapping(d, avoid), d.Bits(), space)
}

// firstOverlap returns the first prefix of avoid that overlaps p.
func firstOverlap(p netip.Prefix, avoid []netip.Prefix) (netip.Prefix, bool) {
	for _, a := range avoid {
		if a.Overlaps(p) {
			return a, true
		}
	}
	return netip.Prefix{}, false
}

// overlapping lists the prefixes of avoid that overlap p, for errors.
func overlapping(p netip.Prefix, avoid []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range avoid {
		if a.Overlaps(p) {
			out = append(out, a)
		}
	}
	return out
}
