package trace

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/match"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// maxDatapaths bounds a path: a packet that crosses more datapaths than this is in a
// loop (OVN itself would stop it at TTL 0 or at its resubmit limit).
const maxDatapaths = 64

// walker follows one packet in one direction.
type walker struct {
	t         *tracer
	reply     bool
	p         match.Packet
	path      *Path
	datapaths int
	// uncertain is set once a row the simulator could not evaluate could have changed
	// what happened to the packet.
	uncertain bool
}

// walk follows p from inport, and returns its path and the packet as it ended.
func (t *tracer) walk(z *Zone, inport string, p match.Packet, reply bool) (*Path, match.Packet) {
	w := &walker{t: t, reply: reply, p: p, path: &Path{Packet: header(p), Hops: []Hop{}}}
	w.switchIngress(z, inport)
	w.path.Verdict.Packet = header(w.p)
	w.path.Verdict.Uncertain = w.uncertain
	return w.path, w.p
}

func (w *walker) hop(h Hop) { w.path.Hops = append(w.path.Hops, h) }

func (w *walker) end(v Verdict) { w.path.Verdict = v }

// enter counts a datapath; false means the path is looping and has ended.
func (w *walker) enter(z *Zone, datapath string) bool {
	w.datapaths++
	if w.datapaths > maxDatapaths {
		w.end(Verdict{Kind: Stuck, Zone: z.Node, Datapath: datapath,
			Reason: fmt.Sprintf("loop: the packet crossed %d datapaths without arriving", maxDatapaths)})
		return false
	}
	return true
}

// switchIngress is a packet arriving on a switch through inport: from-lport ACLs,
// then the L2 lookup that picks the output port.
func (w *walker) switchIngress(z *Zone, inport string) {
	_, ls := z.SwitchPort(inport)
	if ls == nil {
		w.end(Verdict{Kind: Stuck, Zone: z.Node, Reason: fmt.Sprintf("port %s is on no switch in node %s's zone", inport, z.Node)})
		return
	}
	if !w.enter(z, ls.Name) {
		return
	}
	w.p.InPort, w.p.OutPort = inport, ""
	if !w.acls(z, ls, nbdb.ACLDirectionFromLport) {
		return
	}
	out, how := z.l2Lookup(ls, w.p.EthDst)
	if out == nil {
		w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: ls.Name,
			Reason: fmt.Sprintf("no port on switch %s has MAC %s", ls.Name, macString(w.p.EthDst))})
		return
	}
	w.hop(Hop{Zone: z.Node, Datapath: ls.Name, Kind: "switch", Stage: StageL2, InPort: inport, OutPort: out.Name,
		Row: portRow(out), Note: how})
	w.switchEgress(z, ls, out)
}

// switchEgress is a packet leaving a switch through out: handed to the zone that owns
// a remote port, or through to-lport ACLs to the port itself.
func (w *walker) switchEgress(z *Zone, ls *nbdb.LogicalSwitch, out *nbdb.LogicalSwitchPort) {
	w.p.OutPort = out.Name
	if owner, remote := w.remoteSwitchPort(z, out); remote {
		w.handoffSwitch(z, ls, out, owner)
		return
	}
	if !w.acls(z, ls, nbdb.ACLDirectionToLport) {
		return
	}
	switch out.Type {
	case "router":
		lrp := out.Options["router-port"]
		if z.routerPorts[lrp] == nil {
			w.end(Verdict{Kind: Stuck, Zone: z.Node, Datapath: ls.Name, Port: out.Name,
				Reason: fmt.Sprintf("switch port %s names router port %q, which node %s's zone lacks", out.Name, lrp, z.Node)})
			return
		}
		w.hop(Hop{Zone: z.Node, Datapath: ls.Name, Kind: "switch", Stage: StageOutput, OutPort: out.Name,
			Note: "to router port " + lrp})
		w.routerIngress(z, lrp)
	case "localnet":
		w.leave(z, ls, out)
	default:
		v := Verdict{Kind: Delivered, Zone: z.Node, Datapath: ls.Name, Port: out.Name}
		v.Pod = w.t.c.Pods[out.Name]
		if v.Pod != "" {
			v.Reason = fmt.Sprintf("delivered to pod %s on %s", v.Pod, z.Node)
		} else {
			v.Reason = fmt.Sprintf("delivered to port %s on %s", out.Name, z.Node)
		}
		w.hop(Hop{Zone: z.Node, Datapath: ls.Name, Kind: "switch", Stage: StageDelivery, OutPort: out.Name, Row: portRow(out), Note: v.Reason})
		w.end(v)
	}
}

