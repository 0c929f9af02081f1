package match

import "fmt"

// level is OVN's measurement level of a symbol, which decides the operators it takes.
type level uint8

const (
	// nominal values are names, not quantities (eth.type, ip.proto, inport): only
	// equality may be tested, taking enclosing "!" into account, so `ip.proto != 6` and
	// `!(inport == "a")` are errors. A nominal predicate (tcp, ip4) may only be tested
	// positively: `!tcp` is an error. OVN rejects these because it cannot turn them into
	// OpenFlow matches on fields that have no masks.
	nominal level = iota
	// boolean is a predicate over ordinal fields, such as eth.bcast: == and != only.
	boolean
	// ordinal fields (addresses, ports, pkt.mark, the ct.* bits) take every operator.
	ordinal
)

func (l level) String() string { return [...]string{"nominal", "boolean", "ordinal"}[l] }

// symbol is a name an expression may use: a field of the packet, a named range of a
// field's bits (ct_mark.blocked is bit 0 of ct_mark), or a predicate.
type symbol struct {
	name   string
	field  fieldID // 0 for a predicate
	ofs    int     // the symbol's first bit in field: non-zero for some named subfields
	width  int     // in bits: 0 for a string field, 1 for a predicate
	level  level
	isPred bool
	prereq node // a field's annotated prerequisite; nil when it has none
	pred   node // a predicate's annotated expansion

	// src is the prerequisite or expansion as OVN writes it; building guards against a
	// definition that refers to itself. Both are used only at package initialization.
	src             string
	built, building bool
}

func (s *symbol) kind() string {
	if s.isPred {
		return "predicate"
	}
	return "field"
}

// fieldDefs are the packet fields, with OVN's widths, levels and prerequisites. A field
// is nominal in OVN when the OpenFlow field under it cannot be masked. The registers
// are added at initialization (see registerDefs).
var fieldDefs = []struct {
	name   string
	id     fieldID
	width  int
	level  level
	prereq string
}{
	{"inport", fInport, 0, nominal, ""},
	{"outport", fOutport, 0, nominal, ""},
	{"eth.src", fEthSrc, 48, ordinal, ""},
	{"eth.dst", fEthDst, 48, ordinal, ""},
	{"eth.type", fEthType, 16, nominal, ""},
	{"eth.mcast", fEthMcast, 1, ordinal, ""}, // OVN's eth.dst[40], the group bit
	{"ip.proto", fIPProto, 8, nominal, "ip"},
	{"ip.ttl", fIPTTL, 8, nominal, "ip"},
	{"ip4.src", fIP4Src, 32, ordinal, "ip4"},
	{"ip4.dst", fIP4Dst, 32, ordinal, "ip4"},
	{"ip6.src", fIP6Src, 128, ordinal, "ip6"},
	{"ip6.dst", fIP6Dst, 128, ordinal, "ip6"},
	{"tcp.src", fTCPSrc, 16, ordinal, "tcp"},
	{"tcp.dst", fTCPDst, 16, ordinal, "tcp"},
	{"udp.src", fUDPSrc, 16, ordinal, "udp"},
	{"udp.dst", fUDPDst, 16, ordinal, "udp"},
	{"sctp.src", fSCTPSrc, 16, ordinal, "sctp"},
	{"sctp.dst", fSCTPDst, 16, ordinal, "sctp"},
	{"icmp4.type", fICMP4Type, 8, nominal, "icmp4"},
	{"icmp4.code", fICMP4Code, 8, nominal, "icmp4"},
	{"icmp6.type", fICMP6Type, 8, nominal, "icmp6"},
	{"icmp6.code", fICMP6Code, 8, nominal, "icmp6"},
	{"pkt.mark", fPktMark, 32, ordinal, ""},
	{"ct.trk", fCTTrk, 1, ordinal, ""},
	{"ct.new", fCTNew, 1, ordinal, "ct.trk"},
	{"ct.est", fCTEst, 1, ordinal, "ct.trk"},
	{"ct.rel", fCTRel, 1, ordinal, "ct.trk"},
	{"ct.rpl", fCTRpl, 1, ordinal, "ct.trk"},
	{"ct.inv", fCTInv, 1, ordinal, "ct.trk"},
	{"ct.snat", fCTSNAT, 1, ordinal, "ct.trk"},
	{"ct.dnat", fCTDNAT, 1, ordinal, "ct.trk"},
	{"ct_state", fCTState, 32, ordinal, ""},
	{"ct_mark", fCTMark, 32, ordinal, ""},
	{"ct_label", fCTLabel, 128, ordinal, ""},
	{"arp.op", fArpOp, 16, nominal, "arp"},
	{"arp.spa", fArpSPA, 32, ordinal, "arp"},
	{"arp.tpa", fArpTPA, 32, ordinal, "arp"},
	{"arp.sha", fArpSHA, 48, ordinal, "arp"},
	{"arp.tha", fArpTHA, 48, ordinal, "arp"},
	{"nd.target", fNDTarget, 128, ordinal, "nd"},
	{"nd.sll", fNDSLL, 48, ordinal, "nd_ns"},
	{"nd.tll", fNDTLL, 48, ordinal, "nd_na"},
}

