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
// Fields: inport and outport (strings); eth.src, eth.dst, eth.type, eth.mcast; ip.proto,
// ip.ttl; ip4.src, ip4.dst; ip6.src, ip6.dst; tcp, udp and sctp .src and .dst; icmp4 and
// icmp6 .type and .code; pkt.mark; ct.trk, ct.new, ct.est, ct.rel, ct.rpl, ct.inv.
// Predicates: ip4, ip6, ip, arp, tcp, udp, sctp, icmp4, icmp6, icmp, eth.bcast,
// ip4.mcast and ip6.mcast, defined as OVN defines them (ip4.mcast, for one, also
// requires the group bit of eth.dst).
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
// OVN's finer rules hold too, checked against ovn-trace (see TestAgainstOVNTrace):
//
//   - Nominal fields (inport, outport, eth.type, ip.proto, ip.ttl, icmp4/icmp6 .type and
//     .code) may only be tested for equality, counting enclosing "!": `ip.proto != 6`,
//     `!(inport == "a")` and `ip.ttl < 5` are errors, `!(inport != "a")` is not. The
//     predicates built on them (ip4, ip, tcp, icmp, ...) may only be tested positively:
//     `!tcp` is an error, not "every packet but TCP".
//   - A value with 1-bits outside its mask is masked: 10.0.0.1/8 is 10.0.0.0/8.
//   - A constant fits a field by its width: an address by the address size, an integer
//     by its significant bits. So 10.0.0.1 fits ip6.src (as the integer ::a00:1) but
//     fe80::1 does not fit ip4.dst, nor 65536 tcp.dst.
//   - A field or multibit symbol alone is compared with 0: `ct.trk` is `ct.trk != 0`,
//     while `tcp.dst` alone is an error and `!tcp.dst` means `tcp.dst == 0`.
//   - The operand of "!" must be atomic (parenthesized, or a symbol alone):
//     `!tcp.dst == 80` is an error. Constants may stand first (80 == tcp.dst) and a range
//     may be written 1 <= tcp.dst < 1024.
//   - An address set or port group that turns out empty makes its comparison a constant
//     with no prerequisite: `ip4.src != $empty` is true even for an IPv6 packet.
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
// requires ip), ct.est requires ct.trk. As in OVN, "!" is pushed down to the comparisons
// when parsing (De Morgan), and only then does each comparison get its field's
// prerequisites, conjunctively. So a comparison is false for a packet its field does not
// apply to, whatever its operator or the negations around it. For a UDP packet:
//
//	tcp.dst == 80       is  tcp.dst == 80 && ip.proto == 6 && ip   false
//	tcp.dst != 80       is  tcp.dst != 80 && ip.proto == 6 && ip   false
//	!(tcp.dst == 80)    is  the same as tcp.dst != 80               false
//	!ct.est (untracked) is  ct.est == 0 && ct.trk                   false
//
// A predicate is different: it is a name for its expansion, prerequisites included, and
// negating it negates all of it. `!ip4.mcast` is `!(eth.mcast && ip4.dst ==
// 224.0.0.0/4 && ip4)`, true for every non-IPv4 packet.
//
// # Limits
//
// Parentheses nest at most MaxDepth deep, so no input can exhaust the stack; parsing is
// linear in the input. Subfields (ip4.src[24..31]) and functions
// (is_chassis_resident(...)) are not supported and are reported as such.
package match
