package match_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn/match"
	"github.com/ovnk/ovnk/test/testenv"
)

// tracePackets are the packets of the differential tests, each sent from p1 into a
// switch with two ports (both with "unknown" addresses, so every packet also reaches p2
// unless an ACL drops it).
var tracePackets = map[string]match.Packet{
	"tcp4":   tcp4Trace,
	"marked": with(tcp4Trace, func(p *match.Packet) { p.PktMark = 0x30 }),
	"regs": with(tcp4Trace, func(p *match.Packet) {
		p.Reg = [10]uint32{0x10, 0x12345678, 5, 7, 1, 2, 3, 4, 9, 8}
	}),
	// ct_mark: natted (bit 1), allow_established (6), ecmp_reply_port 3 (bits 16..31).
	// ct_label: label 7 (bits 96..127), ecmp_reply_eth 00:00:00:00:00:0a (bits 32..79).
	"ctmark": with(tcp4Trace, func(p *match.Packet) {
		p.CTMark = 0x30042
		p.CTLabel[3], p.CTLabel[11] = 7, 0x0a
	}),
	"tracked": with(tcp4Trace, func(p *match.Packet) { p.CT = match.CTState{Trk: true, Est: true, Rpl: true} }),
	"dnatted": with(tcp4Trace, func(p *match.Packet) { p.CT = match.CTState{Trk: true, New: true, DNAT: true} }),
	"udp4": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x0800,
		IPSrc: addr("10.0.0.1"), IPDst: addr("10.1.2.3"), TTL: 1, Proto: 17, L4Src: 5353, L4Dst: 53},
	"sctp4": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x0800,
		IPSrc: addr("10.0.0.1"), IPDst: addr("10.1.2.3"), TTL: 64, Proto: 132, L4Src: 7, L4Dst: 9},
	"icmp4": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x0800,
		IPSrc: addr("10.0.0.5"), IPDst: addr("192.168.1.1"), TTL: 64, Proto: 1, ICMPType: 8},
	"mcast4": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("01:00:5e:00:00:fb"), EthType: 0x0800,
		IPSrc: addr("10.0.0.1"), IPDst: addr("224.0.0.251"), TTL: 1, Proto: 17, L4Src: 5353, L4Dst: 5353},
	"mcast4uc": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x0800,
		IPSrc: addr("10.0.0.1"), IPDst: addr("239.1.1.1"), TTL: 1, Proto: 17, L4Src: 5353, L4Dst: 5353},
	"mcsrc": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x0800,
		IPSrc: addr("239.1.1.1"), IPDst: addr("10.1.2.3"), TTL: 64, Proto: 17, L4Src: 5353, L4Dst: 53},
	"igmp": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("01:00:5e:00:00:16"), EthType: 0x0800,
		IPSrc: addr("10.0.0.1"), IPDst: addr("224.0.0.22"), TTL: 1, Proto: 2},
	"tcp6": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x86dd,
		IPSrc: addr("fd00::1"), IPDst: addr("fd00::2"), TTL: 64, Proto: 6, L4Src: 40000, L4Dst: 443},
	"int6": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x86dd,
		IPSrc: addr("::a00:1"), IPDst: addr("fd00::2"), TTL: 64, Proto: 6, L4Src: 40000, L4Dst: 443},
	"icmp6": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x86dd,
		IPSrc: addr("2001:db8::1"), IPDst: addr("fd00::5"), TTL: 64, Proto: 58, ICMPType: 128},
	"mcast6": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("33:33:00:00:00:01"), EthType: 0x86dd,
		IPSrc: addr("fe80::1"), IPDst: addr("ff02::1"), TTL: 1, Proto: 17, L4Src: 546, L4Dst: 547},
	"mcast6rsvd": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("33:33:00:00:00:00"), EthType: 0x86dd,
		IPSrc: addr("fe80::1"), IPDst: addr("ff02::"), TTL: 1, Proto: 17, L4Src: 5000, L4Dst: 5000},
	// A dynamic group (its flags' T bit set), what upstream's multicast ACLs test with
	// ip6.dst[116] == 1.
	"mcast6dyn": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("33:33:00:00:12:34"), EthType: 0x86dd,
		IPSrc: addr("fd00::1"), IPDst: addr("ff12::1234"), TTL: 1, Proto: 17, L4Src: 5000, L4Dst: 5000},
	"arp": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("ff:ff:ff:ff:ff:ff"), EthType: 0x0806,
		ArpOp: 1, IPSrc: addr("10.0.0.1"), IPDst: addr("10.0.0.2"), SHA: macOf("00:00:00:00:00:01")},
	"nd": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("33:33:ff:00:00:05"), EthType: 0x86dd,
		IPSrc: addr("fe80::1"), IPDst: addr("ff02::1:ff00:5"), TTL: 255, Proto: 58, ICMPType: 135, NDTarget: addr("fd00::5"),
		SHA: macOf("00:00:00:00:00:01")},
	"na": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:05"), EthDst: macOf("00:00:00:00:00:01"), EthType: 0x86dd,
		IPSrc: addr("fe80::5"), IPDst: addr("fe80::1"), TTL: 255, Proto: 58, ICMPType: 136, NDTarget: addr("fd00::5"),
		THA: macOf("00:00:00:00:00:05")},
	"rs": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("33:33:00:00:00:02"), EthType: 0x86dd,
		IPSrc: addr("fe80::1"), IPDst: addr("ff02::2"), TTL: 255, Proto: 58, ICMPType: 133},
	"mld1": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("33:33:00:01:00:03"), EthType: 0x86dd,
		IPSrc: addr("fe80::1"), IPDst: addr("ff02::1:3"), TTL: 1, Proto: 58, ICMPType: 131},
	"mld2": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("33:33:00:00:00:16"), EthType: 0x86dd,
		IPSrc: addr("fe80::1"), IPDst: addr("ff02::16"), TTL: 1, Proto: 58, ICMPType: 143},
	"mld2uc": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x86dd,
		IPSrc: addr("fe80::1"), IPDst: addr("ff02::16"), TTL: 1, Proto: 58, ICMPType: 143},
	"other": {InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x1234},
}