// leave ends a path that leaves the logical network through a localnet port. A packet
// for a pod of another network that leaves this way has left its own network for the
// host, which is how user-defined networks that no connect joins stay apart: say so.
func (w *walker) leave(z *Zone, ls *nbdb.LogicalSwitch, out *nbdb.LogicalSwitchPort) {
	v := Verdict{Kind: LeftCluster, Zone: z.Node, Datapath: ls.Name, Port: out.Name,
		Reason: fmt.Sprintf("left the cluster via %s as %s", z.Node, w.p.IPSrc)}
	network := cluster.UserNetworkName(ls.ExternalIDs[rows.NetworkKey])
	if pod, ok := w.t.c.PodOfIP(w.p.IPDst); ok && !sameNetwork(network, pod.Network) {
		v.Kind = Dropped
		v.Pod = pod.Pod
		v.Reason = fmt.Sprintf("%s is pod %s on network %s, which this packet's network does not reach: "+
			"it left through %s's gateway as %s, and the host keeps networks apart unless a ClusterNetworkConnect joins them",
			w.p.IPDst, pod.Pod, pod.Network, z.Node, w.p.IPSrc)
	}
	w.end(v)
}

// sameNetwork reports whether a pod port's network (a name users know, or a network
// attachment "namespace/name") is the network named display.
func sameNetwork(display, podNetwork string) bool {
	return display != "" && (podNetwork == display || strings.HasSuffix(podNetwork, "/"+display))
}

// remoteSwitchPort reports whether out lives on another node's chassis, and which node.
func (w *walker) remoteSwitchPort(z *Zone, out *nbdb.LogicalSwitchPort) (string, bool) {
	chassis := out.Options["requested-chassis"]
	if out.Type != "remote" && chassis == "" {
		return "", false
	}
	node, known := w.t.nodeOfChassis(chassis)
	if out.Type != "remote" && (!known || node == z.Node) {
		return "", false // a local port, or one whose chassis we cannot place: treat it as here
	}
	return node, true
}

// handoffSwitch continues at the egress of the same switch and port in the owner's zone.
func (w *walker) handoffSwitch(z *Zone, ls *nbdb.LogicalSwitch, out *nbdb.LogicalSwitchPort, owner string) {
	next, ok := w.handoff(z, ls.Name, "switch", out.Name, out.Options["requested-chassis"], owner)
	if !ok {
		return
	}
	// The tunnel carries the port's key, not its name: the receiving zone finds the port
	// by key, under whatever name it has there (a port without a key, by name).
	var nport *nbdb.LogicalSwitchPort
	var nls *nbdb.LogicalSwitch
	key := out.Options["requested-tnl-key"]
	if key == "" {
		nport, nls = next.SwitchPort(out.Name)
	} else if nport = next.SwitchPortByKey(ls.Name, key); nport != nil {
		_, nls = next.SwitchPort(nport.Name)
	}
	if nport == nil || nls == nil || nls.Name != ls.Name {
		w.end(Verdict{Kind: Stuck, Zone: owner, Datapath: ls.Name, Port: out.Name,
			Reason: fmt.Sprintf("node %s's zone has no port %s on switch %s", owner, describePort(out.Name, key), ls.Name)})
		return
	}
	if nport.Name != out.Name {
		w.hop(Hop{Zone: owner, Datapath: ls.Name, Kind: "switch", Stage: StageHandoff, OutPort: nport.Name,
			Note: fmt.Sprintf("tunnel key %s is port %s in node %s's zone", key, nport.Name, owner)})
	}
	if nport.Type == "remote" {
		w.end(Verdict{Kind: Stuck, Zone: owner, Datapath: ls.Name, Port: out.Name,
			Reason: fmt.Sprintf("port %s is remote in node %s's zone too", out.Name, owner)})
		return
	}
	if !w.enter(next, ls.Name) {
		return
	}
	w.switchEgress(next, nls, nport)
}

