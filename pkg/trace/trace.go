// Package trace simulates a packet through the logical network that the NB databases
// of one or more zones describe, the way OVN's pipelines would treat it: switch ACLs
// and L2 lookup, router admission, NAT, routes (longest prefix first, source-IP and
// destination-IP routes competing as northd ranks them), router policies, next-hop
// resolution, router-to-router peers and switch-router patch ports. A port that lives
// on another chassis hands the packet to that node's zone, and the simulation goes on
// there, so one trace can cross every zone on the path.
//
// Every decision becomes a Hop naming the NB row that took it and the Kubernetes
// object behind the row; the path ends in a Verdict. The simulator reads rows only: it
// never talks to a server, so a trace can be replayed from saved zones.
package trace

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// ZoneSource gives the zone of a node. The simulator asks only for the zones the
// packet reaches, and asks for each at most once per trace.
type ZoneSource interface {
	Zone(ctx context.Context, node string) (*Zone, error)
}

// Zones is a ZoneSource of zones already at hand, by node.
type Zones map[string]*Zone

// Zone returns node's zone, or an error naming the node.
func (z Zones) Zone(_ context.Context, node string) (*Zone, error) {
	if zone, ok := z[node]; ok {
		return zone, nil
	}
	return nil, fmt.Errorf("no zone for node %s", node)
}

// Cluster is what a trace knows beyond the zones themselves.
type Cluster struct {
	// Zones gives each node's zone.
	Zones ZoneSource
	// Chassis maps a chassis name (a node's k8s.ovn.org/node-chassis-id) to the node,
	// so a port requested on a chassis leads to that node's zone.
	Chassis map[string]string
	// Pods maps a logical switch port to the pod ("namespace/name") it serves; a port it
	// does not name is reported by its port name alone.
	Pods map[string]string

	ports []PodPort
}

// Proto is the transport of a traced packet.
type Proto string

// The transports a trace can send.
const (
	ICMP Proto = "icmp"
	TCP  Proto = "tcp"
	UDP  Proto = "udp"
)

// Request is the packet to trace and where it starts.
type Request struct {
	// Node is the zone the packet starts in, and Port the logical switch port it
	// enters through (a pod's port, or a node's management port).
	Node, Port string
	// Src is the packet's source address; the zero value takes the port's address of
	// Dst's family.
	Src netip.Addr
	// Dst is where the packet is going.
	Dst netip.Addr
	// Proto, SrcPort and DstPort describe the transport; the zero Proto is ICMP (an echo
	// request). A zero SrcPort is 40000 for TCP and UDP.
	Proto            Proto
	SrcPort, DstPort uint16
	// TTL is the packet's IP TTL or hop limit; 0 means 64.
	TTL uint8
	// Reply also traces the answer, from where the packet was delivered back to Port.
	Reply bool
}

// ErrBadRequest marks an error in the request itself (an unknown port, an address the
// port does not have), as opposed to something found on the way. Such errors match it
// with errors.Is; their text is only the problem, ready to show a user.
var ErrBadRequest = errors.New("bad trace request")

// badRequest is an ErrBadRequest in its own words.
type badRequest struct{ msg string }

func (e *badRequest) Error() string        { return e.msg }
func (e *badRequest) Is(target error) bool { return target == ErrBadRequest }

func badRequestf(format string, args ...any) error {
	return &badRequest{msg: fmt.Sprintf(format, args...)}
}

// Trace follows req's packet, and its reply when asked, through c's zones.
func Trace(ctx context.Context, c *Cluster, req Request) (*Result, error) {
	t := &tracer{ctx: ctx, c: c, zones: map[string]*Zone{}, zoneErr: map[string]error{}, resolvers: map[*Zone]*names{}}
	start, err := t.zone(req.Node)
	if err != nil {
		return nil, fmt.Errorf("read the source's zone: %w", err)
	}
	pkt, err := firstPacket(start, req)
	if err != nil {
		return nil, err
	}
	res := &Result{SchemaVersion: SchemaVersion}
	var last match.Packet
	res.Forward, last = t.walk(start, req.Port, pkt, false)
	if req.Reply && res.Forward.Verdict.Kind == Delivered {
		res.Reply = t.reply(res.Forward.Verdict, last)
	}
	return res, nil
}

