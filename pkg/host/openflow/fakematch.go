package openflow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The Fake's normaliser knows the match fields below and prints them in the order and
// form OVS 3.5's ovs-ofctl does (checked against it by the package's shared tests). It
// is stricter than ovs-ofctl where ovs-ofctl quietly does something surprising: a field
// given twice (ovs-ofctl keeps the last), an empty value (ignored), a field without its
// prerequisite (dropped, widening the match) are all refused.

// protocol is one of ovs-ofctl's shorthands for an Ethernet type and IP protocol.
type protocol struct {
	name    string
	dlType  uint16
	nwProto int // -1: any
}

const (
	ethIPv4 = 0x0800
	ethIPv6 = 0x86dd
	ethARP  = 0x0806
	ethRARP = 0x8035
)

var protocols = []protocol{
	{"ip", ethIPv4, -1}, {"ipv6", ethIPv6, -1}, {"arp", ethARP, -1}, {"rarp", ethRARP, -1},
	{"icmp", ethIPv4, 1}, {"tcp", ethIPv4, 6}, {"udp", ethIPv4, 17}, {"sctp", ethIPv4, 132},
	{"icmp6", ethIPv6, 58}, {"tcp6", ethIPv6, 6}, {"udp6", ethIPv6, 17}, {"sctp6", ethIPv6, 132},
}

func protocolNamed(name string) (protocol, bool) {
	for _, p := range protocols {
		if p.name == name {
			return p, true
		}
	}
	return protocol{}, false
}

// Print positions of the fields, as ovs-ofctl orders them.
const (
	posCTState = iota
	posCTZone
	posCTMark
	posProtocol
	posInPort
	posDLSrc
	posDLDst
	posDLType
	posNWSrc
	posNWDst
	posIPv6Src
	posIPv6Dst
	posNWProto
	posARPOp
	posTPSrc
	posTPDst
	posICMPType
	posICMPCode
)

// prereq says which packets a field needs the match to be limited to.
type prereq int

const (
	needNothing prereq = iota
	needIPv4
	needIPv6
	needARP
	needIPv4OrARP
	needL4Ports // tcp, udp, sctp (either family)
	needICMP    // icmp or icmp6
)

// fieldSpec describes a match field the Fake knows.
type fieldSpec struct {
	pos    int
	prereq prereq
	norm   func(string) (string, error) // the printed value; "" drops the field (a /0 mask)
}

var fieldSpecs = map[string]fieldSpec{
	"ct_state":    {posCTState, needNothing, normCTState},
	"ct_zone":     {posCTZone, needNothing, uintNorm(16)},
	"ct_mark":     {posCTMark, needNothing, normHexMasked32},
	"in_port":     {posInPort, needNothing, normPort},
	"dl_src":      {posDLSrc, needNothing, normMAC},
	"dl_dst":      {posDLDst, needNothing, normMAC},
	"nw_src":      {posNWSrc, needIPv4OrARP, normIPv4},
	"nw_dst":      {posNWDst, needIPv4OrARP, normIPv4},
	"arp_spa":     {posNWSrc, needARP, normIPv4},
	"arp_tpa":     {posNWDst, needARP, normIPv4},
	"ipv6_src":    {posIPv6Src, needIPv6, normIPv6},
	"ipv6_dst":    {posIPv6Dst, needIPv6, normIPv6},
	"arp_op":      {posARPOp, needARP, uintNorm(16)},
	"tp_src":      {posTPSrc, needL4Ports, uintNorm(16)},
	"tp_dst":      {posTPDst, needL4Ports, uintNorm(16)},
	"icmp_type":   {posICMPType, needICMP, uintNorm(8)},
	"icmp_code":   {posICMPCode, needICMP, uintNorm(8)},
	"icmpv6_type": {posICMPType, needICMP, uintNorm(8)},
	"icmpv6_code": {posICMPCode, needICMP, uintNorm(8)},
}

// printedName is the name ovs-ofctl prints a field under.
var printedName = map[string]string{"icmpv6_type": "icmp_type", "icmpv6_code": "icmp_code"}

// parsedMatch is a match the Fake understood.
type parsedMatch struct {
	dlType  uint16 // 0: any
	nwProto int    // -1: any
	text    string // normalised
}

func (m parsedMatch) isIP() bool { return m.dlType == ethIPv4 || m.dlType == ethIPv6 }