// subfieldDefs are OVN's names for ranges of a field's bits, bits lo to hi. They take
// the field's level and prerequisites.
var subfieldDefs = []struct {
	name, field string
	lo, hi      int
}{
	{"ct_mark.blocked", "ct_mark", 0, 0},
	{"ct_mark.natted", "ct_mark", 1, 1},
	{"ct_mark.skip_snat", "ct_mark", 2, 2},
	{"ct_mark.force_snat", "ct_mark", 3, 3},
	{"ct_mark.obs_stage", "ct_mark", 4, 5},
	{"ct_mark.allow_established", "ct_mark", 6, 6},
	{"ct_mark.ecmp_reply_port", "ct_mark", 16, 31},
	{"ct_mark.obs_collector_id", "ct_mark", 16, 23},
	{"ct_label.obs_unused", "ct_label", 0, 95},
	{"ct_label.ecmp_reply_eth", "ct_label", 32, 79},
	{"ct_label.label", "ct_label", 96, 127},
	{"ct_label.obs_point_id", "ct_label", 96, 127},
}

// predicateDefs are OVN's predicates, as OVN defines them. A predicate's level is
// nominal if its expansion tests a nominal symbol, boolean otherwise.
var predicateDefs = []struct{ name, expansion string }{
	{"eth.bcast", "eth.dst == ff:ff:ff:ff:ff:ff"},
	{"eth.mcastv6", "eth.dst[32..47] == 0x3333"},
	{"ip4", "eth.type == 0x800"},
	{"ip6", "eth.type == 0x86dd"},
	{"ip", "ip4 || ip6"},
	{"arp", "eth.type == 0x806"},
	{"ip4.src_mcast", "ip4.src[28..31] == 0xe"},
	{"ip4.mcast", "eth.mcast && ip4.dst[28..31] == 0xe"},
	{"ip6.mcast_rsvd", "ip6.dst[116..127] == 0xff0 && ip6.dst[0..111] == 0x0"},
	{"ip6.mcast_all_nodes", "ip6.dst == ff01::1 || ip6.dst == ff02::1"},
	{"ip6.mcast_all_rtrs", "ip6.dst == ff01::2 || ip6.dst == ff02::2 || ip6.dst == ff05::2"},
	{"ip6.mcast_sol_node", "ip6.dst == ff02::1:ff00:0000/104"},
	{"ip6.mcast_flood", "eth.mcastv6 && (ip6.mcast_rsvd || ip6.mcast_all_nodes || ip6.mcast_all_rtrs || ip6.mcast_sol_node)"},
	{"ip6.mcast", "eth.mcastv6 && ip6.dst[120..127] == 0xff"},
	{"tcp", "ip.proto == 6"},
	{"udp", "ip.proto == 17"},
	{"sctp", "ip.proto == 132"},
	{"icmp4", "ip4 && ip.proto == 1"},
	{"icmp6", "ip6 && ip.proto == 58"},
	{"icmp", "icmp4 || icmp6"},
	{"igmp", "ip4.mcast && ip.proto == 2"},
	{"nd", "icmp6.type == {135, 136} && icmp6.code == 0 && ip.ttl == 255"},
	{"nd_ns", "icmp6.type == 135 && icmp6.code == 0 && ip.ttl == 255"},
	{"nd_ns_mcast", "ip6.mcast && icmp6.type == 135 && icmp6.code == 0 && ip.ttl == 255"},
	{"nd_na", "icmp6.type == 136 && icmp6.code == 0 && ip.ttl == 255"},
	{"nd_rs", "icmp6.type == 133 && icmp6.code == 0 && ip.ttl == 255"},
	{"nd_ra", "icmp6.type == 134 && icmp6.code == 0 && ip.ttl == 255"},
	{"mldv1", "eth.mcastv6 && ip6.src == fe80::/10 && icmp6.type == {130, 131, 132}"},
	{"mldv2", "eth.mcastv6 && ip6.dst == ff02::16 && icmp6.type == 143"},
}

