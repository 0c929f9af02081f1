// Package gateway computes the OpenFlow flows of the node's external bridge (br-ex) in
// OVN-Kubernetes' shared gateway mode: the host and every network's gateway router (GR)
// use the node's one IP and MAC on one NIC, and conntrack tells the replies apart.
//
// br-ex has three kinds of ports: the NIC, the bridge's LOCAL port (the host's stack,
// holding the node IP and br-ex's MAC), and one patch port per network, which
// ovn-controller creates from the localnet port of that network's external switch and
// behind which that network's GR answers with the same IP and MAC. Outgoing IP traffic
// is committed to conntrack zone CTZone with a mark naming where it came from; incoming
// IP traffic is looked up in that zone and a reply goes back to the port its mark names.
// Everything else arriving on the NIC (new connections to the node IP) goes to the host.
package gateway

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/host/openflow"
)

// Numbers that upstream OVN-Kubernetes uses, kept so that a node moving between the two
// finds the same flows and conntrack entries.
const (
	// Cookie marks every flow of the shared gateway.
	Cookie uint64 = 0xdeff105
	// CTZone is the conntrack zone of the node's external traffic.
	CTZone = 64000
	// DefaultNetworkCTMark marks connections of the default network's GR.
	DefaultNetworkCTMark = 1
	// HostCTMark marks connections of the host itself (the LOCAL port).
	HostCTMark = 2
)

// NetworkCTMark is the ct_mark of the GR of the user-defined network with the given
// network id (1 or more): 3 + id.
func NetworkCTMark(networkID int) int { return 3 + networkID }

// maxOFPort is the highest OpenFlow number of a real switch port; LOCAL and the other
// reserved ports lie above it.
const maxOFPort = 0xfeff

// Patch is one network's patch port on br-ex, behind which its GR sits.
type Patch struct {
	// Network names the network, for error messages.
	Network string
	// OFPort is the patch port's OpenFlow port number on br-ex.
	OFPort int
	// CTMark marks the connections of this network's GR: DefaultNetworkCTMark for the
	// default network, NetworkCTMark(id) for a user-defined one; never HostCTMark.
	CTMark int
	// Masquerade says the GR's traffic leaves it from the network's masquerade address
	// (a user-defined network's GR does, so that networks whose pod subnets overlap stay
	// apart); br-ex translates it to the node's address of the family, and conntrack
	// translates the replies back.
	Masquerade bool
}

// Config is what the flows depend on. Ports are OpenFlow numbers rather than names so
// that the flows read the same as the bridge's dump.
type Config struct {
	// NIC is the OpenFlow port number of the physical NIC on br-ex.
	NIC int
	// Patches are the networks' patch ports; none is fine (the host alone).
	Patches []Patch
	// IPv4 and IPv6 say which families the node has an address in; at least one.
	IPv4, IPv6 bool
	// NodeIPv4 and NodeIPv6 are the node's addresses, which masquerading GRs' traffic
	// leaves with; needed in each family the node has when a patch masquerades.
	NodeIPv4, NodeIPv6 netip.Addr
}

// validate refuses configurations whose flows would misdirect traffic: a port or mark
// given twice would send one GR's replies to another.
func (c Config) validate() error {
	if c.NIC < 1 || c.NIC > maxOFPort {
		return fmt.Errorf("NIC ofport %d out of range 1..%d", c.NIC, maxOFPort)
	}
	if !c.IPv4 && !c.IPv6 {
		return fmt.Errorf("neither IPv4 nor IPv6: the node needs an address in at least one family")
	}
	ports := map[int]string{}
	marks := map[int]string{}
	names := map[string]bool{}
	for _, p := range c.Patches {
		if p.Network == "" {
			return fmt.Errorf("patch port %d has no network name", p.OFPort)
		}
		if names[p.Network] {
			return fmt.Errorf("network %q has two patch ports", p.Network)
		}
		names[p.Network] = true
		switch {
		case p.OFPort < 1 || p.OFPort > maxOFPort:
			return fmt.Errorf("network %q: patch ofport %d out of range 1..%d", p.Network, p.OFPort, maxOFPort)
		case p.OFPort == c.NIC:
			return fmt.Errorf("network %q: patch ofport %d is the NIC's", p.Network, p.OFPort)
		case ports[p.OFPort] != "":
			return fmt.Errorf("network %q: patch ofport %d is network %q's too", p.Network, p.OFPort, ports[p.OFPort])
		}
		ports[p.OFPort] = p.Network
		switch {
		case p.CTMark == HostCTMark:
			return fmt.Errorf("network %q: ct mark %d is the host's", p.Network, p.CTMark)
		case p.CTMark < 1 || int64(p.CTMark) > 0xffffffff:
			return fmt.Errorf("network %q: ct mark %d out of range 1..%d (0 is an unmarked connection)", p.Network, p.CTMark, uint32(0xffffffff))
		case marks[p.CTMark] != "":
			return fmt.Errorf("network %q: ct mark %d is network %q's too", p.Network, p.CTMark, marks[p.CTMark])
		}
		marks[p.CTMark] = p.Network
		if p.Masquerade {
			if c.IPv4 && !c.NodeIPv4.Is4() {
				return fmt.Errorf("network %q masquerades but the node's IPv4 address %q is not one", p.Network, c.NodeIPv4)
			}
			if c.IPv6 && (!c.NodeIPv6.Is6() || c.NodeIPv6.Is4In6()) {
				return fmt.Errorf("network %q masquerades but the node's IPv6 address %q is not one", p.Network, c.NodeIPv6)
			}
		}
	}
	return nil
}