// describePort names a port the way a zone would find it: by tunnel key when it has one.
func describePort(name, key string) string {
	if key == "" {
		return name
	}
	return fmt.Sprintf("with tunnel key %s (%s here)", key, name)
}

// handoff records the crossing to owner's zone and reads that zone.
func (w *walker) handoff(z *Zone, datapath, kind, port, chassis, owner string) (*Zone, bool) {
	if owner == "" {
		w.end(Verdict{Kind: Stuck, Zone: z.Node, Datapath: datapath, Port: port,
			Reason: fmt.Sprintf("port %s is on chassis %q, which no node names", port, chassis)})
		return nil, false
	}
	next, err := w.t.zone(owner)
	if err != nil {
		w.end(Verdict{Kind: Stuck, Zone: z.Node, Datapath: datapath, Port: port,
			Reason: fmt.Sprintf("port %s is on node %s, whose zone could not be read: %v", port, owner, err)})
		return nil, false
	}
	w.hop(Hop{Zone: z.Node, Datapath: datapath, Kind: kind, Stage: StageHandoff, OutPort: port,
		Note: fmt.Sprintf("port %s is on %s (chassis %s): continued in its zone", port, owner, chassis)})
	return next, true
}

// acls applies a switch's ACLs of one direction to the packet; false means the packet
// was dropped and the path has ended. ACLs of the switch and of every port group with a
// port on it take part, by tier and then by priority, as in OVN. An ACL the simulator
// cannot evaluate, met before the one that decides (or at its tier and priority, where
// OVN's choice is not defined) and acting otherwise, is reported and makes the path
// uncertain.
func (w *walker) acls(z *Zone, ls *nbdb.LogicalSwitch, dir nbdb.ACLDirection) bool {
	list := z.aclsFor(ls, dir)
	if len(list) == 0 {
		return true
	}
	if w.reply && z.isStateful(ls) {
		w.hop(Hop{Zone: z.Node, Datapath: ls.Name, Kind: "switch", Stage: StageACL, InPort: w.p.InPort, OutPort: w.p.OutPort,
			Note: "reply of a tracked connection: the switch is stateful, so its ACLs let it through"})
		return true
	}
	var doubts []doubt
	consider := func(a *nbdb.ACL) outcome {
		o, why := w.evalMatch(z, "ACL", a.UUID, a.Match)
		if o == unknown {
			doubts = append(doubts, doubt{effect: aclEffect(a.Action), hop: Hop{Zone: z.Node, Datapath: ls.Name, Kind: "switch", Stage: StageACL,
				InPort: w.p.InPort, OutPort: w.p.OutPort, Row: aclRow(a),
				Note: fmt.Sprintf("%s ACL %s not evaluated (%s): OVN may apply it", dir, a.Action, why)}})
		}
		return o
	}
	passed := -1
	for i, a := range list {
		if a.Tier == passed {
			continue // a pass already decided this tier
		}
		if consider(a) != applies {
			continue
		}
		for _, tie := range list[i+1:] {
			if tie.Tier != a.Tier || tie.Priority != a.Priority {
				break
			}
			consider(tie)
		}
		w.settle(doubts, aclEffect(a.Action))
		doubts = nil
		row := aclRow(a)
		w.hop(Hop{Zone: z.Node, Datapath: ls.Name, Kind: "switch", Stage: StageACL, InPort: w.p.InPort, OutPort: w.p.OutPort, Row: row,
			Note: fmt.Sprintf("%s ACL %s", dir, a.Action)})
		switch a.Action {
		case nbdb.ACLActionDrop, nbdb.ACLActionReject:
			w.end(Verdict{Kind: Dropped, Zone: z.Node, Datapath: ls.Name, Row: row,
				Reason: fmt.Sprintf("dropped by %s ACL %s (priority %d) on switch %s", dir, a.Match, a.Priority, ls.Name)})
			return false
		case nbdb.ACLActionPass:
			passed = a.Tier
			continue // on to the next tier
		}
		return true
	}
	w.settle(doubts, aclEffect(nbdb.ACLActionAllow)) // no ACL matched: the packet goes on
	return true
}