// normaliseMatch parses a match and prints it as ovs-ofctl does.
func normaliseMatch(match string) (parsedMatch, error) {
	m := parsedMatch{nwProto: -1}
	if match == "" {
		return m, nil
	}
	type printed struct {
		pos  int
		text string
	}
	var out []printed
	seen := map[string]bool{}
	shorthand := ""
	dlTypeText, nwProtoText := "", ""
	var fields [][2]string
	for _, tok := range strings.Split(match, ",") {
		key, value, hasValue := strings.Cut(tok, "=")
		if seen[key] {
			return m, fmt.Errorf("field %q given twice in %q", key, match)
		}
		seen[key] = true
		if !hasValue {
			if _, ok := protocolNamed(key); !ok {
				return m, fmt.Errorf("unknown keyword %q in %q", key, match)
			}
			if shorthand != "" {
				return m, fmt.Errorf("two protocols %q and %q in %q", shorthand, key, match)
			}
			shorthand = key
			continue
		}
		if value == "" {
			return m, fmt.Errorf("field %q has no value in %q", key, match)
		}
		switch key {
		case "dl_type":
			dlTypeText = value
		case "nw_proto":
			nwProtoText = value
		default:
			if _, ok := fieldSpecs[key]; !ok {
				return m, fmt.Errorf("unknown keyword %q in %q (the fake knows %s)", key, match, knownFields())
			}
			fields = append(fields, [2]string{key, value})
		}
	}
	if err := m.setProtocol(shorthand, dlTypeText, nwProtoText); err != nil {
		return m, fmt.Errorf("match %q: %w", match, err)
	}
	p, ok := m.shorthand()
	if ok {
		out = append(out, printed{posProtocol, p})
	} else if m.dlType != 0 {
		out = append(out, printed{posDLType, fmt.Sprintf("dl_type=0x%04x", m.dlType)})
	}
	if sh, _ := protocolNamed(p); m.nwProto >= 0 && sh.nwProto != m.nwProto {
		out = append(out, printed{posNWProto, fmt.Sprintf("nw_proto=%d", m.nwProto)})
	}
	for _, kv := range fields {
		key, value := kv[0], kv[1]
		spec := fieldSpecs[key]
		if !m.meets(spec.prereq) {
			return m, fmt.Errorf("match %q: %s needs %s in the match (ovs-ofctl would drop it and match more packets)", match, key, prereqText[spec.prereq])
		}
		norm, err := spec.norm(value)
		if err != nil {
			return m, fmt.Errorf("match %q: %s: %w", match, key, err)
		}
		if norm == "" {
			continue
		}
		name := key
		if n, ok := printedName[key]; ok {
			name = n
		}
		if (key == "nw_src" || key == "nw_dst") && (m.dlType == ethARP || m.dlType == ethRARP) {
			name = map[string]string{"nw_src": "arp_spa", "nw_dst": "arp_tpa"}[key]
		}
		out = append(out, printed{spec.pos, name + "=" + norm})
	}
	slices.SortStableFunc(out, func(a, b printed) int { return a.pos - b.pos })
	texts := make([]string, len(out))
	for i, p := range out {
		texts[i] = p.text
	}
	m.text = strings.Join(texts, ",")
	return m, nil
}

func knownFields() string {
	names := []string{"dl_type", "nw_proto"}
	for k := range fieldSpecs {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// setProtocol combines a shorthand, dl_type and nw_proto into one Ethernet type and IP
// protocol, refusing contradictions.
func (m *parsedMatch) setProtocol(shorthand, dlType, nwProto string) error {
	if shorthand != "" {
		p, _ := protocolNamed(shorthand)
		m.dlType, m.nwProto = p.dlType, p.nwProto
	}
	if dlType != "" {
		v, err := strconv.ParseUint(dlType, 0, 16)
		if err != nil {
			return fmt.Errorf("dl_type %q: %w", dlType, err)
		}
		if m.dlType != 0 && m.dlType != uint16(v) {
			return fmt.Errorf("dl_type %s contradicts %s", dlType, shorthand)
		}
		m.dlType = uint16(v)
	}
	if nwProto != "" {
		v, err := strconv.ParseUint(nwProto, 0, 8)
		if err != nil {
			return fmt.Errorf("nw_proto %q: %w", nwProto, err)
		}
		if !m.isIP() {
			return fmt.Errorf("nw_proto needs ip or ipv6 in the match (ovs-ofctl would drop it and match more packets)")
		}
		if m.nwProto >= 0 && m.nwProto != int(v) {
			return fmt.Errorf("nw_proto %s contradicts %s", nwProto, shorthand)
		}
		m.nwProto = int(v)
	}
	return nil
}

// shorthand is the protocol keyword ovs-ofctl prints for the match's Ethernet type and
// IP protocol, if there is one.
func (m parsedMatch) shorthand() (string, bool) {
	for _, p := range protocols {
		if p.dlType == m.dlType && p.nwProto == m.nwProto {
			return p.name, true
		}
	}
	if m.isIP() && m.nwProto >= 0 {
		// ip,nw_proto=47: the family's keyword now, the protocol number later.
		p := parsedMatch{dlType: m.dlType, nwProto: -1}
		return p.shorthand()
	}
	return "", false
}

var prereqText = map[prereq]string{
	needIPv4: "ip", needIPv6: "ipv6", needARP: "arp", needIPv4OrARP: "ip or arp",
	needL4Ports: "tcp, udp or sctp", needICMP: "icmp or icmp6",
}

func (m parsedMatch) meets(p prereq) bool {
	switch p {
	case needIPv4:
		return m.dlType == ethIPv4
	case needIPv6:
		return m.dlType == ethIPv6
	case needARP:
		return m.dlType == ethARP || m.dlType == ethRARP
	case needIPv4OrARP:
		return m.dlType == ethIPv4 || m.dlType == ethARP || m.dlType == ethRARP
	case needL4Ports:
		return m.isIP() && (m.nwProto == 6 || m.nwProto == 17 || m.nwProto == 132)
	case needICMP:
		return (m.dlType == ethIPv4 && m.nwProto == 1) || (m.dlType == ethIPv6 && m.nwProto == 58)
	}
	return true
}