var tcp4Trace = match.Packet{InPort: "p1", EthSrc: macOf("00:00:00:00:00:01"), EthDst: macOf("00:00:00:00:00:02"), EthType: 0x0800,
	IPSrc: addr("10.0.0.1"), IPDst: addr("10.1.2.3"), TTL: 64, Proto: 6, L4Src: 12345, L4Dst: 80}

// traceChassis is the chassis the differential tests process packets on: both ports
// are bound to it, as ovn-trace, which simulates no chassis, takes every existing port
// to be resident.
const traceChassis = "here"

// traceCases pair an ACL match with a packet. invalid marks matches OVN refuses to
// parse, so ovn-trace must report the flow as unparsable and Parse must fail too;
// unsupported marks matches OVN takes and Parse reports as not supported, so ovn-trace
// must not report the flow and Parse must fail with ErrUnsupported.
var traceCases = []struct {
	expr, packet         string
	invalid, unsupported bool
}{
	{expr: "1", packet: "tcp4"},
	{expr: "0", packet: "tcp4"},
	{expr: "ip4", packet: "tcp4"},
	{expr: "ip4", packet: "tcp6"},
	{expr: "ip6", packet: "tcp6"},
	{expr: "ip", packet: "arp"},
	{expr: "arp.tpa == 10.0.0.2", packet: "arp"},
	{expr: "arp.tpa == 10.0.0.3", packet: "arp"},
	{expr: "arp.spa == 10.0.0.0/24 && arp.op == 1", packet: "arp"},
	{expr: "arp.op == 2", packet: "arp"},
	{expr: "arp.op != 1", packet: "arp", invalid: true},
	{expr: "arp.tpa == 10.0.0.2", packet: "tcp4"},
	// Neighbour discovery passes every ACL (northd allows nd at priority 65532 of
	// ls_*_acl_eval), so only matches that miss an ND packet are observable here.
	{expr: "nd_na", packet: "nd"},
	{expr: "nd && nd.target == fd00::6", packet: "nd"},
	{expr: "nd", packet: "icmp6"},
	{expr: "(( arp && arp.tpa == 10.0.0.2 ) || ( nd && nd.target == fd00::5 ))", packet: "arp"},
	{expr: "(( arp && arp.tpa == 10.0.0.9 ) || ( nd && nd.target == fd00::6 ))", packet: "nd"},
	{expr: "ip", packet: "mcast6"},
	{expr: "arp", packet: "arp"},
	{expr: "tcp", packet: "udp4"},
	{expr: "tcp && tcp.dst == 443", packet: "tcp6"},
	{expr: "ip4 && ip4.src == 10.0.0.1 && ip4.dst == 10.1.2.3 && tcp.src == 12345", packet: "tcp4"},
	{expr: "udp && udp.dst == 53", packet: "udp4"},
	{expr: "sctp.dst == 9", packet: "sctp4"},
	{expr: "icmp", packet: "icmp6"},
	{expr: "icmp4", packet: "icmp6"},
	{expr: "icmp4.type == 8 && ip4.dst == 192.168.1.0/24", packet: "icmp4"},
	{expr: "icmp6.type == 128 && icmp6.code == 0", packet: "icmp6"},
	{expr: "eth.type == 0x1234", packet: "other"},
	// Prerequisites survive negation.
	{expr: "tcp.dst != 80", packet: "udp4"},
	{expr: "tcp.dst != 443", packet: "tcp4"},
	{expr: "!(tcp.dst == 80)", packet: "udp4"},
	{expr: "!tcp.dst", packet: "tcp4"},
	{expr: "(ip4 || ip6) && (tcp || udp.dst != 53)", packet: "udp4"},
	{expr: "ct.trk", packet: "tcp4"},
	{expr: "!ct.trk", packet: "tcp4"},
	{expr: "!ct.est", packet: "tcp4"},
	// Nominal symbols: equality only, predicates only positively.
	{expr: "!tcp", packet: "udp4", invalid: true},
	{expr: "ip.proto != 6", packet: "udp4", invalid: true},
	{expr: `inport != "p2"`, packet: "tcp4", invalid: true},
	{expr: "ip.ttl < 5", packet: "udp4", invalid: true},
	{expr: `!(inport != "p1")`, packet: "tcp4"},
	{expr: "ip.ttl == 64", packet: "tcp4"},
	// Port groups and address sets.
	{expr: "inport == @pg1", packet: "tcp4"},
	{expr: "inport == @pg2", packet: "tcp4"},
	{expr: `inport == {@pg2, "p1"}`, packet: "tcp4"},
	{expr: "ip4.src == $as4", packet: "tcp4"},
	{expr: "ip4.src == $as4", packet: "icmp4"},
	{expr: "ip4.dst == $as4", packet: "tcp4"},
	{expr: "ip4.src != $as4", packet: "icmp4"},
	{expr: "ip4.src != $as4", packet: "tcp6"},
	{expr: "ip4.src != $asempty", packet: "tcp6"},
	{expr: "ip4.src == $asempty", packet: "tcp4"},
	{expr: "ip6.dst == $as6", packet: "tcp6"},
	{expr: "ip6.src == $as4", packet: "tcp6"},
	{expr: "ip4.src == {10.0.0.5, $as4}", packet: "icmp4"},
	// Masks and constants.
	{expr: "ip4.dst == 10.1.0.0/16", packet: "tcp4"},
	{expr: "ip4.dst == 10.1.0.0/255.255.0.0", packet: "tcp4"},
	{expr: "ip4.dst == 0.1.0.0/0.255.0.0", packet: "tcp4"},
	{expr: "ip4.src == 10.0.0.1/8", packet: "icmp4"},
	{expr: "eth.src == 00:00:00:00:00:01", packet: "tcp4"},
	{expr: "eth.dst == 00:00:00:00:00:00/01:00:00:00:00:00", packet: "tcp4"},
	{expr: "pkt.mark == 0x10/0x10", packet: "marked"},
	{expr: "pkt.mark == 0", packet: "tcp4"},
	{expr: "ip6.src == fd00::1", packet: "tcp6"},
	{expr: "ip6.dst == fd00::/64", packet: "tcp6"},
	{expr: "ip6.src == 10.0.0.1", packet: "tcp6"},
	{expr: "ip6.src == 10.0.0.1", packet: "int6"},
	{expr: "ip6.src == 10.0.0.0/8", packet: "int6"},
	{expr: "ip4.dst == fe80::1", packet: "tcp4", invalid: true},
	{expr: "tcp.dst == 0x10000", packet: "tcp4", invalid: true},
	// Multicast and broadcast predicates.
	{expr: "eth.mcast", packet: "mcast4"},
	{expr: "!eth.mcast", packet: "tcp4"},
	{expr: "eth.bcast", packet: "arp"},
	{expr: "!eth.bcast", packet: "arp"},
	{expr: "ip4.mcast", packet: "mcast4"},
	{expr: "ip4.mcast", packet: "mcast6"},
	{expr: "!ip4.mcast", packet: "tcp6"},
	{expr: "!ip4.mcast", packet: "mcast6"},
	{expr: "ip4.mcast", packet: "mcast4uc"},
	{expr: "!ip4.mcast", packet: "mcast4uc"},
	{expr: "ip4.dst == 224.0.0.0/4", packet: "mcast4uc"},
	{expr: "eth.bcast", packet: "mcast4"},
	{expr: "ip6.mcast", packet: "mcast6"},
	{expr: "ip6.mcast", packet: "tcp6"},
	// Relational operators, sets, constants first.
	{expr: "tcp.dst >= 80 && tcp.dst < 90", packet: "tcp4"},
	{expr: "1024 <= tcp.src <= 65535", packet: "tcp4"},
	{expr: "tcp.src > 20000", packet: "tcp4"},
	{expr: "ip4.dst < 10.1.2.4", packet: "tcp4"},
	{expr: "ip4.dst >= 10.1.2.4", packet: "tcp4"},
	{expr: "ip6.dst > fd00::1", packet: "tcp6"},
	{expr: "eth.src < 00:00:00:00:00:02", packet: "tcp4"},
	{expr: "tcp.dst == {22, 80, 443}", packet: "tcp4"},
	{expr: "tcp.dst != {22, 80}", packet: "tcp4"},
	{expr: "tcp.dst != {22 443}", packet: "tcp4"},
	{expr: "80 == tcp.dst", packet: "tcp4"},
	{expr: `"p1" == inport`, packet: "tcp4"},
	// Comments. OVN's lexer takes a // comment to the end of the input, but northd puts
	// an ACL's match in its flow as "((match))", on one line, so a // comment must be
	// closed by a newline or it hides the ")" and the flow fails to parse: the ACL then
	// never matches. /* */ comments may stand anywhere on one line.
	{expr: "ip4 /* c */ && tcp.dst == 80 // trailing", packet: "tcp4", invalid: true},
	{expr: "ip4 && tcp.dst == 80 // trailing", packet: "tcp4", invalid: true},
	{expr: "ip4 && tcp.dst == 80 // a carriage return closes nothing\r", packet: "tcp4", invalid: true},
	{expr: "ip4 && tcp.dst == 80 // closed\n// not closed", packet: "tcp4", invalid: true},
	{expr: "ip4 && tcp.dst == 80 // trailing\n", packet: "tcp4"},
	{expr: "// first\nip4 && tcp.dst == 80", packet: "tcp4"},
	{expr: "ip4 // middle\n&& tcp.dst == 80", packet: "tcp4"},
	{expr: "tcp.dst == 443 // trailing\n", packet: "tcp4"},
	{expr: "ip4 /* c */ && tcp.dst == 80", packet: "tcp4"},
	{expr: "/* first */ ip4 && tcp.dst == 80", packet: "tcp4"},
	{expr: "ip4 && tcp.dst == 80 /* last */", packet: "tcp4"},
	{expr: "ip4 && tcp.dst == 80 /* two\nlines */", packet: "tcp4", invalid: true},
	// Syntax.
	{expr: `inport == "p1" && (ip4.dst == 10.1.2.3 || ip6.dst == fd00::2)`, packet: "tcp6"},
	{expr: `outport == "p2"`, packet: "tcp4"},
	{expr: `outport == ""`, packet: "tcp4"},
	{expr: "ip4 && tcp || udp", packet: "tcp4", invalid: true},
	{expr: "!!ct.trk", packet: "tcp4", invalid: true},
	// Subfields: bit 0 is the lowest; a constant is cut to the subfield's width (0x10a
	// is 0x0a in 8 bits), after being checked against the whole field's.
	{expr: "ip4.dst[24..31] == 10", packet: "tcp4"},
	{expr: "ip4.dst[24..31] == 11", packet: "tcp4"},
	{expr: "ip4.dst[24..31] == 0x10a", packet: "tcp4"},
	{expr: "ip4.dst[24..31] == 10.0.0.10", packet: "tcp4"},
	{expr: "ip4.dst[24 .. 31] == 10", packet: "tcp4"},
	{expr: "ip4.dst[0..7] == 3 && ip4.dst[0] && ip4.dst[1]", packet: "tcp4"},
	{expr: "ip4.dst[2]", packet: "tcp4"},
	{expr: "!ip4.dst[2]", packet: "tcp4"},
	{expr: "!ip4.dst[0..1]", packet: "tcp4"},
	{expr: "ip4.dst[24..31] < 11", packet: "tcp4"},
	{expr: "ip4.dst[24..31] > 10", packet: "tcp4"},
	{expr: "ip4.dst[8..15] == 0x2/0x0f", packet: "tcp4"},
	{expr: "ip4.dst[1..3] == 1/0", packet: "tcp4"},
	{expr: "ip4.dst[16..23] == {1, 5}", packet: "tcp4"},
	{expr: "ip4.dst[16..23] != {1, 5}", packet: "tcp4"},
	{expr: "tcp.dst[0..7] == 80 && tcp.dst[8..15] == 0", packet: "tcp4"},
	{expr: "tcp.dst[4..6] < 5", packet: "tcp4"},
	{expr: "tcp.dst[4..6] <= 5", packet: "tcp4"},
	{expr: "3 < tcp.dst[4..6] < 6", packet: "tcp4"},
	{expr: "ip.proto[0..7] == 6", packet: "tcp4"},
	{expr: "tcp[0]", packet: "tcp4"},
	{expr: "eth.src[0..7] == 1", packet: "tcp4"},
	{expr: "ip6.dst[0..31] == 10.1.2.3", packet: "tcp4"},
	{expr: "ip4.dst[0..31] == $as4", packet: "tcp4"},
	{expr: "ip4.dst[31..24] == 10", packet: "tcp4", invalid: true},
	{expr: "ip4.dst[32] == 1", packet: "tcp4", invalid: true},
	{expr: "ip4.dst[0x18..31] == 10", packet: "tcp4", invalid: true},
	{expr: "ip4.dst[0..1]", packet: "tcp4", invalid: true},
	{expr: "ip.proto[0..3] == 6", packet: "tcp4", invalid: true},
	{expr: `inport[0] == 1`, packet: "tcp4", invalid: true},
	// Upstream's multicast ACLs: IPv6 dynamic groups by subfield, IGMP, MLD.
	{expr: "(ip4.mcast || mldv1 || mldv2 || (ip6.dst[120..127] == 0xff && ip6.dst[116] == 1))", packet: "mcast4"},
	{expr: "(ip4.mcast || mldv1 || mldv2 || (ip6.dst[120..127] == 0xff && ip6.dst[116] == 1))", packet: "mcast6dyn"},
	{expr: "(ip4.mcast || mldv1 || mldv2 || (ip6.dst[120..127] == 0xff && ip6.dst[116] == 1))", packet: "mcast6"},
	{expr: "(ip4.mcast || mldv1 || mldv2 || (ip6.dst[120..127] == 0xff && ip6.dst[116] == 1))", packet: "tcp4"},
	{expr: "(igmp || (ip4.src == $as4 && ip4.mcast))", packet: "igmp"},
	{expr: "(igmp || (ip4.src == $as4 && ip4.mcast))", packet: "mcast4"},
	{expr: "(igmp || (ip4.src == $as4 && ip4.mcast))", packet: "mcast4uc"},
	{expr: "igmp", packet: "udp4"},
	{expr: "ip4.src_mcast", packet: "mcsrc"},
	{expr: "!ip4.src_mcast", packet: "tcp4"},
	{expr: "eth.mcastv6 && ip6.mcast_all_nodes", packet: "mcast6"},
	{expr: "ip6.mcast_flood", packet: "mcast6"},
	{expr: "ip6.mcast_flood", packet: "mcast6dyn"},
	{expr: "!ip6.mcast_flood", packet: "mcast6dyn"},
	{expr: "!igmp", packet: "udp4", invalid: true},
	// ARP's hardware addresses.
	{expr: "arp.sha == 00:00:00:00:00:01 && arp.tha == 00:00:00:00:00:00", packet: "arp"},
	{expr: "arp.tha == ff:ff:ff:ff:ff:ff", packet: "arp"},
	{expr: "arp.sha == 00:00:00:00:00:00/ff:ff:ff:00:00:00", packet: "arp"},
	{expr: "arp.sha == 00:00:00:00:00:01", packet: "tcp4"},
	// Registers, in their three widths.
	{expr: "reg1 == 0x12345678 && reg8 == 9 && reg9 == 8", packet: "regs"},
	{expr: "xreg0 == 0x0000001012345678", packet: "regs"},
	{expr: "xreg1 == 0x0000000500000007 && xreg4 == 0x0000000900000008", packet: "regs"},
	{expr: "xxreg1 == 0x00000001000000020000000300000004", packet: "regs"},
	{expr: "xxreg0[64..95] == 0x12345678 && reg0[4]", packet: "regs"},
	{expr: "reg2[0..7] > 4", packet: "regs"},
	{expr: "reg9 < 8", packet: "regs"},
	{expr: "reg1 == 0", packet: "tcp4"},
	{expr: "reg1 != 0", packet: "tcp4"},
	{expr: "reg10 == 0", packet: "tcp4", invalid: true},
	{expr: "xreg5 == 0", packet: "tcp4", invalid: true},
	{expr: "xxreg2 == 0", packet: "tcp4", invalid: true},
	// The connection's mark and label, and its state as one field.
	{expr: "ct_mark.natted && ct_mark.allow_established", packet: "ctmark"},
	{expr: "ct_mark.blocked", packet: "ctmark"},
	{expr: "!ct_mark.blocked", packet: "tcp4"},
	{expr: "ct_mark.ecmp_reply_port == 3 && ct_mark.obs_collector_id == 3", packet: "ctmark"},
	{expr: "ct_mark == 0x30042", packet: "ctmark"},
	{expr: "ct_mark.obs_stage != 0", packet: "ctmark"},
	{expr: "ct_label.label == 7 && ct_label[96..127] == 7", packet: "ctmark"},
	{expr: "ct_label.ecmp_reply_eth == 00:00:00:00:00:0a && ct_label.obs_unused != 0", packet: "ctmark"},
	{expr: "ct_label.obs_point_id == 6", packet: "ctmark"},
	{expr: "ct_mark.blocked == 2", packet: "ctmark", invalid: true},
	{expr: "ct_label.blocked", packet: "ctmark", invalid: true},
	{expr: "ct_state == 0x2a && ct.rpl && ct_state[5]", packet: "tracked"},
	{expr: "ct.snat || ct.dnat", packet: "tracked"},
	{expr: "ct.est && !ct.new", packet: "tracked"},
	// is_chassis_resident(): ovn-trace takes every existing port to be resident.
	{expr: `is_chassis_resident("p1")`, packet: "tcp4"},
	{expr: `is_chassis_resident ("p2") && tcp`, packet: "tcp4"},
	{expr: `is_chassis_resident("nope")`, packet: "tcp4"},
	{expr: `!is_chassis_resident("nope")`, packet: "tcp4"},
	{expr: `!is_chassis_resident("p2")`, packet: "tcp4"},
	{expr: `ip6 && is_chassis_resident("p2")`, packet: "tcp4"},
	{expr: `is_chassis_resident(p1)`, packet: "tcp4", invalid: true},
	{expr: `is_chassis_resident("p1") == 1`, packet: "tcp4", invalid: true},
	{expr: `is_chassis_resident("p1", "p2")`, packet: "tcp4", invalid: true},
	{expr: `is_chassis_resident()`, packet: "tcp4", invalid: true},
	{expr: `!!is_chassis_resident("p1")`, packet: "tcp4", invalid: true},
	{expr: `chassis_resident("p1")`, packet: "tcp4", invalid: true},
	// OVN's symbols and forms a simulated packet has nothing for: OVN takes them, Parse
	// says they are not supported.
	{expr: "vlan.tci == 0", packet: "tcp4", unsupported: true},
	{expr: "vlan.present", packet: "tcp4", unsupported: true},
	{expr: "ip.dscp == 0 && ip.ecn == 0", packet: "tcp4", unsupported: true},
	{expr: "ip6.label == 0", packet: "tcp6", unsupported: true},
	{expr: "ip.is_frag || ip.frag == 1", packet: "tcp4", unsupported: true},
	{expr: "tcp.flags == 0x2", packet: "tcp4", unsupported: true},
	{expr: "rarp && rarp.op == 1", packet: "tcp4", unsupported: true},
	{expr: "flags.loopback == 0 && flags.unsnat_new == 0", packet: "tcp4", unsupported: true},
	{expr: "reg0 == $as4", packet: "tcp4", unsupported: true},
	{expr: strings.Repeat("(", match.MaxDepth+1) + "ip4" + strings.Repeat(")", match.MaxDepth+1), packet: "tcp4", unsupported: true},
}

