package match_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// TestParseValid parses one expression per feature of the language and checks what
// String and Fields say about it.
func TestParseValid(t *testing.T) {
	cases := []struct {
		expr   string
		fields []string
	}{
		{`inport == "rtos-blue_node1" && ip4.dst == 100.65.0.2 /* blue_node1 */`, []string{"eth.type", "inport", "ip4.dst"}},
		{`1`, nil},
		{`0`, nil},
		{`!1`, nil},
		{`(((0)))`, nil},
		{`outport == "a\"b\\c\/\u00e9\ud83d\ude00\b\f\n\r\t"`, []string{"outport"}},
		{`eth.src == 0a:58:0a:f4:00:05 && eth.dst == ff:ff:ff:ff:ff:ff`, []string{"eth.dst", "eth.src"}},
		{`eth.dst == 01:00:00:00:00:00/01:00:00:00:00:00`, []string{"eth.dst"}},
		{`eth.type == 0x800 || eth.type == 0x86dd`, []string{"eth.type"}},
		{`ip4.src == 10.0.0.0/8`, []string{"eth.type", "ip4.src"}},
		{`ip4.src == 10.0.0.0/255.0.0.0`, []string{"eth.type", "ip4.src"}},
		{`ip4.src == 10.0.0.1/8`, []string{"eth.type", "ip4.src"}},
		{`ip4.src == 167772161`, []string{"eth.type", "ip4.src"}},
		{`ip6.src == fe80::/10 && ip6.dst == ::1`, []string{"eth.type", "ip6.dst", "ip6.src"}},
		{`ip6.dst == ::ffff:10.0.0.1 || ip6.dst == 2001:db8::/ffff:ffff::`, []string{"eth.type", "ip6.dst"}},
		{`ip6.src == 10.0.0.1`, []string{"eth.type", "ip6.src"}},
		{`ip.proto == 6 && ip.ttl == 64`, []string{"eth.type", "ip.proto", "ip.ttl"}},
		{`tcp.src == 0x50 && udp.dst == 53 && sctp.dst == 9`, []string{"eth.type", "ip.proto", "sctp.dst", "tcp.src", "udp.dst"}},
		{`icmp4.type == 8 && icmp4.code == 0`, []string{"eth.type", "icmp4.code", "icmp4.type", "ip.proto"}},
		{`icmp6.type == {128, 129} && icmp6.code == 0`, []string{"eth.type", "icmp6.code", "icmp6.type", "ip.proto"}},
		{`pkt.mark == 0x10/0x10`, []string{"pkt.mark"}},
		{`pkt.mark == 0/0xff`, []string{"pkt.mark"}},
		{`ct.trk && !ct.inv && (ct.new || ct.est || ct.rel || ct.rpl)`, []string{"ct.est", "ct.inv", "ct.new", "ct.rel", "ct.rpl", "ct.trk"}},
		{`ip4 || ip6 || ip || arp`, []string{"eth.type"}},
		{`tcp || udp || sctp`, []string{"eth.type", "ip.proto"}},
		{`icmp || icmp4 || icmp6`, []string{"eth.type", "ip.proto"}},
		{`eth.bcast || eth.mcast`, []string{"eth.dst", "eth.mcast"}},
		{`ip4.mcast || ip6.mcast`, []string{"eth.dst", "eth.mcast", "eth.type", "ip4.dst", "ip6.dst"}},
		{`!ip4.mcast && !eth.bcast`, []string{"eth.dst", "eth.mcast", "eth.type", "ip4.dst"}},
		{`tcp == 1 && udp != 0`, []string{"eth.type", "ip.proto"}},
		{`tcp.dst != 80 && !(udp.dst == 53)`, []string{"eth.type", "ip.proto", "tcp.dst", "udp.dst"}},
		{`!(inport != "a")`, []string{"inport"}},
		{`!tcp.dst`, []string{"eth.type", "ip.proto", "tcp.dst"}},
		{`tcp.dst < 1024 && tcp.src >= 0x8000 && pkt.mark > 1 && ip4.dst <= 10.0.0.1`, []string{"eth.type", "ip.proto", "ip4.dst", "pkt.mark", "tcp.dst", "tcp.src"}},
		{`1 <= tcp.dst < 1024 && 65535 >= udp.src > 1024`, []string{"eth.type", "ip.proto", "tcp.dst", "udp.src"}},
		{`80 == tcp.dst && "p1" == inport && {1, 2} != pkt.mark`, []string{"eth.type", "inport", "ip.proto", "pkt.mark", "tcp.dst"}},
		{`tcp.dst == {80 443 8080}`, []string{"eth.type", "ip.proto", "tcp.dst"}},
		{`tcp.dst != {80, 443,}`, []string{"eth.type", "ip.proto", "tcp.dst"}},
		{`ip4.src == $as && ip6.dst != {$v6, fd00::1}`, []string{"eth.type", "ip4.src", "ip6.dst"}},
		{`inport == @pg && outport == {@pg2, "p"}`, []string{"inport", "outport"}},
		{"ip4 // a line comment\n&& tcp /* and one */", []string{"eth.type", "ip.proto"}},
		{"\t ip4 \n", []string{"eth.type"}},
		{`eth.src == 10.0.0.1`, []string{"eth.src"}},
		// Subfields, and the fields and functions upstream's rows use.
		{`ip6.dst[120..127] == 0xff && ip6.dst[116] == 1`, []string{"eth.type", "ip6.dst"}},
		{`ip4.dst[24 .. 31] == {10, 11} && !ip4.src[0] && tcp.dst[0..7] < 80`, []string{"eth.type", "ip.proto", "ip4.dst", "ip4.src", "tcp.dst"}},
		{`ip.proto[0..7] == 6 && tcp[0]`, []string{"eth.type", "ip.proto"}},
		{`reg0[3] && xreg4 == 1 && xxreg1[0..31] > 2 && reg9 != 0`, []string{"reg0", "reg9", "xreg4", "xxreg1"}},
		{`ct_mark.blocked == 0 && ct_label.label == 7 && ct_state[5]`, []string{"ct_label", "ct_mark", "ct_state"}},
		{`ct.snat || ct.dnat`, []string{"ct.dnat", "ct.snat", "ct.trk"}},
		{`arp.sha == 0a:58:00:00:00:01 && arp.tha == 00:00:00:00:00:00`, []string{"arp.sha", "arp.tha", "eth.type"}},
		{`nd.sll == 0a:58:00:00:00:01 || nd.tll == 0a:58:00:00:00:02`, []string{"eth.type", "icmp6.code", "icmp6.type", "ip.proto", "ip.ttl", "nd.sll", "nd.tll"}},
		{`is_chassis_resident("cr-rtos-node1") && !is_chassis_resident ( "p" )`, nil},
		{`igmp || mldv1 || mldv2`, []string{"eth.dst", "eth.mcast", "eth.type", "icmp6.type", "ip.proto", "ip4.dst", "ip6.dst", "ip6.src"}},
	}
	for _, tc := range cases {
		e, err := match.Parse(tc.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.expr, err)
			continue
		}
		if got := e.String(); got != strings.TrimSpace(tc.expr) {
			t.Errorf("Parse(%q).String() = %q", tc.expr, got)
		}
		if got := e.Fields(); !reflect.DeepEqual(got, tc.fields) {
			t.Errorf("Parse(%q).Fields() = %q, want %q", tc.expr, got, tc.fields)
		}
	}
}