// Flow priorities and tables. Table 0 sorts packets by the port they came in on; table
// 1 gets the NIC's IP packets after the conntrack lookup.
const (
	tableIn       = 0
	tableReply    = 1
	prioND        = 110 // IPv6 neighbour discovery from the NIC, above its IPv6 flow
	prioIP        = 100 // IP by in_port, in table 0; replies by mark, in table 1
	prioNonIP     = 10  // everything else by in_port
	prioToHost    = 0   // table 1's default
	ndSolicit     = 135 // ICMPv6 neighbour solicitation
	ndAdvertise   = 136 // ICMPv6 neighbour advertisement
	localPortName = "LOCAL"
)

// SharedFlows returns the flows of br-ex for c, in the text `ovs-ofctl dump-flows`
// prints for them (so a bridge's dump equals them line for line), to be written with
// Cookie.
func SharedFlows(c Config) ([]openflow.Flow, error) {
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("shared gateway flows: %w", err)
	}
	patches := slices.Clone(c.Patches)
	slices.SortFunc(patches, func(a, b Patch) int { return a.OFPort - b.OFPort })
	nic := strconv.Itoa(c.NIC)
	toNIC := "output:" + nic
	// The NIC's traffic that is not conntrack's to sort goes to the host and every GR,
	// the way a switch floods: ARP requests for the node IP are answered by both (with
	// the same MAC), and ARP replies reach whoever asked.
	flood := []string{localPortName}
	for _, p := range patches {
		flood = append(flood, "output:"+strconv.Itoa(p.OFPort))
	}
	floodNIC := strings.Join(flood, ",")

	var flows []openflow.Flow
	add := func(table, prio int, match, actions string) {
		flows = append(flows, openflow.Flow{Table: table, Priority: prio, Match: match, Actions: actions})
	}
	// commit sends a packet out of the NIC after committing its connection with the
	// mark of the port it came from, so that the replies find their way back.
	commit := func(mark int, snat netip.Addr) string {
		nat := ""
		if snat.IsValid() {
			nat = "nat(src=" + snat.String() + "),"
		}
		return fmt.Sprintf("ct(commit,zone=%d,%sexec(set_field:%#x->ct_mark)),%s", CTZone, nat, mark, toNIC)
	}
	for _, family := range families(c) {
		// IP from the NIC: look its connection up (undoing any NAT conntrack did in
		// this zone), then sort it by mark in table 1.
		add(tableIn, prioIP, family+",in_port="+nic, fmt.Sprintf("ct(table=%d,zone=%d,nat)", tableReply, CTZone))
		// IP from the host or a GR: out of the NIC, remembering who sent it.
		add(tableIn, prioIP, family+",in_port="+localPortName, commit(HostCTMark, netip.Addr{}))
		nodeIP := c.NodeIPv4
		if family == "ipv6" {
			nodeIP = c.NodeIPv6
		}
		for _, p := range patches {
			var snat netip.Addr
			if p.Masquerade {
				snat = nodeIP
			}
			add(tableIn, prioIP, family+",in_port="+strconv.Itoa(p.OFPort), commit(p.CTMark, snat))
		}
	}
	if c.IPv6 {
		// IPv6 neighbour discovery is ICMPv6, so the flow above would take it to
		// conntrack, which does not track it, and on to the host alone; like ARP it must
		// reach the GRs too. Advertisements answer a GR's own solicitations (without
		// them its IPv6 connections never start: measured); solicitations go to the
		// GRs as ARP requests do, for addresses a GR answers that the host does not
		// hold. Those the host or a GR sends need nothing special: conntrack leaves
		// them uncommitted and they go out of the NIC.
		for _, typ := range []int{ndSolicit, ndAdvertise} {
			add(tableIn, prioND, fmt.Sprintf("icmp6,in_port=%s,icmp_type=%d", nic, typ), floodNIC)
		}
	}
	// Not IP (ARP, and IPv6 on a node without it): from the NIC to everyone, from the
	// host or a GR out of the NIC.
	add(tableIn, prioNonIP, "in_port="+nic, floodNIC)
	add(tableIn, prioNonIP, "in_port="+localPortName, toNIC)
	for _, p := range patches {
		add(tableIn, prioNonIP, "in_port="+strconv.Itoa(p.OFPort), toNIC)
	}
	// Table 1: replies (+est) and related packets such as ICMP errors (+rel) of a GR's
	// connections go back to that GR. The match needs no ip or ipv6: only IP packets
	// come here.
	for _, p := range patches {
		for _, state := range []string{"+est+trk", "+rel+trk"} {
			add(tableReply, prioIP, fmt.Sprintf("ct_state=%s,ct_mark=%#x", state, p.CTMark), "output:"+strconv.Itoa(p.OFPort))
		}
	}
	// Everything else goes to the host: replies to its own connections (HostCTMark;
	// they need no flow of their own since this one sends them the same way), new
	// connections to the node IP, and what conntrack finds invalid.
	add(tableReply, prioToHost, "", localPortName)
	return flows, nil
}

// families returns the match keywords of the node's address families.
func families(c Config) []string {
	var fs []string
	if c.IPv4 {
		fs = append(fs, "ip")
	}
	if c.IPv6 {
		fs = append(fs, "ipv6")
	}
	return fs
}