// TestAgainstOVNTrace compares Eval with real OVN: for each case, a from-lport ACL whose
// match is the expression drops packets in a logical switch, and ovn-trace says whether
// the packet was dropped. Every packet is first traced with no ACL matching, to show it
// would otherwise reach p2.
func TestAgainstOVNTrace(t *testing.T) {
	nb := testenv.StartNB(t)
	northd := testenv.StartNorthd(t, nb)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nbctl := func(args ...string) string {
		t.Helper()
		out, err := nb.NBCtl(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	nbctl("ls-add", "sw")
	for _, p := range []string{"p1", "p2"} {
		nbctl("lsp-add", "sw", p)
		nbctl("lsp-set-addresses", p, "unknown")
	}
	sets := traceSets{
		addrSets: map[string][]netip.Prefix{
			"as4":     {netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("10.1.0.0/16")},
			"as6":     {netip.MustParsePrefix("fd00::/64")},
			"asempty": nil,
		},
		portGroups: map[string][]string{"pg1": {"p1"}, "pg2": {"p2"}},
		bound:      map[string]string{"p1": traceChassis, "p2": traceChassis},
	}
	for name, members := range sets.addrSets {
		var quoted []string
		for _, m := range members {
			quoted = append(quoted, fmt.Sprintf("%q", m.String()))
		}
		args := []string{"create", "Address_Set", "name=" + name}
		if len(quoted) > 0 {
			args = append(args, "addresses="+strings.Join(quoted, ","))
		}
		nbctl(args...)
	}
	for name, ports := range sets.portGroups {
		nbctl(append([]string{"pg-add", name}, ports...)...)
	}
	nbctl("acl-add", "sw", "from-lport", "1000", "0", "drop")
	acl := nbctl("--bare", "--columns=_uuid", "list", "ACL")
	setMatch := func(expr string) {
		t.Helper()
		quoted, _ := json.Marshal(expr)
		nbctl("set", "ACL", acl, "match="+string(quoted))
	}

	for name, p := range tracePackets {
		res, err := northd.Trace(ctx, "sw", microflow(p))
		if err != nil {
			t.Fatal(err)
		}
		if res.Dropped {
			t.Fatalf("packet %s is dropped with no ACL matching, so it cannot test one:\n%s", name, res.Output)
		}
	}

	drops := 0
	for _, tc := range traceCases {
		p := tracePackets[tc.packet]
		p.Chassis = traceChassis
		setMatch(tc.expr)
		res, err := northd.Trace(ctx, "sw", microflow(p))
		if err != nil {
			t.Fatal(err)
		}
		want := false
		e, perr := match.Parse(tc.expr)
		if perr == nil {
			if want, err = e.Eval(&p, sets); err != nil {
				t.Fatalf("%s: %v", tc.expr, err)
			}
		}
		if res.Dropped {
			drops++
		}
		if res.Dropped != want && !tc.unsupported {
			t.Errorf("%q on %s: ovn-trace dropped=%v, Eval=%v (parse error: %v)\n%s", tc.expr, tc.packet, res.Dropped, want, perr, res.Output)
		}
		if bad := tc.invalid || tc.unsupported; bad != (perr != nil) || tc.unsupported != errors.Is(perr, match.ErrUnsupported) {
			t.Errorf("%q: invalid=%v unsupported=%v but Parse returned %v", tc.expr, tc.invalid, tc.unsupported, perr)
		}
		// A verdict alone cannot tell a valid match that does not hold from one OVN could
		// not parse (its flow is skipped), so ovn-trace's warning is checked both ways.
		if rejected := ovnRejects(ctx, t, northd, microflow(p)); tc.invalid && !rejected {
			t.Errorf("%q: ovn-trace did not report the ACL's match as unparsable", tc.expr)
		} else if !tc.invalid && rejected {
			t.Errorf("%q: ovn-trace reported the ACL's match as unparsable", tc.expr)
		}
	}
	// Both verdicts must be well represented, or the comparison shows little.
	if drops < len(traceCases)/3 || drops > 2*len(traceCases)/3 {
		t.Errorf("%d of %d cases dropped: the cases do not exercise both outcomes", drops, len(traceCases))
	}
	t.Logf("%d cases, %d dropped by ovn-trace", len(traceCases), drops)
}

// ovnRejects runs ovn-trace directly, since testenv's Trace keeps no diagnostics of a
// successful run, and reports whether it warned that a logical flow failed to parse.
func ovnRejects(ctx context.Context, t *testing.T, northd *testenv.Northd, flow string) bool {
	t.Helper()
	trace, err := testenv.NeedOVN(t).Program("ovn-trace")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, trace, "--db="+northd.SB.Endpoint, "--minimal", "sw", flow)
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_LOGDIR="+dir, "OVN_RUNDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ovn-trace: %v: %s", err, stderr.String())
	}
	return strings.Contains(stderr.String(), "parsing expression failed")
}