// unmodelledDefs are OVN's symbols (25.03) that a Packet has nothing for, by what they
// read. An expression that uses one is valid in OVN, so Parse reports it as not
// supported (ErrUnsupported) rather than as an unknown field.
var unmodelledDefs = []struct {
	what  string
	names []string
}{
	{"VLAN tag", []string{"vlan.tci", "vlan.present", "vlan.pcp", "vlan.vid"}},
	{"DSCP or ECN bits", []string{"ip.dscp", "ip.ecn"}},
	{"IPv6 flow label", []string{"ip6.label"}},
	{"fragment flags", []string{"ip.frag", "ip.is_frag", "ip.later_frag", "ip.first_frag"}},
	{"TCP flags", []string{"tcp.flags"}},
	{"RARP fields", []string{"rarp", "rarp.op", "rarp.spa", "rarp.sha", "rarp.tpa", "rarp.tha"}},
	{"OVN internal flags", []string{"flags", "flags.loopback", "flags.force_snat_for_dnat", "flags.force_snat_for_lb",
		"flags.skip_snat_for_lb", "flags.use_snat_zone", "flags.localnet", "flags.icmp_snat", "flags.tunnel_rx",
		"flags.from_ctrl", "flags.unsnat_not_tracked", "flags.unsnat_new"}},
}

var (
	symbols   = map[string]*symbol{}
	fieldSyms [fieldCount]*symbol
	// unmodelled maps each of unmodelledDefs' names to what it reads.
	unmodelled = map[string]string{}
)

func init() {
	for _, d := range fieldDefs {
		addField(d.name, d.id, d.width, d.level, d.prereq)
	}
	// OVN gives matches ten 32-bit registers, also read in pairs (xreg) and fours
	// (xxreg) as the wider registers they are halves and quarters of.
	for i := range regCount {
		addField(fmt.Sprintf("reg%d", i), fReg0+fieldID(i), 32, ordinal, "")
	}
	for i := range regCount / 2 {
		addField(fmt.Sprintf("xreg%d", i), fXReg0+fieldID(i), 64, ordinal, "")
	}
	for i := range regCount / 4 {
		addField(fmt.Sprintf("xxreg%d", i), fXXReg0+fieldID(i), 128, ordinal, "")
	}
	for _, d := range predicateDefs {
		symbols[d.name] = &symbol{name: d.name, width: 1, isPred: true, src: d.expansion}
	}
	for _, s := range symbols {
		s.build()
	}
	for _, d := range subfieldDefs {
		f := symbols[d.field]
		symbols[d.name] = &symbol{name: d.name, field: f.field, ofs: d.lo, width: d.hi - d.lo + 1, level: f.level,
			prereq: f.prereq, built: true}
	}
	for _, d := range unmodelledDefs {
		for _, name := range d.names {
			unmodelled[name] = d.what
		}
	}
}

func addField(name string, id fieldID, width int, l level, prereq string) {
	s := &symbol{name: name, field: id, width: width, level: l, src: prereq}
	symbols[name], fieldSyms[id] = s, s
}

// build compiles the symbol's prerequisite or expansion, building the symbols it uses
// first. It runs at package initialization only, so the parser sees every symbol built
// and never writes to one after that.
func (s *symbol) build() {
	if s.built {
		return
	}
	if s.building {
		panic(fmt.Sprintf("match: %s is defined in terms of itself", s.name))
	}
	s.building = true
	if s.src != "" {
		res, err := parse(s.src)
		if err != nil {
			panic(fmt.Sprintf("match: definition of %s: %v", s.name, err))
		}
		tree := annotate(res.tree)
		if s.isPred {
			s.pred, s.level = tree, boolean
			if res.sawNominal {
				s.level = nominal
			}
		} else {
			s.prereq = tree
		}
	}
	s.built, s.building = true, false
}