func TestParseNames(t *testing.T) {
	e, err := match.Parse(`(ip4.src == {$b, $a} && ip4.dst != $a) || inport == {@g, @f}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.AddressSets(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("AddressSets() = %q", got)
	}
	if got := e.PortGroups(); !reflect.DeepEqual(got, []string{"f", "g"}) {
		t.Errorf("PortGroups() = %q", got)
	}
	e.Fields()[0] = "changed"
	if e.Fields()[0] == "changed" {
		t.Error("Fields returns the Expr's own slice")
	}
}

// TestParseErrors checks the column and message of every kind of error.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		expr string
		col  int
		msg  string
	}{
		// Structure.
		{``, 1, `expecting field name, constant or "("`},
		{`ip4 &&`, 7, `expecting field name, constant or "("`},
		{`ip4 tcp`, 5, `expecting "&&", "||" or end of input`},
		{`(ip4`, 5, `expecting ")" to close "(" at column 1`},
		{`ip4)`, 4, `expecting "&&", "||" or end of input`},
		{`ip4 && tcp || udp`, 12, `&& and || must be parenthesized when used together`},
		{`ip4 || (tcp && udp) && arp`, 21, `&& and || must be parenthesized when used together`},
		{`!!ct.trk`, 2, `expecting field name, constant or "("`},
		{`!tcp.dst == 80`, 1, `missing parentheses around operand of "!"`},
		{`tcp.dst = 80`, 9, `"=" is not a relational operator (did you mean "=="?)`},
		{`inport`, 7, `expecting relational operator after string field inport`},
		{`tcp.dst`, 1, `explicit "!= 0" is required to test multibit field tcp.dst against 0`},
		{`tcp.dst ==`, 11, `expecting constant`},
		{`0x1`, 4, `expecting relational operator after constant`},
		{`{1}`, 4, `expecting relational operator after constant`},
		{`1 == 2`, 6, `expecting field name`},
		{`1 < tcp.dst > 5`, 13, `a range must read "a < field < b" or "a > field > b" (with "<=" or ">=" allowed for either operator)`},
		// Names.
		{`ip4 && foo == 1`, 8, `unknown field "foo"`},
		{`ip4.dst == 1 && bogus`, 17, `unknown field "bogus"`},
		{`reg10 == 0`, 1, `unknown field "reg10"`},
		{`ct_label.blocked`, 1, `unknown field "ct_label.blocked"`},
		{`$`, 1, `"$" must be followed by a name`},
		{`inport == @1`, 11, `"@" must be followed by a name`},
		// Functions.
		{`chassis_resident("p1")`, 1, `unknown function chassis_resident() (OVN's only function is is_chassis_resident)`},
		{`is_chassis_resident(p1)`, 21, `is_chassis_resident() takes one port name, in quotes`},
		{`is_chassis_resident()`, 21, `is_chassis_resident() takes one port name, in quotes`},
		{`is_chassis_resident("p1", "p2")`, 25, `expecting ")" to close is_chassis_resident( at column 1`},
		{`is_chassis_resident("p1") == 1`, 27, `expecting "&&", "||" or end of input`},
		{`!!is_chassis_resident("p1")`, 2, `expecting field name, constant or "("`},
		// Subfields.
		{`ip4.src[31..24] == 10`, 8, `invalid bit range 31 to 24: the lower bit comes first`},
		{`ip4.src[32] == 1`, 8, `cannot select bits 32 to 32 of 32-bit field ip4.src`},
		{`tcp[1]`, 4, `cannot select bits 1 to 1 of 1-bit predicate tcp`},
		{`ip.proto[0..3] == 6`, 9, `cannot select a subfield of nominal field ip.proto`},
		{`inport[0] == 1`, 7, `cannot select a subfield of string field inport`},
		{`ip4.src[0x18..31] == 1`, 9, `expecting a bit number (a decimal integer)`},
		{`ip4.src[24..] == 1`, 13, `expecting a bit number (a decimal integer)`},
		{`ip4.src[24..31 == 1`, 16, `expecting "]" to close "[" at column 8`},
		{`ip4.src[0..1]`, 1, `explicit "!= 0" is required to test multibit field ip4.src against 0`},
		{`ip4.src[24..31] == 0x1ffffffff`, 20, `33-bit constant "0x1ffffffff" does not fit 32-bit field ip4.src`},
		{`ct_mark.blocked == 2`, 20, `2-bit constant "2" does not fit 1-bit field ct_mark.blocked`},
		{`ip4.src[24..31] < 0x10/0xf0`, 17, `only == and != may be used with masked constants`},
		{`ip4.src. == 1`, 1, `unknown field "ip4.src."`},
		{`ip4.src[24.31] == 1`, 9, `invalid IPv4 address "24.31"`},
		// Constants.
		{`ip4.src == 10.0.0.300`, 12, `invalid IPv4 address "10.0.0.300"`},
		{`ip6.src == fe80:::1`, 12, `invalid IPv6 address "fe80:::1"`},
		{`eth.src == 0a:58:0a:f4:00:5`, 12, `invalid MAC address "0a:58:0a:f4:00:5"`},
		{`tcp.dst == 1foo`, 12, `invalid numeric constant "1foo"`},
		{`tcp.dst == 080`, 12, `decimal constant "080" must not have leading zeros`},
		{`pkt.mark == 18446744073709551616`, 13, `decimal constant "18446744073709551616" does not fit in 64 bits`},
		{`tcp.dst == 0x`, 12, `hex digits expected after "0x"`},
		{`tcp.dst == 0xfg`, 12, `invalid hexadecimal constant "0xfg"`},
		{`pkt.mark == 0x1` + strings.Repeat("0", 32), 13, `hexadecimal constant "0x1` + strings.Repeat("0", 32) + `" is wider than 128 bits`},
		{`ip4.src == 10.0.0.0/33`, 21, `prefix length 33 is longer than an IPv4 address`},
		{`ip6.src == ::/129`, 15, `prefix length 129 is longer than an IPv6 address`},
		{`ip4.src == 10.0.0.0/`, 20, `expecting a mask or prefix length after "10.0.0.0/"`},
		{`tcp.dst == 0x10/16`, 12, `value and mask have incompatible formats in "0x10/16"`},
		{`inport == "abc`, 11, `unterminated quoted string`},
		{`inport == "a\qb"`, 13, `invalid escape "\\q" in string`},
		{`inport == "\u12"`, 12, `"\u" must be followed by 4 hex digits`},
		{`inport == "\ud800"`, 12, `invalid UTF-16 surrogate pair in string`},
		{`inport == "\u0000"`, 12, `"\u0000" is not allowed in a string`},
		{`tcp.dst == {}`, 13, `empty value set`},
		{`tcp.dst == {80,`, 16, `expecting "}" to close the value set`},
		{`tcp.dst == {80, "x"}`, 17, `a value set may not mix strings and integers`},
		// Comments and stray characters.
		{`ip4 /* unterminated`, 5, `"/*" without matching "*/" on the same line`},
		{"ip4 /* two\nlines */", 5, `"/*" without matching "*/" on the same line`},
		{`ip4 / tcp`, 5, `"/" is only valid in a comment ("//" or "/*") or after a constant as its mask`},
		// A // comment must end with a newline (see TestAgainstOVNTrace): northd puts ACL
		// and NAT matches inside parentheses, which one running to the end would hide.
		{`ip4 && tcp.dst == 80 // trailing`, 22, lineCommentMsg},
		{`ip4 //`, 5, lineCommentMsg},
		{`// all comment`, 1, lineCommentMsg},
		{"ip4 // a carriage return ends no comment\r", 5, lineCommentMsg},
		{"ip4 // closed\n// not closed", 15, lineCommentMsg},
		{`inport == "p1" /* fine */ // not fine`, 27, lineCommentMsg},
		// An error before the comment is met first.
		{`ip4.dst == 10.0.0.300 // comment`, 12, `invalid IPv4 address "10.0.0.300"`},
		{`ip4 & tcp`, 5, `"&" is only valid as part of "&&"`},
		{`ip4 | tcp`, 5, `"|" is only valid as part of "||"`},
		{`ip4 ; tcp`, 5, `unexpected character ";"`},
		{"ip4 \x01", 5, `unexpected byte 0x01`},
		// Types and widths.
		{`inport == 10.0.0.1`, 11, `string field inport cannot be compared with IPv4 address "10.0.0.1"`},
		{`ip4.src == "x"`, 12, `integer field ip4.src cannot be compared with string "x"`},
		{`inport == $as`, 11, `string field inport cannot be compared with address set $as`},
		{`ip4.src == @pg`, 12, `integer field ip4.src cannot be compared with port group @pg`},
		{`ip4.dst == fe80::1`, 12, `IPv6 address "fe80::1" does not fit 32-bit field ip4.dst`},
		{`ip4.dst == {10.0.0.1, 00:00:00:00:00:01}`, 23, `MAC address "00:00:00:00:00:01" does not fit 32-bit field ip4.dst`},
		{`tcp.dst == 65536`, 12, `17-bit constant "65536" does not fit 16-bit field tcp.dst`},
		{`ip.ttl == 10.0.0.0/8`, 11, `IPv4 address "10.0.0.0/8" does not fit 8-bit field ip.ttl`},
		{`ct.trk == 2`, 11, `2-bit constant "2" does not fit 1-bit field ct.trk`},
		{`tcp == 2`, 8, `2-bit constant "2" does not fit 1-bit predicate tcp`},
		// Operators.
		{`tcp.dst < {80}`, 9, `only == and != may be used with value sets`},
		{`tcp.dst < 0x10/0xf0`, 9, `only == and != may be used with masked constants`},
		{`ip.ttl < 5`, 8, `only == and != may be used with nominal field ip.ttl`},
		{`eth.bcast < 1`, 11, `only == and != may be used with boolean predicate eth.bcast`},
		{`ip.proto != 6`, 10, `nominal field ip.proto may only be tested for equality, taking enclosing "!" into account`},
		{`!(ip.proto == 6)`, 12, `nominal field ip.proto may only be tested for equality, taking enclosing "!" into account`},
		{`inport != "p1"`, 8, `nominal field inport may only be tested for equality, taking enclosing "!" into account`},
		{`!tcp`, 2, `nominal predicate tcp may only be tested positively (tcp or tcp == 1, not !tcp or tcp == 0)`},
		{`ip4 && tcp == 0`, 8, `nominal predicate tcp may only be tested positively (tcp or tcp == 1, not !tcp or tcp == 0)`},
		{`!(ip6 || udp)`, 3, `nominal predicate ip6 may only be tested positively (ip6 or ip6 == 1, not !ip6 or ip6 == 0)`},
	}
	for _, tc := range cases {
		e, err := match.Parse(tc.expr)
		var se *match.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, %v; want a *SyntaxError", tc.expr, e, err)
			continue
		}
		if se.Input != tc.expr || se.Col != tc.col || se.Msg != tc.msg {
			t.Errorf("Parse(%q):\n got column %d: %s (input %q)\nwant column %d: %s", tc.expr, se.Col, se.Msg, se.Input, tc.col, tc.msg)
		}
		// OVN rejects all of these too: none is merely unsupported here.
		if errors.Is(err, match.ErrUnsupported) {
			t.Errorf("Parse(%q) says OVN accepts it: %v", tc.expr, err)
		}
	}
}

