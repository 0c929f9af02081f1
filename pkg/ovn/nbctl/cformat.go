package nbctl

import (
	"net/netip"
	"strconv"
	"strings"
)

// ovn-nbctl formats with C's printf, whose widths and precisions count bytes, where Go's
// count runes; these helpers count bytes so names outside ASCII line up as they do there.

// rightAligned is printf's "%<width>s".
func rightAligned(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return strings.Repeat(" ", width-len(s)) + s
}

// leftAligned is printf's "%-<width>.<max>s": s cut to max bytes, then padded to width.
func leftAligned(s string, width, max int) string {
	if len(s) > max {
		s = s[:max]
	}
	if len(s) >= width {
		return s
	}
	return s + strings.Repeat(" ", width-len(s))
}

// parseCIDR parses an address or network as OVS's ip_parse_cidr and then
// ipv6_parse_cidr do: "ADDR", "ADDR/LEN" or "ADDR/MASK" with a contiguous mask. Host
// bits may be set; the address is returned as written, unmasked.
func parseCIDR(s string) (netip.Prefix, bool) {
	addrPart, lenPart, hasLen := strings.Cut(s, "/")
	addr, err := netip.ParseAddr(addrPart)
	if err != nil || addr.Zone() != "" {
		return netip.Prefix{}, false
	}
	if !hasLen {
		return netip.PrefixFrom(addr, addr.BitLen()), true
	}
	if bits, err := strconv.Atoi(lenPart); err == nil {
		if bits < 0 || bits > addr.BitLen() {
			return netip.Prefix{}, false
		}
		return netip.PrefixFrom(addr, bits), true
	}
	mask, err := netip.ParseAddr(lenPart)
	if err != nil || mask.BitLen() != addr.BitLen() {
		return netip.Prefix{}, false
	}
	bits, ok := maskBits(mask.AsSlice())
	if !ok {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(addr, bits), true
}

// maskBits is the length of a network mask, which must be ones followed by zeros.
func maskBits(mask []byte) (int, bool) {
	bits, zeroSeen := 0, false
	for _, b := range mask {
		for bit := 7; bit >= 0; bit-- {
			switch {
			case b&(1<<bit) == 0:
				zeroSeen = true
			case zeroSeen:
				return 0, false
			default:
				bits++
			}
		}
	}
	return bits, true
}

// normalizePrefix prints an address or network as OVS's normalize_prefix_str does: host
// bits cleared, the length left out when it covers the whole address, IPv6 written by
// glibc's inet_ntop. It fails on what OVS cannot parse.
func normalizePrefix(s string) (string, bool) {
	p, ok := parseCIDR(s)
	if !ok {
		return "", false
	}
	addr := formatAddr(p.Masked().Addr())
	if p.IsSingleIP() {
		return addr, true
	}
	return addr + "/" + strconv.Itoa(p.Bits()), true
}

// normalizedOrEmpty is normalizePrefix, or "" for what OVS cannot parse: ovn-nbctl
// then hands its printf a NULL string, which prints as nothing.
func normalizedOrEmpty(s string) string {
	n, _ := normalizePrefix(s)
	return n
}

// formatAddr writes an address as glibc's inet_ntop does. That is Go's format except
// for an IPv6 address whose first 96 bits are zero and whose next 16 are not: glibc
// writes its last 32 bits as dotted IPv4 ("::1.2.3.4"), Go in hex ("::102:304").
func formatAddr(a netip.Addr) string {
	if a.Is6() && !a.Is4In6() {
		b := a.As16()
		if [12]byte(b[:12]) == [12]byte{} && (b[12] != 0 || b[13] != 0) {
			return "::" + netip.AddrFrom4([4]byte(b[12:])).String()
		}
	}
	return a.String()
}
