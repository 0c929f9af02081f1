package match_test

import (
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// Packets for the evaluation tests: a pod's TCP connection to a service, and variations.
var (
	tcp4 = match.Packet{
		InPort: "p1", EthSrc: macOf("0a:58:0a:f4:00:05"), EthDst: macOf("0a:58:0a:f4:00:01"), EthType: 0x0800,
		IPSrc: addr("10.244.0.5"), IPDst: addr("10.96.0.10"), TTL: 64, Proto: 6, L4Src: 40000, L4Dst: 443,
		PktMark: 0x1234, CT: match.CTState{Trk: true, Est: true},
	}
	udp4  = with(tcp4, func(p *match.Packet) { p.Proto, p.L4Dst, p.CT = 17, 53, match.CTState{} })
	icmp4 = with(tcp4, func(p *match.Packet) { p.Proto, p.L4Src, p.L4Dst, p.ICMPType = 1, 0, 0, 8 })
	mc4   = with(udp4, func(p *match.Packet) { p.EthDst, p.IPDst = macOf("01:00:5e:7f:ff:fa"), addr("239.255.255.250") })
	mc4uc = with(mc4, func(p *match.Packet) { p.EthDst = tcp4.EthDst })
	tcp6  = with(tcp4, func(p *match.Packet) {
		p.EthType, p.IPSrc, p.IPDst = 0x86dd, addr("fd00:10:244::5"), addr("fd00:10:96::a")
	})
	icmp6  = with(tcp6, func(p *match.Packet) { p.Proto, p.ICMPType = 58, 128 })
	icmp6t = with(icmp6, func(p *match.Packet) { p.ICMPType = 8 })
	mc6    = with(tcp6, func(p *match.Packet) { p.Proto, p.EthDst, p.IPDst = 17, macOf("33:33:00:00:00:fb"), addr("ff02::fb") })
	mapped = with(tcp6, func(p *match.Packet) { p.IPSrc = addr("::ffff:10.244.0.5") })
	int6   = with(tcp6, func(p *match.Packet) { p.IPSrc = addr("::a00:1") })
	arp    = match.Packet{InPort: "p1", EthSrc: tcp4.EthSrc, EthDst: macOf("ff:ff:ff:ff:ff:ff"), EthType: 0x0806, ArpOp: 1, IPSrc: addr("10.244.0.5"), IPDst: addr("10.244.0.2")}
	ndNS   = with(icmp6, func(p *match.Packet) {
		p.EthDst, p.IPDst, p.TTL, p.ICMPType, p.NDTarget = macOf("33:33:ff:00:00:02"), addr("ff02::1:ff00:2"), 255, 135, addr("fd00:10:244::2")
	})
	lldp   = match.Packet{InPort: "p1", EthSrc: tcp4.EthSrc, EthDst: macOf("01:80:c2:00:00:0e"), EthType: 0x88cc}
	untrk  = with(tcp4, func(p *match.Packet) { p.CT = match.CTState{} })
	estNoT = with(tcp4, func(p *match.Packet) { p.CT = match.CTState{Est: true} })
	trkNew = with(tcp4, func(p *match.Packet) { p.CT = match.CTState{Trk: true, New: true} })
	blue   = with(tcp4, func(p *match.Packet) { p.InPort, p.IPDst = "rtos-blue_node1", addr("100.65.0.2") })
	regs   = with(tcp4, func(p *match.Packet) { p.Reg = [10]uint32{0x80000001, 2, 3, 4, 5, 6, 7, 8, 9, 0xa} })
	marked = with(tcp4, func(p *match.Packet) {
		p.CTMark = 0x00050003 // blocked, natted, ecmp_reply_port 5
		p.CTLabel[0], p.CTLabel[15] = 0x80, 1
		p.CT.DNAT = true
	})
	arpSHA = with(arp, func(p *match.Packet) { p.SHA, p.THA = macOf("0a:58:0a:f4:00:05"), macOf("ff:ff:ff:ff:ff:ff") })
	ndSLL  = with(ndNS, func(p *match.Packet) { p.SHA = macOf("0a:58:0a:f4:00:05") })
	ndTLL  = with(ndNS, func(p *match.Packet) { p.ICMPType, p.THA = 136, macOf("0a:58:0a:f4:00:02") })
	mld2   = with(icmp6, func(p *match.Packet) {
		p.EthDst, p.IPSrc, p.IPDst, p.TTL, p.ICMPType = macOf("33:33:00:00:00:16"), addr("fe80::5"), addr("ff02::16"), 1, 143
	})
	onNode1 = with(tcp4, func(p *match.Packet) { p.Chassis = "node1" })
)

func with(p match.Packet, f func(*match.Packet)) match.Packet {
	f(&p)
	return p
}

var evalSets = traceSets{
	addrSets: map[string][]netip.Prefix{
		"v4":     {netip.MustParsePrefix("10.244.0.0/24"), netip.MustParsePrefix("192.168.1.1/32")},
		"v6":     {netip.MustParsePrefix("fd00:10:244::/64")},
		"mixed":  {netip.MustParsePrefix("10.96.0.10/32"), netip.MustParsePrefix("fd00:10:96::a/128")},
		"mapped": {netip.MustParsePrefix("::ffff:10.244.0.5/128")},
		"one":    {netip.MustParsePrefix("10.0.0.1/32")},
		"empty":  nil,
	},
	portGroups: map[string][]string{"nodes": {"p1", "p2"}, "none": nil},
	bound:      map[string]string{"p1": "node1", "cr-rtos-node2": "node2", "unbound": ""},
}

func TestEval(t *testing.T) {
	cases := []struct {
		expr string
		p    match.Packet
		want bool
	}{
		{`1`, arp, true},
		{`0`, tcp4, false},
		{`!0`, tcp4, true},
		{`inport == "rtos-blue_node1" && ip4.dst == 100.65.0.2 /* blue_node1 */`, blue, true},
		{`inport == "rtos-blue_node1" && ip4.dst == 100.65.0.2 /* blue_node1 */`, tcp4, false},
		{`inport == "p1"`, tcp4, true},
		{`inport == "p2"`, tcp4, false},
		{`outport == ""`, tcp4, true},
		{`inport == "\u0070\u0031"`, tcp4, true},

		// ARP and neighbour discovery, as upstream's UDN isolation ACLs test them.
		{`(( arp && arp.tpa == 10.244.0.2 ) || ( nd && nd.target == fd00:10:244::2 ))`, arp, true},
		{`(( arp && arp.tpa == 10.244.0.2 ) || ( nd && nd.target == fd00:10:244::2 ))`, ndNS, true},
		{`(( arp && arp.tpa == 10.244.0.2 ) || ( nd && nd.target == fd00:10:244::2 ))`, tcp4, false},
		{`arp && arp.spa == 10.244.0.2`, arp, false},
		{`arp.op == 1 && arp.spa == 10.244.0.0/24`, arp, true},
		{`nd_ns && nd.target == fd00:10:244::2`, ndNS, true},
		{`nd_na`, ndNS, false},
		{`nd`, with(ndNS, func(p *match.Packet) { p.TTL = 64 }), false},

		// Masks.
		{`ip4.src == 10.244.0.0/16`, tcp4, true},
		{`ip4.src == 10.245.0.0/16`, tcp4, false},
		{`ip4.src == 10.244.0.5/8`, tcp4, true},
		{`ip4.src == 0.0.0.5/0.0.0.255`, tcp4, true},
		{`ip4.src == 0.0.0.0/0`, tcp4, true},
		{`ip4.src == 0.0.0.0/0`, tcp6, false},
		{`ip4.src != 0.0.0.0/0`, tcp4, false},
		{`eth.src == 0a:58:00:00:00:00/ff:ff:00:00:00:00`, tcp4, true},
		{`eth.src == 0a:59:00:00:00:00/ff:ff:00:00:00:00`, tcp4, false},
		{`pkt.mark == 0x1000/0xf000`, tcp4, true},
		{`pkt.mark == 0/0xff`, tcp4, false},
		{`pkt.mark == 0x1234 && eth.type == 0x800`, tcp4, true},
		{`pkt.mark != 0x1234`, tcp4, false},

		// IPv6.
		{`ip6.src == fd00:10:244::5`, tcp6, true},
		{`ip6.src == fd00:10:244::/48`, tcp6, true},
		{`ip6.dst == fd00:10:97::/64`, tcp6, false},
		{`ip6.dst == fd00:10:96::/ffff:ffff:ffff:ffff::`, tcp6, true},
		{`ip6.src == ::ffff:0:0/96`, tcp4, false},
		{`ip6.src == ::ffff:0:0/96`, mapped, true},
		{`ip6.src == 10.0.0.1`, int6, true},
		{`ip6.dst > fd00:10:96::9 && ip6.dst <= fd00:10:96::a`, tcp6, true},
		{`ip6.dst < fd00:10:96::a`, tcp6, false},

		// Relational operators.
		{`tcp.dst > 442`, tcp4, true},
		{`tcp.dst >= 444`, tcp4, false},
		{`tcp.dst < 443`, tcp4, false},
		{`400 < tcp.dst < 500`, tcp4, true},
		{`500 > tcp.dst >= 443`, tcp4, true},
		{`444 <= tcp.dst <= 500`, tcp4, false},
		{`tcp.dst > 0`, udp4, false},
		{`pkt.mark < 0x1235`, tcp4, true},
		{`eth.src < 0a:58:0a:f4:00:06`, tcp4, true},
		{`ct.est >= 1`, tcp4, true},

		// Value sets.
		{`tcp.dst == {80, 443}`, tcp4, true},
		{`tcp.dst != {80, 443}`, tcp4, false},
		{`tcp.dst != {80 8080}`, tcp4, true},
		{`tcp.dst != {80}`, udp4, false},
		{`!(tcp.dst == {80, 443})`, tcp4, false},
		{`!(tcp.dst == {80, 8080})`, udp4, false},
		{`ip4.dst == {10.96.0.0/16, 1.1.1.1}`, tcp4, true},
		{`{80, 443} == tcp.dst`, tcp4, true},

		// Address sets.
		{`ip4.src == $v4`, tcp4, true},
		{`ip4.dst == $v4`, tcp4, false},
		{`ip4.src != $v4`, tcp4, false},
		{`ip4.dst != $v4`, tcp4, true},
		{`ip4.src == $v4`, tcp6, false},
		{`ip4.dst != $v4`, tcp6, false},
		{`ip6.src == $v6`, tcp6, true},
		{`ip6.src == $v4`, tcp6, false},
		{`ip4.dst == $mixed`, tcp4, true},
		{`ip6.dst == $mixed`, tcp6, true},
		{`ip4.src != $mixed`, tcp4, true},
		{`ip4.src == $v6`, tcp4, false},
		{`ip4.src != $v6`, tcp4, true},
		{`ip4.src != $v6`, tcp6, false},
		{`ip4.src == $empty`, tcp4, false},
		{`ip4.src != $empty`, tcp6, true},
		{`ip4.src != $empty`, lldp, true},
		{`!(ip4.src == $empty)`, lldp, true},
		{`ip4.src == {$empty, $empty}`, tcp4, false},
		{`ip6.src == $mapped`, mapped, true},
		{`ip4.src == $mapped`, tcp4, false},
		{`ip6.src == 10.0.0.1`, int6, true},
		{`ip6.src == $one`, int6, false},
		{`ip4.src == {192.168.1.1, $v4}`, tcp4, true},
		{`ip4.src != {192.168.1.1, $v4}`, tcp4, false},

		// Port groups.
		{`inport == @nodes`, tcp4, true},
		{`inport == @none`, tcp4, false},
		{`outport == @nodes`, tcp4, false},
		{`!(inport != @nodes)`, tcp4, true},
		{`inport == {@none, "p1"}`, tcp4, true},

		// Negation and prerequisites.
		{`tcp.dst != 80`, tcp4, true},
		{`tcp.dst != 80`, udp4, false},
		{`!(tcp.dst == 80)`, udp4, false},
		{`!tcp.dst`, tcp4, false},
		{`!(ip4.src == 10.244.0.5 && tcp.dst == 443)`, tcp4, false},
		{`!(ip4.src == 10.244.0.5 && tcp.dst == 443)`, udp4, false},
		{`!(ip4.src == 10.244.0.6 && tcp.dst == 443)`, udp4, true},
		{`!(ip4.src == 10.244.0.6 || tcp.dst == 443)`, udp4, false},
		{`(ip4 || ip6) && !(tcp.dst == 22)`, udp4, false},
		{`!ct.est`, untrk, false},
		{`!ct.est`, trkNew, true},
		{`ct.est`, estNoT, false},
		{`!ct.trk`, estNoT, true},
		{`ct.trk && ct.est`, tcp4, true},
		{`ct.new || ct.rel || ct.rpl || ct.inv`, tcp4, false},
		{`ct.new && !ct.est`, trkNew, true},
		{`tcp && tcp.dst == 443`, tcp6, true},
		{`tcp`, udp4, false},
		{`sctp.dst == 443`, tcp4, false},
		{`udp.dst == 53 && ip.ttl == 64 && ip.proto == 17`, udp4, true},

		// Predicates.
		{`ip4`, tcp4, true},
		{`ip4`, tcp6, false},
		{`ip`, arp, false},
		{`ip`, icmp6, true},
		{`arp`, arp, true},
		{`icmp`, icmp6, true},
		{`icmp4`, icmp6, false},
		{`icmp4.type == 8 && icmp4.code == 0`, icmp4, true},
		{`icmp4.type == 8`, icmp6t, false},
		{`icmp6.type == 128`, icmp6, true},
		{`eth.bcast`, arp, true},
		{`!eth.bcast`, tcp4, true},
		{`eth.mcast`, mc4, true},
		{`eth.mcast`, tcp4, false},
		{`!eth.mcast`, tcp4, true},
		{`ip4.mcast`, mc4, true},
		{`ip4.mcast`, mc4uc, false},
		{`!ip4.mcast`, mc4, false},
		{`!ip4.mcast`, mc6, true},
		{`ip6.mcast`, mc6, true},
		{`ip6.mcast`, tcp6, false},
		{`!ip6.mcast`, arp, true},
		{`eth.type == 0x88cc`, lldp, true},
		{`tcp == 1 && ip4 == 1`, tcp4, true},
		{`eth.bcast == 0`, arp, false},
		{`eth.bcast != 0 && arp`, arp, true},
		{`eth.mcastv6`, mc6, true},
		{`eth.mcastv6`, mc4, false},
		{`igmp`, with(mc4, func(p *match.Packet) { p.Proto = 2 }), true},
		{`igmp`, mc4, false},
		{`mldv2`, mld2, true},
		{`mldv2`, with(mld2, func(p *match.Packet) { p.EthDst = tcp6.EthDst }), false},
		{`mldv1 || nd_rs || nd_ra`, mld2, false},
		{`ip6.mcast_flood`, mc6, false},
		{`ip6.mcast_flood && ip6.mcast_sol_node && nd_ns_mcast`, ndNS, true},
		{`ip4.src_mcast`, with(tcp4, func(p *match.Packet) { p.IPSrc = addr("224.0.0.1") }), true},

		// Subfields: bit 0 is the lowest.
		{`ip4.dst[24..31] == 10 && ip4.dst[0..7] == 10`, tcp4, true},
		{`ip4.dst[24..31] == 0x10a`, tcp4, true}, // cut to the subfield's 8 bits
		{`ip4.dst[24..31] == 10.0.0.10`, tcp4, true},
		{`ip4.dst[24..31] == 11`, tcp4, false},
		{`ip4.dst[1] && !ip4.dst[0]`, tcp4, true},
		{`ip4.dst[24..31] < 11 && ip4.dst[24..31] > 9`, tcp4, true},
		{`ip4.dst[24..31] >= 11`, tcp4, false},
		{`10 <= ip4.dst[24..31] <= 10`, tcp4, true},
		{`ip4.dst[8..15] == {0, 96}`, tcp4, true},
		{`ip4.dst[8..15] != {0, 96}`, tcp4, false},
		{`ip4.dst[16..23] == 0x60/0xf0`, tcp4, true},
		{`ip4.dst[24..31] == 10`, tcp6, false},
		{`!ip4.dst[2..3]`, tcp6, false},
		{`ip6.dst[120..127] == 0xff && ip6.dst[116] == 1`, with(mc6, func(p *match.Packet) { p.IPDst = addr("ff12::1") }), true},
		{`ip6.dst[120..127] == 0xff && ip6.dst[116] == 1`, mc6, false},
		{`eth.dst[40] && eth.src[0..7] == 5`, mc4, true},
		{`tcp.dst[0..7] == 187 && tcp.dst[8..15] == 1`, tcp4, true},
		{`ip4.dst[0..31] == $mixed`, tcp4, true},

		// Registers.
		{`reg0 == 0x80000001 && reg9 == 10`, regs, true},
		{`reg0[31] && reg0[0] && !reg0[1]`, regs, true},
		{`xreg0 == 0x8000000100000002 && xreg4 == 0x000000090000000a`, regs, true},
		{`xxreg0 == 0x80000001000000020000000300000004 && xxreg1[0..31] == 8`, regs, true},
		{`xreg2 > 0x0000000500000005`, regs, true},
		{`reg3 < 4`, regs, false},
		{`reg0 == 0`, tcp4, true},

		// The connection's state, mark and label.
		{`ct_mark.blocked && ct_mark.natted && !ct_mark.skip_snat`, marked, true},
		{`ct_mark.ecmp_reply_port == 5 && ct_mark == 0x50003`, marked, true},
		{`ct_label[127] && ct_label[0] && ct_label.obs_unused == 1`, marked, true},
		{`ct_label.label == 0x80000000`, marked, true},
		{`ct.dnat && !ct.snat && ct_state == 0xa2`, marked, true},
		{`ct_state == 0x22`, tcp4, true},
		{`ct.dnat`, with(marked, func(p *match.Packet) { p.CT.Trk = false }), false},

		// Hardware addresses of ARP and neighbour discovery.
		{`arp.sha == 0a:58:0a:f4:00:05 && arp.tha == ff:ff:ff:ff:ff:ff`, arpSHA, true},
		{`arp.sha == 0a:58:0a:f4:00:05`, tcp4, false},
		{`nd.sll == 0a:58:0a:f4:00:05`, ndSLL, true},
		{`nd.sll == 0a:58:0a:f4:00:05`, with(ndSLL, func(p *match.Packet) { p.ICMPType = 136 }), false},
		{`nd.tll == 0a:58:0a:f4:00:02 && nd.target == fd00:10:244::2`, ndTLL, true},
		{`nd.tll == 0a:58:0a:f4:00:02`, ndNS, false},

		// is_chassis_resident(): a port bound to the packet's chassis.
		{`is_chassis_resident("p1")`, onNode1, true},
		{`is_chassis_resident("p1")`, tcp4, false},
		{`!is_chassis_resident("p1")`, onNode1, false},
		{`is_chassis_resident("cr-rtos-node2")`, onNode1, false},
		{`!is_chassis_resident("nope")`, onNode1, true},
		{`is_chassis_resident("nope") || is_chassis_resident("unbound")`, tcp4, false},
		{`ip4 && is_chassis_resident("p1") && tcp.dst == 443`, onNode1, true},
	}
	for _, tc := range cases {
		e, err := match.Parse(tc.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.expr, err)
			continue
		}
		got, err := e.Eval(&tc.p, evalSets)
		if err != nil || got != tc.want {
			t.Errorf("%q on %+v = %v, %v; want %v", tc.expr, tc.p, got, err, tc.want)
		}
	}
}