// TestParseUnsupported lists what OVN accepts and Parse cannot evaluate: it fails with
// ErrUnsupported, so a simulator can tell such a row from one OVN never applies.
func TestParseUnsupported(t *testing.T) {
	cases := []struct {
		expr string
		col  int
		msg  string
	}{
		{`vlan.tci == 0`, 1, `vlan.tci is not supported: a simulated packet has no VLAN tag`},
		{`ip4 && ip.dscp == 46`, 8, `ip.dscp is not supported: a simulated packet has no DSCP or ECN bits`},
		{`flags.loopback`, 1, `flags.loopback is not supported: a simulated packet has no OVN internal flags`},
		{`eth.src == $as`, 12, `address set $as is only supported compared with a whole ip4.src, ip4.dst, ip6.src or ip6.dst`},
		{`ip4.src[0..7] == $as`, 18, `address set $as is only supported compared with a whole ip4.src, ip4.dst, ip6.src or ip6.dst`},
		{`ip4.src < $as`, 9, `only == and != are supported with address sets`},
		{strings.Repeat("(", match.MaxDepth+1) + "ip4" + strings.Repeat(")", match.MaxDepth+1), match.MaxDepth + 1, `parentheses nested more than 64 deep`},
	}
	for _, tc := range cases {
		_, err := match.Parse(tc.expr)
		var se *match.SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, match.ErrUnsupported) || !se.Unsupported {
			t.Errorf("Parse(%q) = %v; want an unsupported *SyntaxError", tc.expr, err)
			continue
		}
		if se.Col != tc.col || se.Msg != tc.msg {
			t.Errorf("Parse(%q):\n got column %d: %s\nwant column %d: %s", tc.expr, se.Col, se.Msg, tc.col, tc.msg)
		}
	}
}

