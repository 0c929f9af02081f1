// Package match parses and evaluates OVN match expressions: the language of the
// Southbound Logical_Flow match column (ovn-sb(5)), as written in the Northbound
// Logical_Router_Policy, ACL and NAT match columns. A logical packet simulator uses it
// to decide which row matches a packet.
//
// Parse once, evaluate many times:
//
//	e, err := match.Parse(`inport == "rtos-blue_node1" && ip4.dst == 100.65.0.2 /* blue_node1 */`)
//	...
//	ok, err := e.Eval(&match.Packet{InPort: "rtos-blue_node1", EthType: 0x0800, IPDst: dst}, sets)
//
// # Language
//
// Fields, as OVN 25.03 defines them: inport and outport (strings); eth.src, eth.dst,
// eth.type, eth.mcast; ip.proto, ip.ttl; ip4.src, ip4.dst; ip6.src, ip6.dst; tcp, udp
// and sctp .src and .dst; icmp4 and icmp6 .type and .code; arp.op, arp.spa, arp.tpa,
// arp.sha, arp.tha; nd.target, nd.sll, nd.tll; pkt.mark; ct.trk, ct.new, ct.est, ct.rel,
// ct.rpl, ct.inv, ct.snat, ct.dnat and ct_state, which holds them all; ct_mark and its
// named bits (ct_mark.blocked, .natted, .skip_snat, .force_snat, .obs_stage,
// .allow_established, .ecmp_reply_port, .obs_collector_id); ct_label and its named
// ranges (ct_label.label, .obs_point_id, .ecmp_reply_eth, .obs_unused); the registers
// reg0 to reg9, xreg0 to xreg4 and xxreg0 and xxreg1 (xreg0 is reg0 and reg1, xxreg0 is
// reg0 to reg3, as in OVN).
//
// Predicates, each defined as OVN defines it (ip4.mcast, for one, also requires the
// group bit of eth.dst; mldv2 the 33:33 MAC prefix): ip4, ip6, ip, arp, tcp, udp, sctp,
// icmp4, icmp6, icmp, igmp, eth.bcast, eth.mcastv6, ip4.mcast, ip4.src_mcast, ip6.mcast,
// ip6.mcast_rsvd, ip6.mcast_all_nodes, ip6.mcast_all_rtrs, ip6.mcast_sol_node,
// ip6.mcast_flood, nd, nd_ns, nd_ns_mcast, nd_na, nd_rs, nd_ra, mldv1, mldv2.
//
// A subfield selects bits of an integer field, bit 0 the lowest: ip4.dst[24..31] is
// the first byte of the address, ip6.dst[116] one bit. The function
// is_chassis_resident("port") is true when the port is bound to the chassis processing
// the packet: Packet.Chassis names that chassis, and Sets.Chassis where each port is
// bound.
//
// Operators are == != < <= > >= && || ! and parentheses; && and || may not be mixed
// without parentheses. Constants are decimal and 0x integers, IPv4 and IPv6 addresses,
// MACs (each with an optional /mask, and addresses with a /prefix-length), and quoted
// strings with JSON escapes. A value set {a, b, c} (commas optional), an address set
// $name and a port group @name may stand on the right of == and !=: "x == {a, b}"
// matches if x equals any member, "x != {a, b}" if it equals none. Comments are /* */
// (on one line) and // (up to a newline, which must be there; see below). "1" and "0"
// alone are true and false.
//
// OVN's finer rules hold too, checked against ovn-trace (see TestAgainstOVNTrace and
// TestPredicatesAgainstOVNTrace):
//
//   - Nominal fields (inport, outport, eth.type, ip.proto, ip.ttl, arp.op, icmp4/icmp6
//     .type and .code) may only be tested for equality, counting enclosing "!":
//     `ip.proto != 6`, `!(inport == "a")` and `ip.ttl < 5` are errors, `!(inport != "a")`
//     is not. The predicates built on them (ip4, ip, tcp, icmp, igmp, nd, mldv1, ...) may
//     only be tested positively: `!tcp` is an error, not "every packet but TCP".
//   - A value with 1-bits outside its mask is masked: 10.0.0.1/8 is 10.0.0.0/8.
//   - A constant fits a field by its width: an address by the address size, an integer
//     by its significant bits. So 10.0.0.1 fits ip6.src (as the integer ::a00:1) but
//     fe80::1 does not fit ip4.dst, nor 65536 tcp.dst.
//   - A subfield's constant is checked against the whole field's width, then cut to the
//     subfield's: ip4.dst[24..31] == 0x10a is ip4.dst[24..31] == 0x0a, and
//     ip4.dst[24..31] == 10.0.0.10 tests the first byte against 10. Bits are numbered in
//     decimal, lowest first ([31..24] is an error); a string field has no subfields, and
//     a nominal one only the subfield of all its bits (ip.proto[0..7]).
//   - A field or 1-bit subfield alone is compared with 0: `ct.trk` is `ct.trk != 0` and
//     `ip4.dst[0]` tests one bit, while `tcp.dst` alone is an error and `!tcp.dst` means
//     `tcp.dst == 0`.
//   - The operand of "!" must be atomic (parenthesized, a field alone, or a function):
//     `!tcp.dst == 80` is an error. Constants may stand first (80 == tcp.dst) and a range
//     may be written 1 <= tcp.dst < 1024.
//   - An address set or port group that turns out empty makes its comparison a constant
//     with no prerequisite: `ip4.src != $empty` is true even for an IPv6 packet.
//   - is_chassis_resident() takes one quoted port name and may be negated; any other
//     function is an error.
//   - A // comment must be closed by a newline inside the match: `ip4 // web` is an
//     error, "ip4 // web\n" is not. OVN's lexer would take either, but northd (25.03)
//     writes an ACL's match into its logical flow as "((match))", and a NAT's as
//     "(match)" with more conditions after it, on one line, so a comment that runs to
//     the end of the match hides the closing ")": the flow fails to parse ("Syntax
//     error at end of input expecting `)'") and the row silently never applies.
//     Northd copies a Logical_Router_Policy's match bare, where such a comment would
//     do no harm, but Parse cannot tell the columns apart and refuses it everywhere,
//     so what it accepts works in every column. /* */ comments are safe anywhere on a
//     line.
//
// # Prerequisites and negation
//
// Every field has prerequisites: ip4.dst requires ip4, tcp.dst requires tcp (which
// requires ip), ct.est requires ct.trk, nd.sll requires nd_ns. As in OVN, "!" is pushed
// down to the comparisons when parsing (De Morgan), and only then does each comparison
// get its field's prerequisites, conjunctively. So a comparison is false for a packet
// its field does not apply to, whatever its operator or the negations around it. For a
// UDP packet:
//
//	tcp.dst == 80       is  tcp.dst == 80 && ip.proto == 6 && ip   false
//	tcp.dst != 80       is  tcp.dst != 80 && ip.proto == 6 && ip   false
//	!(tcp.dst == 80)    is  the same as tcp.dst != 80               false
//	!ct.est (untracked) is  ct.est == 0 && ct.trk                   false
//
// A predicate is different: it is a name for its expansion, prerequisites included, and
// negating it negates all of it. `!ip4.mcast` is `!(eth.mcast && ip4.dst[28..31] ==
// 0xe && ip4)`, true for every non-IPv4 packet. is_chassis_resident() has no
// prerequisite.
//
// # Limits
//
// Parsing is linear in the input, and parentheses nest at most MaxDepth deep, so no
// input can exhaust the stack.
//
// Parse rejects two kinds of expression, told apart by ErrUnsupported. Those OVN
// rejects too (a syntax error, an unknown field, a constant that does not fit) make a
// row that never applies in OVN either. Those OVN accepts and Parse cannot evaluate
// fail with ErrUnsupported: OVN's fields a Packet has nothing for (vlan.*, ip.dscp,
// ip.ecn, ip6.label, ip.frag and its predicates, tcp.flags, rarp and its fields, OVN's
// internal flags.*), an address set compared with anything but a whole ip4.src, ip4.dst,
// ip6.src or ip6.dst or with an operator other than == and !=, and parentheses nested
// deeper than MaxDepth (OVN allows 100). A row with such a match may or may not apply
// in OVN.
//
// Eval knows no more than its Packet: the registers, ct_mark and ct_label are whatever
// the caller puts there, though in OVN northd's own stages fill them. is_chassis_resident()
// of a port Sets does not know is false, as on a real chassis; ovn-trace, which
// simulates none, takes every existing port to be resident (and "" too).
package match
