package match

import (
	"encoding/binary"
	"net/netip"
)

// Packet is the header of a simulated packet: the fields an expression can read, and
// the chassis it is being processed on.
//
// Every field is read as it is, whatever the others hold: it is the prerequisites an
// expression carries (see the package documentation) that make ip4.dst irrelevant to a
// packet whose EthType is not 0x0800, or tcp.dst to one whose Proto is not 6. ip4.src
// and ip4.dst read IPSrc and IPDst as IPv4 addresses (an IPv4-mapped IPv6 address is
// unmapped; any other value reads as 0.0.0.0); ip6.src and ip6.dst read them as 16
// bytes (an IPv4 address in its IPv4-mapped form; the zero Addr as ::).
type Packet struct {
	InPort, OutPort string  // logical port names
	EthSrc, EthDst  [6]byte // eth.src, eth.dst; eth.mcast is bit 0 of EthDst[0]
	EthType         uint16  // 0x0800 IPv4, 0x86dd IPv6, 0x0806 ARP
	// IPSrc and IPDst are IPv4 when EthType is 0x0800, IPv6 when 0x86dd; in an ARP
	// packet they are its sender and target protocol addresses (arp.spa, arp.tpa), the
	// fields OVS keeps them in too.
	IPSrc, IPDst netip.Addr
	ArpOp        uint16 // arp.op: 1 request, 2 reply
	// SHA and THA are the sender's and target's hardware addresses: arp.sha and arp.tha
	// of an ARP packet, nd.sll of a neighbour solicitation and nd.tll of an
	// advertisement (OVS keeps both pairs in the same fields).
	SHA, THA           [6]byte
	NDTarget           netip.Addr // nd.target of a neighbour solicitation or advertisement
	TTL                uint8      // ip.ttl
	Proto              uint8      // ip.proto: 6 tcp, 17 udp, 132 sctp, 1 icmp4, 58 icmp6
	L4Src, L4Dst       uint16     // tcp/udp/sctp ports
	ICMPType, ICMPCode uint8      // icmp4.type/code or icmp6.type/code
	PktMark            uint32     // pkt.mark
	CT                 CTState    // the connection-tracking state to assume (ct.* and ct_state)
	CTMark             uint32     // ct_mark, and its named bits such as ct_mark.blocked
	// CTLabel is ct_label, most significant byte first: ct_label[127] is the top bit of
	// CTLabel[0], ct_label.label (ct_label[96..127]) its first four bytes.
	CTLabel [16]byte
	// Reg holds the logical registers reg0 to reg9. The wider registers are made of
	// them, most significant first: xreg0 is reg0 and reg1, xreg4 reg8 and reg9, xxreg0
	// reg0 to reg3 and xxreg1 reg4 to reg7, as in OVN.
	Reg [10]uint32
	// Chassis is the chassis processing the packet: is_chassis_resident("p") is true
	// when Sets names it as the chassis port p is bound to.
	Chassis string
}

// CTState is the connection-tracking state a packet is assumed to have. ct.new,
// ct.est, ct.rel, ct.rpl, ct.inv, ct.snat and ct.dnat all require ct.trk, as in OVN:
// with Trk false, both ct.est and !ct.est are false. ct_state reads them as the bits
// OVS gives them: new 0, est 1, rel 2, rpl 3, inv 4, trk 5, snat 6, dnat 7.
type CTState struct{ Trk, New, Est, Rel, Rpl, Inv, SNAT, DNAT bool }

// Sets resolves what an expression names: $address_set, @port_group, and the chassis
// a port is bound to, for is_chassis_resident().
type Sets interface {
	// AddressSet returns the members of an address set; ok is false if there is none by
	// that name. A plain address is a /32 or /128 prefix. IPv4 members only ever match
	// ip4.* fields and IPv6 members (IPv4-mapped ones included) ip6.* fields.
	AddressSet(name string) (members []netip.Prefix, ok bool)
	// PortGroup returns the logical port names in a port group; ok is false if there is
	// none by that name.
	PortGroup(name string) (ports []string, ok bool)
	// Chassis returns the chassis a logical port is bound to, in the terms of
	// Packet.Chassis; ok is false for a port bound to none (a router's patch port) or
	// not known at all, which is resident nowhere, as ovn-controller has it.
	Chassis(port string) (chassis string, ok bool)
}

// fieldID names a packet field an expression can read.
type fieldID uint8

const (
	fInport fieldID = iota + 1
	fOutport
	fEthSrc
	fEthDst
	fEthType
	fEthMcast
	fIPProto
	fIPTTL
	fIP4Src
	fIP4Dst
	fIP6Src
	fIP6Dst
	fTCPSrc
	fTCPDst
	fUDPSrc
	fUDPDst
	fSCTPSrc
	fSCTPDst
	fICMP4Type
	fICMP4Code
	fICMP6Type
	fICMP6Code
	fPktMark
	fCTTrk
	fCTNew
	fCTEst
	fCTRel
	fCTRpl
	fCTInv
	fCTSNAT
	fCTDNAT
	fCTState
	fCTMark
	fCTLabel
	fArpOp
	fArpSPA
	fArpTPA
	fArpSHA
	fArpTHA
	fNDTarget
	fNDSLL
	fNDTLL
	fReg0                                     // reg0 to reg9 follow in order
	fXReg0     = fReg0 + fieldID(regCount)    // xreg0 to xreg4 follow in order
	fXXReg0    = fXReg0 + fieldID(regCount/2) // xxreg0 and xxreg1
	fieldCount = fXXReg0 + fieldID(regCount/4)
)