// lineCommentMsg is the error for a // comment that runs to the end of the input.
const lineCommentMsg = `"//" comment must end with a newline: northd wraps ACL and NAT matches in parentheses, and a comment running to the end of the match would hide the closing ")"`

// TestLineComments pins where a // comment may stand: anywhere, if a newline closes it.
// String keeps the newline that closes a final one, so that what it returns parses.
func TestLineComments(t *testing.T) {
	cases := []struct{ expr, str string }{
		{"// first\nip4", "// first\nip4"},
		{"ip4 // middle\n&& tcp.dst == 80", "ip4 // middle\n&& tcp.dst == 80"},
		{"ip4 && tcp.dst == 80 // last\n", "ip4 && tcp.dst == 80 // last\n"},
		{"  ip4 // last\n\n \t", "ip4 // last\n"},
		{"ip4 // last\r\n", "ip4 // last\r\n"},
		{"ip4 // one\n// two\n", "ip4 // one\n// two\n"},
		{`inport == "a//b"`, `inport == "a//b"`},
		{"ip4 /* last */\n", "ip4 /* last */"},
	}
	for _, tc := range cases {
		e, err := match.Parse(tc.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.expr, err)
			continue
		}
		if got := e.String(); got != tc.str {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.expr, got, tc.str)
		}
		if _, err := match.Parse(e.String()); err != nil {
			t.Errorf("Parse(%q).String() does not parse: %v", tc.expr, err)
		}
		// Wrapped as northd wraps an ACL's match, it must still parse.
		if _, err := match.Parse("((" + tc.expr + "))"); err != nil {
			t.Errorf("%q wrapped as northd wraps an ACL's match: %v", tc.expr, err)
		}
	}
}

func TestSyntaxErrorString(t *testing.T) {
	_, err := match.Parse(`ip4.src == 10.0.0.300`)
	if got, want := err.Error(), `column 12: invalid IPv4 address "10.0.0.300"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestDepthLimit(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("(", n) + "ip4" + strings.Repeat(")", n) }
	if _, err := match.Parse(nest(match.MaxDepth)); err != nil {
		t.Fatalf("%d levels: %v", match.MaxDepth, err)
	}
	var se *match.SyntaxError
	_, err := match.Parse(nest(match.MaxDepth + 1))
	if !errors.As(err, &se) || se.Col != match.MaxDepth+1 || se.Msg != "parentheses nested more than 64 deep" {
		t.Fatalf("%d levels: %v", match.MaxDepth+1, err)
	}
	// Deep negation is deep nesting too; a very long flat chain is not.
	if _, err := match.Parse(strings.Repeat("!(", 100000) + "ct.trk" + strings.Repeat(")", 100000)); err == nil {
		t.Error("100000 nested negations parsed")
	}
	if _, err := match.Parse(strings.Repeat("ct.trk && ", 100000) + "ct.est"); err != nil {
		t.Errorf("a chain of 100001 terms: %v", err)
	}
}
