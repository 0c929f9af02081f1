package trace

import (
	"net/netip"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// replyPacket is the answer to a delivered packet: sent back from the port it reached,
// to the address it came from as the receiver saw it (after any SNAT), with the
// transport ports swapped and the connection marked established.
func (t *tracer) replyPacket(fwd *Path, sent match.Packet) (*Zone, string, match.Packet, bool) {
	v := fwd.Verdict
	z, err := t.zone(v.Zone)
	if err != nil {
		return nil, "", match.Packet{}, false
	}
	lsp, ls := z.SwitchPort(v.Port)
	if lsp == nil {
		return nil, "", match.Packet{}, false
	}
	src, err1 := netip.ParseAddr(v.Packet.IPDst)
	dst, err2 := netip.ParseAddr(v.Packet.IPSrc)
	if err1 != nil || err2 != nil {
		return nil, "", match.Packet{}, false
	}
	p := sent
	p.InPort, p.OutPort = v.Port, ""
	p.IPSrc, p.IPDst = src, dst
	p.TTL, p.PktMark = 64, 0
	p.L4Src, p.L4Dst = sent.L4Dst, sent.L4Src
	switch p.ICMPType {
	case 8:
		p.ICMPType = 0
	case 128:
		p.ICMPType = 129
	}
	p.CT = match.CTState{Trk: true, Est: true, Rpl: true}
	for _, a := range portAddresses(lsp) {
		if hasAddr(a.ips, src) {
			p.EthSrc = a.mac
		}
	}
	mac, ok := z.gatewayMAC(ls, lsp, src, dst)
	if !ok {
		return nil, "", match.Packet{}, false
	}
	p.EthDst = mac
	return z, v.Port, p, true
}

// header is the reported part of a packet.
func header(p match.Packet) Header {
	h := Header{
		InPort: p.InPort, EthSrc: macString(p.EthSrc), EthDst: macString(p.EthDst),
		IPSrc: p.IPSrc.String(), IPDst: p.IPDst.String(), TTL: int(p.TTL), PktMark: p.PktMark,
	}
	switch p.Proto {
	case 6, 17:
		h.Proto = "tcp"
		if p.Proto == 17 {
			h.Proto = "udp"
		}
		h.SrcPort, h.DstPort = int(p.L4Src), int(p.L4Dst)
	case 1, 58:
		h.Proto = "icmp"
	default:
		h.Proto = "ip"
	}
	return h
}
