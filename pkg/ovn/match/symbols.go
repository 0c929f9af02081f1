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

// symbol is a name an expression may use: a field of the packet or a predicate.
type symbol struct {
	name   string
	field  fieldID // 0 for a predicate
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
// is nominal in OVN when the OpenFlow field under it cannot be masked.
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
	{"arp.op", fArpOp, 16, nominal, "arp"},
	{"arp.spa", fArpSPA, 32, ordinal, "arp"},
	{"arp.tpa", fArpTPA, 32, ordinal, "arp"},
	{"nd.target", fNDTarget, 128, ordinal, "nd"},
}

// predicateDefs are OVN's predicates, written without subfields, which this package
// does not parse: ip4.dst[28..31] == 0xe is ip4.dst == 224.0.0.0/4, and OVN's
// eth.mcastv6 (eth.dst[32..47] == 0x3333) is the masked MAC below. A predicate's level
// is nominal if its expansion tests a nominal symbol, boolean otherwise.
var predicateDefs = []struct{ name, expansion string }{
	{"eth.bcast", "eth.dst == ff:ff:ff:ff:ff:ff"},
	{"ip4", "eth.type == 0x800"},
	{"ip6", "eth.type == 0x86dd"},
	{"ip", "ip4 || ip6"},
	{"arp", "eth.type == 0x806"},
	{"ip4.mcast", "eth.mcast && ip4.dst == 224.0.0.0/4"},
	{"ip6.mcast", "eth.dst == 33:33:00:00:00:00/ff:ff:00:00:00:00 && ip6.dst == ff00::/8"},
	{"tcp", "ip.proto == 6"},
	{"udp", "ip.proto == 17"},
	{"sctp", "ip.proto == 132"},
	{"icmp4", "ip4 && ip.proto == 1"},
	{"icmp6", "ip6 && ip.proto == 58"},
	{"icmp", "icmp4 || icmp6"},
	{"nd", "icmp6.type == {135, 136} && icmp6.code == 0 && ip.ttl == 255"},
	{"nd_ns", "icmp6.type == 135 && icmp6.code == 0 && ip.ttl == 255"},
	{"nd_na", "icmp6.type == 136 && icmp6.code == 0 && ip.ttl == 255"},
}

var (
	symbols   = map[string]*symbol{}
	fieldSyms [fieldCount]*symbol
)

func init() {
	for _, d := range fieldDefs {
		s := &symbol{name: d.name, field: d.id, width: d.width, level: d.level, src: d.prereq}
		symbols[d.name], fieldSyms[d.id] = s, s
	}
	for _, d := range predicateDefs {
		symbols[d.name] = &symbol{name: d.name, width: 1, isPred: true, src: d.expansion}
	}
	for _, s := range symbols {
		s.build()
	}
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
