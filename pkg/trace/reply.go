package trace

import (
	"fmt"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// reply traces the answer to a delivered packet: sent back from the port it reached,
// to the address it came from as the receiver saw it (after any SNAT), with the
// transport ports swapped and the connection marked established. A reply that cannot
// be built ends at once, saying why.
func (t *tracer) reply(v Verdict, got match.Packet) *Path {
	stop := func(reason string) *Path {
		return &Path{Packet: header(got), Hops: []Hop{}, Verdict: Verdict{Kind: Stuck, Zone: v.Zone, Datapath: v.Datapath, Port: v.Port,
			Reason: "no reply traced: " + reason, Packet: header(got)}}
	}
	z, err := t.zone(v.Zone)
	if err != nil {
		return stop(err.Error())
	}
	lsp, ls := z.SwitchPort(v.Port)
	if lsp == nil {
		return stop(fmt.Sprintf("port %s is not in node %s's zone", v.Port, v.Zone))
	}
	p := got
	p.InPort, p.OutPort = v.Port, ""
	p.IPSrc, p.IPDst = got.IPDst, got.IPSrc
	p.TTL, p.PktMark = 64, 0
	p.L4Src, p.L4Dst = got.L4Dst, got.L4Src
	switch p.ICMPType {
	case 8:
		p.ICMPType = 0
	case 128:
		p.ICMPType = 129
	}
	p.CT = match.CTState{Trk: true, Est: true, Rpl: true}
	// The port answers from the MAC that has the address, else from its first MAC (a
	// port that takes unknown addresses, or a packet routed to it for another address).
	addrs := portAddresses(lsp)
	if len(addrs) > 0 {
		p.EthSrc = addrs[0].mac
	}
	for _, a := range addrs {
		if hasAddr(a.ips, p.IPSrc) {
			p.EthSrc = a.mac
			break
		}
	}
	mac, ok := z.gatewayMAC(ls, lsp, p.IPSrc, p.IPDst)
	// A port answering from an address its switch does not serve (a management port
	// answering for the node's own address, which a reroute policy sent it) answers
	// through its gateway: the router port serving the port's own address, which also
	// answers ARP for the masquerade address the packet came from.
	for _, a := range addrs {
		for _, ip := range a.ips {
			if !ok && ip.Addr().Is6() == p.IPDst.Is6() {
				mac, ok = z.gatewayMAC(ls, lsp, ip.Addr(), p.IPDst)
			}
		}
	}
	if !ok {
		return stop(fmt.Sprintf("switch %s has neither %s nor a router port serving %s", ls.Name, p.IPDst, p.IPSrc))
	}
	p.EthDst = mac
	path, _ := t.walk(z, v.Port, p, true)
	return path
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