// regCount is the number of 32-bit logical registers OVN gives a match (reg0 to reg9).
const regCount = len(Packet{}.Reg)

// str reads a string field.
func (f fieldID) str(p *Packet) string {
	if f == fInport {
		return p.InPort
	}
	return p.OutPort
}

// value reads an integer field, right-aligned in 128 bits.
func (f fieldID) value(p *Packet) u128 {
	switch f {
	case fEthSrc:
		return mac(p.EthSrc)
	case fEthDst:
		return mac(p.EthDst)
	case fEthType:
		return u128{lo: uint64(p.EthType)}
	case fEthMcast:
		return u128{lo: uint64(p.EthDst[0] & 1)}
	case fIPProto:
		return u128{lo: uint64(p.Proto)}
	case fIPTTL:
		return u128{lo: uint64(p.TTL)}
	case fIP4Src, fArpSPA:
		return ipv4(p.IPSrc)
	case fIP4Dst, fArpTPA:
		return ipv4(p.IPDst)
	case fIP6Src:
		return ipv6(p.IPSrc)
	case fIP6Dst:
		return ipv6(p.IPDst)
	case fTCPSrc, fUDPSrc, fSCTPSrc:
		return u128{lo: uint64(p.L4Src)}
	case fTCPDst, fUDPDst, fSCTPDst:
		return u128{lo: uint64(p.L4Dst)}
	case fICMP4Type, fICMP6Type:
		return u128{lo: uint64(p.ICMPType)}
	case fICMP4Code, fICMP6Code:
		return u128{lo: uint64(p.ICMPCode)}
	case fPktMark:
		return u128{lo: uint64(p.PktMark)}
	case fCTTrk:
		return bit(p.CT.Trk)
	case fCTNew:
		return bit(p.CT.New)
	case fCTEst:
		return bit(p.CT.Est)
	case fCTRel:
		return bit(p.CT.Rel)
	case fCTRpl:
		return bit(p.CT.Rpl)
	case fCTInv:
		return bit(p.CT.Inv)
	case fCTSNAT:
		return bit(p.CT.SNAT)
	case fCTDNAT:
		return bit(p.CT.DNAT)
	case fCTState:
		return p.CT.bits()
	case fCTMark:
		return u128{lo: uint64(p.CTMark)}
	case fCTLabel:
		return u128{binary.BigEndian.Uint64(p.CTLabel[:8]), binary.BigEndian.Uint64(p.CTLabel[8:])}
	case fArpOp:
		return u128{lo: uint64(p.ArpOp)}
	case fArpSHA, fNDSLL:
		return mac(p.SHA)
	case fArpTHA, fNDTLL:
		return mac(p.THA)
	case fNDTarget:
		return ipv6(p.NDTarget)
	}
	return f.register(p)
}

// register reads reg0 to reg9, xreg0 to xreg4 and xxreg0 and xxreg1.
func (f fieldID) register(p *Packet) u128 {
	r := &p.Reg
	switch {
	case f >= fXXReg0:
		i := 4 * int(f-fXXReg0)
		return u128{uint64(r[i])<<32 | uint64(r[i+1]), uint64(r[i+2])<<32 | uint64(r[i+3])}
	case f >= fXReg0:
		i := 2 * int(f-fXReg0)
		return u128{lo: uint64(r[i])<<32 | uint64(r[i+1])}
	case f >= fReg0:
		return u128{lo: uint64(r[f-fReg0])}
	}
	return u128{}
}

// bits is the state as OVS's ct_state field holds it.
func (s CTState) bits() u128 {
	var v uint64
	for i, b := range [...]bool{s.New, s.Est, s.Rel, s.Rpl, s.Inv, s.Trk, s.SNAT, s.DNAT} {
		if b {
			v |= 1 << i
		}
	}
	return u128{lo: v}
}

func mac(b [6]byte) u128 {
	return u128{lo: uint64(b[0])<<40 | uint64(b[1])<<32 | uint64(binary.BigEndian.Uint32(b[2:]))}
}

func ipv4(a netip.Addr) u128 {
	if a.Is4() || a.Is4In6() {
		b := a.Unmap().As4()
		return u128{lo: uint64(binary.BigEndian.Uint32(b[:]))}
	}
	return u128{}
}

func ipv6(a netip.Addr) u128 {
	if !a.IsValid() {
		return u128{}
	}
	b := a.As16()
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func bit(b bool) u128 {
	if b {
		return u128{lo: 1}
	}
	return u128{}
}