// tracer holds what one trace shares between its two directions: the zones it has
// read and the connections it has tracked. One goroutine uses it.
type tracer struct {
	ctx       context.Context
	c         *Cluster
	zones     map[string]*Zone
	zoneErr   map[string]error
	resolvers map[*Zone]*names
	conns     []translation
}

// translation is a NAT a connection went through, kept so the reply can be
// translated back as conntrack would.
type translation struct {
	zone, router string
	snat         bool // source rewritten (else destination)
	from, to     netip.Addr
}

// zone reads node's zone once.
func (t *tracer) zone(node string) (*Zone, error) {
	if z, ok := t.zones[node]; ok {
		return z, nil
	}
	if err, ok := t.zoneErr[node]; ok {
		return nil, err
	}
	z, err := t.c.Zones.Zone(t.ctx, node)
	if err != nil {
		t.zoneErr[node] = err
		return nil, err
	}
	t.zones[node] = z
	return z, nil
}

// nodeOfChassis is the node a chassis name belongs to.
func (t *tracer) nodeOfChassis(chassis string) (string, bool) {
	n, ok := t.c.Chassis[chassis]
	return n, ok
}

// firstPacket builds the packet a port sends towards req.Dst: from the port's own MAC
// and address, to the MAC of the destination when it shares the port's switch, and
// otherwise to the router port that serves the port's subnet (its default gateway).
func firstPacket(z *Zone, req Request) (match.Packet, error) {
	var p match.Packet
	lsp, ls := z.SwitchPort(req.Port)
	if lsp == nil || ls == nil {
		return p, badRequestf("node %s's zone has no logical switch port %q", z.Node, req.Port)
	}
	if !req.Dst.IsValid() {
		return p, badRequestf("no destination address")
	}
	v6 := req.Dst.Is6()
	src := req.Src
	var srcPrefix netip.Prefix
	for _, a := range portAddresses(lsp) {
		for _, ip := range a.ips {
			if (src.IsValid() && ip.Addr() == src) || (!src.IsValid() && ip.Addr().Is6() == v6) {
				p.EthSrc, srcPrefix = a.mac, ip
				src = ip.Addr()
				break
			}
		}
		if srcPrefix.IsValid() {
			break
		}
	}
	if !srcPrefix.IsValid() {
		return p, badRequestf("port %s has no IPv%s address%s (its addresses: %s)", req.Port, family(v6), ifSrc(req.Src), strings.Join(lsp.Addresses, "; "))
	}
	if src.Is6() != v6 {
		return p, badRequestf("source %s and destination %s are of different IP families", src, req.Dst)
	}
	p.InPort = req.Port
	p.IPSrc, p.IPDst = src, req.Dst
	p.TTL = req.TTL
	if p.TTL == 0 {
		p.TTL = 64
	}
	p.EthType = 0x0800
	if v6 {
		p.EthType = 0x86dd
	}
	setTransport(&p, req)
	p.CT = match.CTState{Trk: true, New: true}
	dstMAC, ok := z.gatewayMAC(ls, lsp, src, req.Dst)
	if !ok {
		return p, badRequestf("switch %s has neither %s nor a router port serving %s", ls.Name, req.Dst, src)
	}
	p.EthDst = dstMAC
	return p, nil
}

func ifSrc(src netip.Addr) string {
	if src.IsValid() {
		return " " + src.String()
	}
	return ""
}

func family(v6 bool) string {
	if v6 {
		return "6"
	}
	return "4"
}

func setTransport(p *match.Packet, req Request) {
	switch req.Proto {
	case TCP, UDP:
		p.Proto = 6
		if req.Proto == UDP {
			p.Proto = 17
		}
		p.L4Src, p.L4Dst = req.SrcPort, req.DstPort
		if p.L4Src == 0 {
			p.L4Src = 40000
		}
	default:
		p.Proto, p.ICMPType = 1, 8
		if p.IPDst.Is6() {
			p.Proto, p.ICMPType = 58, 128
		}
	}
}