// microflow writes p as an ovn-trace microflow, pinning every field an expression can
// read (the registers, ct_mark and ct_label too, at zero if need be), so that ovn-trace
// sees the very packet Eval does.
func microflow(p match.Packet) string {
	m := func(b [6]byte) string {
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
	}
	parts := []string{fmt.Sprintf("inport == %q", p.InPort), "eth.src == " + m(p.EthSrc), "eth.dst == " + m(p.EthDst)}
	for i, r := range p.Reg {
		parts = append(parts, fmt.Sprintf("reg%d == %d", i, r))
	}
	parts = append(parts, fmt.Sprintf("ct_mark == %d", p.CTMark), fmt.Sprintf("ct_label == 0x%x", p.CTLabel), fmt.Sprintf("pkt.mark == %d", p.PktMark))
	ct := 0
	for i, b := range []bool{p.CT.New, p.CT.Est, p.CT.Rel, p.CT.Rpl, p.CT.Inv, p.CT.Trk, p.CT.SNAT, p.CT.DNAT} {
		if b {
			ct |= 1 << i
		}
	}
	parts = append(parts, fmt.Sprintf("ct_state == 0x%x", ct))
	ip := "ip4"
	switch p.EthType {
	case 0x0800:
		parts = append(parts, "ip4", "ip4.src == "+p.IPSrc.String(), "ip4.dst == "+p.IPDst.String())
	case 0x86dd:
		ip = "ip6"
		parts = append(parts, "ip6", "ip6.src == "+p.IPSrc.String(), "ip6.dst == "+p.IPDst.String())
	case 0x0806:
		return strings.Join(append(parts, "arp", fmt.Sprintf("arp.op == %d", p.ArpOp),
			"arp.spa == "+p.IPSrc.String(), "arp.tpa == "+p.IPDst.String(), "arp.sha == "+m(p.SHA), "arp.tha == "+m(p.THA)), " && ")
	default:
		return strings.Join(append(parts, fmt.Sprintf("eth.type == 0x%x", p.EthType)), " && ")
	}
	parts = append(parts, fmt.Sprintf("ip.ttl == %d", p.TTL))
	l4 := map[uint8]string{6: "tcp", 17: "udp", 132: "sctp"}[p.Proto]
	switch {
	case l4 != "":
		parts = append(parts, l4, fmt.Sprintf("%s.src == %d && %s.dst == %d", l4, p.L4Src, l4, p.L4Dst))
	case p.Proto == 1 || p.Proto == 58:
		icmp := map[string]string{"ip4": "icmp4", "ip6": "icmp6"}[ip]
		parts = append(parts, icmp, fmt.Sprintf("%s.type == %d && %s.code == %d", icmp, p.ICMPType, icmp, p.ICMPCode))
		if p.NDTarget.IsValid() {
			parts = append(parts, "nd.target == "+p.NDTarget.String())
		}
		switch p.ICMPType {
		case 135:
			parts = append(parts, "nd.sll == "+m(p.SHA))
		case 136:
			parts = append(parts, "nd.tll == "+m(p.THA))
		}
	default:
		parts = append(parts, fmt.Sprintf("ip.proto == %d", p.Proto))
	}
	return strings.Join(parts, " && ")
}