// aclEffect is what an ACL does to a packet it matches, in the terms that decide the
// packet's fate: dropped, passed to the next tier, or let through.
func aclEffect(a nbdb.ACLAction) string {
	switch a {
	case nbdb.ACLActionDrop, nbdb.ACLActionReject:
		return "drop"
	case nbdb.ACLActionPass:
		return "pass"
	}
	return "allow"
}

// aclsFor lists the ACLs of dir that apply on ls, in evaluation order.
func (z *Zone) aclsFor(ls *nbdb.LogicalSwitch, dir nbdb.ACLDirection) []*nbdb.ACL {
	var out []*nbdb.ACL
	add := func(ids []string) {
		for _, id := range ids {
			if a := z.acls[id]; a != nil && a.Direction == dir {
				out = append(out, a)
			}
		}
	}
	add(ls.ACLs)
	for _, pg := range z.groupsOn[ls.Name] {
		add(pg.ACLs)
	}
	slices.SortFunc(out, func(a, b *nbdb.ACL) int {
		return cmp.Or(cmp.Compare(a.Tier, b.Tier), cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.UUID, b.UUID))
	})
	return slices.CompactFunc(out, func(a, b *nbdb.ACL) bool { return a.UUID == b.UUID })
}

// l2Lookup finds the port of ls that owns mac, falling back to a port that accepts
// unknown addresses; the note says how the port was chosen.
func (z *Zone) l2Lookup(ls *nbdb.LogicalSwitch, mac [6]byte) (*nbdb.LogicalSwitchPort, string) {
	var unknown *nbdb.LogicalSwitchPort
	for _, id := range ls.Ports {
		p := z.ix.SwitchPorts[id]
		if p == nil {
			continue
		}
		if p.Type == "router" {
			if lrp := z.routerPorts[p.Options["router-port"]]; lrp != nil {
				if m, _, ok := routerPortAddrs(lrp); ok && m == mac {
					return p, "destination MAC " + macString(mac) + " is router port " + lrp.Name
				}
			}
		}
		for _, a := range portAddresses(p) {
			if a.mac == mac {
				return p, "destination MAC " + macString(mac) + " is port " + p.Name
			}
		}
		if unknown == nil && slices.Contains(p.Addresses, "unknown") {
			unknown = p
		}
	}
	if unknown != nil {
		return unknown, "destination MAC " + macString(mac) + " is no port's: sent to " + unknown.Name + ", which takes unknown addresses"
	}
	return nil, ""
}

// gatewayMAC is where a port on ls with address src sends a packet for dst, as a pod's
// routes say: to the router port whose network holds src (its gateway), unless dst is
// in that same network (on its link) and a port of the switch has it, which gets the
// packet straight. Without such a router port, every address of the switch is on link.
func (z *Zone) gatewayMAC(ls *nbdb.LogicalSwitch, from *nbdb.LogicalSwitchPort, src, dst netip.Addr) ([6]byte, bool) {
	var gw [6]byte
	found, onLink := false, true
	for _, id := range ls.Ports {
		p := z.ix.SwitchPorts[id]
		if p == nil || p == from || p.Type != "router" {
			continue
		}
		if lrp := z.routerPorts[p.Options["router-port"]]; lrp != nil {
			if m, nets, ok := routerPortAddrs(lrp); ok {
				for _, n := range nets {
					if n.Contains(src) {
						gw, found, onLink = m, true, n.Contains(dst)
						break
					}
				}
			}
		}
		if found {
			break
		}
	}
	if onLink {
		for _, id := range ls.Ports {
			p := z.ix.SwitchPorts[id]
			if p == nil || p == from {
				continue
			}
			for _, a := range portAddresses(p) {
				for _, ip := range a.ips {
					if ip.Addr() == dst {
						return a.mac, true
					}
				}
			}
		}
	}
	return gw, found
}

func prefixesContain(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func macString(m [6]byte) string { return net.HardwareAddr(m[:]).String() }

func portRow(p *nbdb.LogicalSwitchPort) *Row {
	return &Row{Table: "Logical_Switch_Port", UUID: p.UUID, Owner: ownerOf(p.ExternalIDs)}
}

func aclRow(a *nbdb.ACL) *Row {
	prio := a.Priority
	return &Row{Table: "ACL", UUID: a.UUID, Priority: &prio, Match: a.Match, Action: string(a.Action), Owner: ownerOf(a.ExternalIDs)}
}
