package match

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// numFormat is how a constant was written. It decides how wide the constant is, and so
// which fields it fits (see width).
type numFormat uint8

const (
	fmtDecimal numFormat = iota
	fmtHex
	fmtIPv4
	fmtIPv6
	fmtMAC
)

// number is an integer constant: a value and, if masked, the mask that says which of
// its bits matter. A masked value never has 1-bits outside its mask.
type number struct {
	val, mask u128
	masked    bool
	format    numFormat
	text      string // as written, for error messages
	off       int    // byte offset in the input, for error messages
}

// width is the narrowest field the constant fits, following OVN: the bits of the mask
// if masked, otherwise the significant bits of a decimal or hexadecimal value, and the
// full size of an address whatever its value (so 10.0.0.1 fits ip6.src, as the integer
// ::a00:1, but not the 16-bit tcp.dst).
func (n number) width() int {
	switch {
	case n.masked:
		return n.mask.bitLen()
	case n.format == fmtIPv4:
		return 32
	case n.format == fmtIPv6:
		return 128
	case n.format == fmtMAC:
		return 48
	}
	return n.val.bitLen()
}

// describe names the constant for an error message, e.g. `IPv6 address "fe80::1"`.
func (n number) describe() string {
	switch n.format {
	case fmtIPv4:
		return fmt.Sprintf("IPv4 address %q", n.text)
	case fmtIPv6:
		return fmt.Sprintf("IPv6 address %q", n.text)
	case fmtMAC:
		return fmt.Sprintf("MAC address %q", n.text)
	}
	return fmt.Sprintf("%d-bit constant %q", n.width(), n.text)
}

// numberEnd returns the end of the numeric token starting at pos. As in OVN it takes
// letters, digits, colons (but none after a dot, so 1.2.3.4:80 stops before the colon)
// and dots (but not "..").
func numberEnd(s string, pos int) int {
	sawDot := false
	for pos < len(s) {
		c := s[pos]
		switch {
		case isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c == ':' && !sawDot:
		case c == '.' && (pos+1 >= len(s) || s[pos+1] != '.'):
			sawDot = true
		default:
			return pos
		}
		pos++
	}
	return pos
}

// lexNumber reads the constant at s[start:], with its mask if a '/' follows at once,
// and returns it with the offset after it.
func lexNumber(s string, start int) (number, int) {
	end := numberEnd(s, start)
	n := parseNumber(s, start, end)
	if end >= len(s) || s[end] != '/' {
		return n, end
	}
	mEnd := numberEnd(s, end+1)
	if mEnd == end+1 {
		failf(s, end, "expecting a mask or prefix length after %q", s[start:end+1])
	}
	m := parseNumber(s, end+1, mEnd)
	n.text = s[start:mEnd]
	n.masked = true
	switch {
	case n.format == m.format:
		n.mask = m.val
	case m.format == fmtDecimal && (n.format == fmtIPv4 || n.format == fmtIPv6):
		family, width := "IPv4", 32
		if n.format == fmtIPv6 {
			family, width = "IPv6", 128
		}
		if m.val.lo > uint64(width) {
			failf(s, end+1, "prefix length %s is longer than an %s address", m.text, family)
		}
		n.mask = prefixMask(int(m.val.lo), width)
	case n.format == fmtDecimal && n.val.isZero() && m.format == fmtHex:
		n.format, n.mask = fmtHex, m.val
	default:
		failf(s, start, "value and mask have incompatible formats in %q", n.text)
	}
	// OVN drops value bits outside the mask rather than rejecting them: 10.0.0.1/8 is
	// 10.0.0.0/8.
	n.val = n.val.and(n.mask)
	return n, mEnd
}

// parseNumber classifies and decodes s[start:end] without a mask.
func parseNumber(s string, start, end int) number {
	text := s[start:end]
	n := number{text: text, off: start}
	switch {
	case isMAC(text):
		n.format = fmtMAC
		for i := 0; i < 6; i++ {
			b, _ := strconv.ParseUint(text[3*i:3*i+2], 16, 8)
			n.val.lo = n.val.lo<<8 | b
		}
	case strings.Trim(text, "0123456789") == "":
		if len(text) > 1 && text[0] == '0' {
			failf(s, start, "decimal constant %q must not have leading zeros", text)
		}
		v, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			failf(s, start, "decimal constant %q does not fit in 64 bits", text)
		}
		n.format, n.val = fmtDecimal, u128{lo: v}
	case strings.HasPrefix(text, "0x") || strings.HasPrefix(text, "0X"):
		n.format, n.val = fmtHex, parseHex(s, start, text)
	default:
		a, err := netip.ParseAddr(text)
		switch {
		case err == nil && a.Is4():
			b := a.As4()
			n.format, n.val = fmtIPv4, u128{lo: uint64(binary.BigEndian.Uint32(b[:]))}
		case err == nil && a.Zone() == "":
			b := a.As16()
			n.format, n.val = fmtIPv6, u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
		default:
			failf(s, start, "invalid %s %q", guessKind(text), text)
		}
	}
	return n
}

// parseHex decodes a 0x constant of at most 128 significant bits.
func parseHex(s string, start int, text string) u128 {
	digits := text[2:]
	if digits == "" {
		failf(s, start, "hex digits expected after %q", text)
	}
	var v u128
	for i := 0; i < len(digits); i++ {
		d, err := strconv.ParseUint(digits[i:i+1], 16, 8)
		if err != nil {
			failf(s, start, "invalid hexadecimal constant %q", text)
		}
		var ok bool
		if v, ok = v.shl4(d); !ok {
			failf(s, start, "hexadecimal constant %q is wider than 128 bits", text)
		}
	}
	return v
}

// isMAC reports whether text is exactly six colon-separated pairs of hex digits.
func isMAC(text string) bool {
	if len(text) != 17 {
		return false
	}
	for i := 0; i < 17; i++ {
		if i%3 == 2 {
			if text[i] != ':' {
				return false
			}
		} else if !isHexDigit(text[i]) {
			return false
		}
	}
	return true
}

// guessKind says what a malformed constant looks like it was meant to be, so the error
// names it: "invalid IPv4 address", not "invalid numeric constant".
func guessKind(text string) string {
	switch {
	case strings.Trim(text, "0123456789.") == "" && strings.Contains(text, "."):
		return "IPv4 address"
	case strings.Count(text, ":") == 5 && !strings.Contains(text, "::") && !strings.Contains(text, "."):
		return "MAC address"
	case strings.Contains(text, ":"):
		return "IPv6 address"
	}
	return "numeric constant"
}