func TestEvalNilPacket(t *testing.T) {
	for expr, want := range map[string]bool{`1`: true, `eth.type == 0`: true, `ip4`: false, `inport == ""`: true} {
		e, err := match.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.Eval(nil, nil); err != nil || got != want {
			t.Errorf("%q on nil = %v, %v; want %v", expr, got, err, want)
		}
	}
}

// TestEvalUnknownNames shows an unknown name is an error for every packet, even where
// evaluation would never reach the comparison that uses it.
func TestEvalUnknownNames(t *testing.T) {
	cases := []struct{ expr, msg string }{
		{`ip4.src == $nope`, "unknown address set $nope"},
		{`0 && ip4.src == $nope`, "unknown address set $nope"},
		{`ip4.src == $v4 || inport == @nope`, "unknown port group @nope"},
	}
	for _, tc := range cases {
		e, err := match.Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []match.Packet{tcp4, lldp} {
			got, err := e.Eval(&p, evalSets)
			if err == nil || err.Error() != tc.msg || got {
				t.Errorf("%q = %v, %v; want false, %s", tc.expr, got, err, tc.msg)
			}
		}
		if _, err := e.Eval(&tcp4, nil); err == nil || !strings.HasPrefix(err.Error(), "unknown ") {
			t.Errorf("%q with nil Sets: %v", tc.expr, err)
		}
	}
	// Where ports are bound comes from Sets too: without them a match calling
	// is_chassis_resident() cannot be answered, on any packet.
	e, err := match.Parse(`0 && is_chassis_resident("p1")`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Eval(&onNode1, nil); err == nil || got || !strings.Contains(err.Error(), "is_chassis_resident()") {
		t.Errorf("is_chassis_resident() with nil Sets = %v, %v", got, err)
	}
}

// TestEvalAllocs holds Eval to its promise of not allocating, with every kind of node
// in the expression.
func TestEvalAllocs(t *testing.T) {
	e, err := match.Parse(`inport == "p1" && (ip4.dst == 10.96.0.0/16 || ip6.dst == fd00::/8) && tcp.dst == {80, 443} && !(tcp.src < 1024) && !ip4.mcast && ct.est && ip4.dst[24..31] < 11 && xxreg0 == 0 && is_chassis_resident("p1")`)
	if err != nil {
		t.Fatal(err)
	}
	p := onNode1
	var sets match.Sets = evalSets // converted once: boxing the map pair allocates
	if ok, _ := e.Eval(&p, sets); !ok {
		t.Fatal("the expression does not match the packet it is measured on")
	}
	if n := testing.AllocsPerRun(1000, func() { _, _ = e.Eval(&p, sets) }); n != 0 {
		t.Errorf("Eval allocates %v times per call", n)
	}
}

// TestEvalConcurrent evaluates one Expr from many goroutines (meaningful under -race).
func TestEvalConcurrent(t *testing.T) {
	e, err := match.Parse(`ip4.src == $v4 && inport == @nodes && tcp.dst == {80, 443}`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				p := tcp4
				if ok, err := e.Eval(&p, evalSets); !ok || err != nil {
					t.Errorf("Eval = %v, %v", ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