func macOf(s string) [6]byte {
	var b [6]byte
	if _, err := fmt.Sscanf(s, "%02x:%02x:%02x:%02x:%02x:%02x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]); err != nil {
		panic(err)
	}
	return b
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// traceSets resolves names from maps.
type traceSets struct {
	addrSets   map[string][]netip.Prefix
	portGroups map[string][]string
	bound      map[string]string // port → the chassis it is bound to
}

func (s traceSets) AddressSet(name string) ([]netip.Prefix, bool) {
	p, ok := s.addrSets[name]
	return p, ok
}

func (s traceSets) PortGroup(name string) ([]string, bool) {
	p, ok := s.portGroups[name]
	return p, ok
}

func (s traceSets) Chassis(port string) (string, bool) {
	c, ok := s.bound[port]
	return c, ok
}

// predicateCases are predicates and fields each on packets that tell whether they
// hold, and on some that tell whether their prerequisites do.
var predicateCases = []struct{ expr, packets string }{
	{"eth.bcast", "arp tcp4"},
	{"!eth.bcast", "tcp4 arp"},
	{"eth.mcastv6", "mcast6 mld2uc tcp6"},
	{"!eth.mcastv6", "tcp4 mcast6"},
	{"ip4.src_mcast", "mcsrc tcp4 tcp6"},
	{"!ip4.src_mcast", "tcp4 mcsrc"},
	{"ip4.mcast", "mcast4 mcast4uc mcast6"},
	{"ip6.mcast_rsvd", "mcast6rsvd mcast6"},
	{"ip6.mcast_all_nodes", "mcast6 mld2"},
	{"!ip6.mcast_all_nodes", "tcp6 mcast6"},
	{"ip6.mcast_all_rtrs", "rs mcast6"},
	{"ip6.mcast_sol_node", "nd mcast6"},
	{"ip6.mcast_flood", "mcast6 nd mcast6rsvd mcast6dyn mld2"},
	{"ip6.mcast", "mcast6dyn tcp6 mld2uc"},
	{"igmp", "igmp mcast4"},
	{"icmp", "icmp4 icmp6 nd tcp4"},
	{"icmp4", "icmp4 icmp6"},
	{"icmp6", "icmp6 icmp4"},
	{"nd", "nd na rs"},
	{"nd_ns", "nd na"},
	{"nd_ns_mcast", "nd na"},
	{"nd_na", "na nd"},
	{"nd_rs", "rs nd"},
	{"nd_ra", "rs"},
	{"mldv1", "mld1 mld2"},
	{"mldv2", "mld2 mld2uc mld1"},
	{"nd.sll == 00:00:00:00:00:01", "nd na"},
	{"nd.sll == 00:00:00:00:00:00/01:00:00:00:00:00", "nd"},
	{"nd.tll == 00:00:00:00:00:05", "na nd"},
	{"nd.target == fd00::5", "na nd rs"},
	{"arp.tha == 00:00:00:00:00:00 && arp.sha == 00:00:00:00:00:01", "arp"},
	{"ct.dnat && !ct.snat && ct.new", "dnatted tracked tcp4"},
	{"ct_state == 0xa1 && ct_state[7]", "dnatted tracked"},
	{"ct_mark.ecmp_reply_port == 3 && ct_label.label == 7", "ctmark tcp4"},
	{"xreg1[0..31] == 7 && reg8 > 8", "regs tcp4"},
}

// TestPredicatesAgainstOVNTrace checks predicates and fields with ovn-trace's own
// parser as the judge: the microflow pins every field, so "packet && (expression)" is
// contradictory exactly when the expression does not hold (a negation can leave it
// "ambiguous" instead of satisfiable: a field the packet lacks, such as ip4.src of an
// IPv6 packet, is free in the flow). No ACL is involved, so this reaches packets northd
// lets through whatever the ACLs say (neighbour discovery, MLD).
func TestPredicatesAgainstOVNTrace(t *testing.T) {
	nb := testenv.StartNB(t)
	northd := testenv.StartNorthd(t, nb)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"ls-add", "sw"}, {"lsp-add", "sw", "p1"}, {"lsp-add", "sw", "p2"}} {
		if _, err := nb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := northd.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	holds, checked := 0, 0
	for _, tc := range predicateCases {
		e, err := match.Parse(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		for _, name := range strings.Fields(tc.packets) {
			p, ok := tracePackets[name]
			if !ok {
				t.Fatalf("no packet %s", name)
			}
			want, err := e.Eval(&p, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := ovnTrace(ctx, t, northd, microflow(p)+" && ("+tc.expr+")")
			contradictory := strings.Contains(out, "Constraints are contradictory")
			if !contradictory && strings.Contains(out, "error parsing flow") && !strings.Contains(out, "Constraints are ambiguous") {
				t.Fatalf("%q on %s: ovn-trace: %s", tc.expr, name, out)
			}
			if contradictory == want {
				t.Errorf("%q on %s: Eval = %v, ovn-trace finds it %s", tc.expr, name, want, map[bool]string{true: "contradictory", false: "satisfiable"}[contradictory])
			}
			checked++
			if want {
				holds++
			}
		}
	}
	// Both answers must be well represented, or the comparison shows little.
	if holds < checked/3 || holds > 2*checked/3 {
		t.Errorf("%d of %d hold: the cases do not exercise both answers", holds, checked)
	}
	t.Logf("%d expressions, %d checks, %d holding", len(predicateCases), checked, holds)
}

// ovnTrace runs ovn-trace on the southbound database as it is, and returns what it
// printed, standard error included.
func ovnTrace(ctx context.Context, t *testing.T, northd *testenv.Northd, flow string) string {
	t.Helper()
	trace, err := testenv.NeedOVN(t).Program("ovn-trace")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, trace, "--db="+northd.SB.Endpoint, "--minimal", "sw", flow)
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_LOGDIR="+dir, "OVN_RUNDIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ovn-trace: %v: %s", err, out)
	}
	return string(out)
}
