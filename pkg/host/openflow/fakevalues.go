package openflow

import (
	"fmt"
	mathbits "math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The values of the match fields the Fake knows, read and printed as ovs-ofctl does.

// ctStateFlags are the conntrack state flags in bit order, the order ovs-ofctl prints.
var ctStateFlags = []string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"}

// normCTState accepts "+flag-flag…" and prints the flags in bit order. The forms
// without signs ("trk", which means "exactly trk") and all eight flags at once, which
// ovs-ofctl prints another way, are refused.
func normCTState(v string) (string, error) {
	signs := make([]byte, len(ctStateFlags))
	n := 0
	for rest := v; rest != ""; {
		sign := rest[0]
		if sign != '+' && sign != '-' {
			return "", fmt.Errorf("%q: each flag needs + or - (the fake does not take the unsigned form)", v)
		}
		rest = rest[1:]
		end := strings.IndexAny(rest, "+-")
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		rest = rest[end:]
		i := slices.Index(ctStateFlags, name)
		if i < 0 {
			return "", fmt.Errorf("%q: unknown ct_state flag %q", v, name)
		}
		if signs[i] != 0 {
			return "", fmt.Errorf("%q: flag %q given twice", v, name)
		}
		signs[i] = sign
		n++
	}
	if n == len(ctStateFlags) {
		return "", fmt.Errorf("%q: all flags at once are not supported by the fake", v)
	}
	var b strings.Builder
	for i, s := range signs {
		if s != 0 {
			b.WriteByte(s)
			b.WriteString(ctStateFlags[i])
		}
	}
	return b.String(), nil
}

// uintNorm parses an unsigned number (decimal or 0x hex) of the given width and prints
// it in decimal, as ovs-ofctl prints ports, zones and ICMP types.
func uintNorm(bits int) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := strconv.ParseUint(v, 0, bits)
		if err != nil {
			return "", fmt.Errorf("%q is not a %d-bit number", v, bits)
		}
		return strconv.FormatUint(n, 10), nil
	}
}

// hexValue prints a number as ovs-ofctl prints hexadecimal fields: "0" for zero.
func hexValue(n uint64) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", n)
}

// normHexMasked32 handles ct_mark: value[/mask], printed in hex; an all-ones mask is
// left out and a zero mask drops the field.
func normHexMasked32(v string) (string, error) {
	val, mask, masked := strings.Cut(v, "/")
	n, err := strconv.ParseUint(val, 0, 32)
	if err != nil {
		return "", fmt.Errorf("%q is not a 32-bit number", v)
	}
	if !masked {
		return hexValue(n), nil
	}
	mk, err := strconv.ParseUint(mask, 0, 32)
	if err != nil {
		return "", fmt.Errorf("mask %q is not a 32-bit number", mask)
	}
	switch mk {
	case 0:
		return "", nil
	case 0xffffffff:
		return hexValue(n), nil
	}
	return hexValue(n&mk) + "/" + hexValue(mk), nil
}

// maxPhysicalPort is the highest number of a switch port; above it lie OpenFlow's
// reserved ports (LOCAL is 65534).
const maxPhysicalPort = 0xfeff

// localPort is the OpenFlow 1.0 number of the bridge's own port.
const localPort = 65534

// normPort prints a port number or LOCAL as ovs-ofctl does. Port names are refused:
// dumps without names would never show them.
func normPort(v string) (string, error) {
	if strings.EqualFold(v, "LOCAL") {
		return "LOCAL", nil
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return "", fmt.Errorf("port %q: want a number or LOCAL (names cannot be compared with dumps)", v)
	}
	switch {
	case n == localPort:
		return "LOCAL", nil
	case n >= 1 && n <= maxPhysicalPort:
		return strconv.FormatUint(n, 10), nil
	}
	return "", fmt.Errorf("port %d out of range 1..%d or LOCAL", n, maxPhysicalPort)
}

// normMAC accepts aa:bb:cc:dd:ee:ff[/mask] and prints it in lower case; an all-ones
// mask is left out and a zero mask drops the field.
func normMAC(v string) (string, error) {
	addr, mask, masked := strings.Cut(v, "/")
	a, err := parseMAC(addr)
	if err != nil {
		return "", err
	}
	if !masked {
		return a, nil
	}
	mk, err := parseMAC(mask)
	if err != nil {
		return "", err
	}
	switch mk {
	case "00:00:00:00:00:00":
		return "", nil
	case "ff:ff:ff:ff:ff:ff":
		return a, nil
	}
	return a + "/" + mk, nil
}

func parseMAC(s string) (string, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return "", fmt.Errorf("%q is not a MAC address", s)
	}
	for i, p := range parts {
		if len(p) != 2 {
			return "", fmt.Errorf("%q is not a MAC address", s)
		}
		if _, err := strconv.ParseUint(p, 16, 8); err != nil {
			return "", fmt.Errorf("%q is not a MAC address", s)
		}
		parts[i] = strings.ToLower(p)
	}
	return strings.Join(parts, ":"), nil
}

// normIPv4 accepts an address, address/length or address/dotted-mask, clears the host
// bits and prints it as ovs-ofctl does: no /32, a length for contiguous masks, the
// dotted mask otherwise; a /0 drops the field.
func normIPv4(v string) (string, error) {
	addr, mask, masked := strings.Cut(v, "/")
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is4() {
		return "", fmt.Errorf("%q is not an IPv4 address", v)
	}
	if !masked {
		return a.String(), nil
	}
	var bits uint32
	if n, err := strconv.Atoi(mask); err == nil {
		if n < 0 || n > 32 {
			return "", fmt.Errorf("%q: prefix length out of range", v)
		}
		bits = ^uint32(0) << (32 - n)
		if n == 0 {
			bits = 0
		}
	} else {
		m, err := netip.ParseAddr(mask)
		if err != nil || !m.Is4() {
			return "", fmt.Errorf("%q: mask %q is neither a length nor an IPv4 mask", v, mask)
		}
		b := m.As4()
		bits = uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	b := a.As4()
	ip := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) & bits
	network := netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)})
	switch {
	case bits == 0:
		return "", nil
	case bits == ^uint32(0):
		return network.String(), nil
	case ^bits&(^bits+1) == 0: // ones from the top, then zeros: a prefix length
		return fmt.Sprintf("%s/%d", network, 32-mathbits.TrailingZeros32(bits)), nil
	}
	mb := netip.AddrFrom4([4]byte{byte(bits >> 24), byte(bits >> 16), byte(bits >> 8), byte(bits)})
	return fmt.Sprintf("%s/%s", network, mb), nil
}

// normIPv6 accepts an address or address/length, clears the host bits and prints the
// compressed form; /128 is left out and /0 drops the field.
func normIPv6(v string) (string, error) {
	if !strings.Contains(v, "/") {
		a, err := netip.ParseAddr(v)
		if err != nil || !a.Is6() {
			return "", fmt.Errorf("%q is not an IPv6 address", v)
		}
		return a.String(), nil
	}
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is6() {
		return "", fmt.Errorf("%q is not an IPv6 address/length (the fake takes no IPv6 masks)", v)
	}
	switch p.Bits() {
	case 0:
		return "", nil
	case 128:
		return p.Addr().String(), nil
	}
	return p.Masked().String(), nil
}
