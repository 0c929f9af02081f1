package topology

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

// A pod whose primary network is a user-defined network keeps a port on the default
// network's node switch (its role there is infrastructure-locked) for the kubelet's
// probes alone. Upstream guards those ports with a port group and ACLs; the names,
// priorities, tiers and matches below are upstream's, so tools that read its rows read
// ours.
const (
	// isolationPortGroupID is the k8s.ovn.org/id upstream gives the port group; its
	// name is derived from it (see ovnHashName) and ACL matches name the group by it.
	isolationPortGroupID = "default-network-controller:UDNIsolation:SecondaryPods"

	isolationOwnerType  = "UDNIsolation"
	allowHostARPACL     = "AllowHostARPPrimaryUDN"
	allowHostACL        = "AllowHostPrimaryUDN"
	denyPrimaryUDNACL   = "DenyPrimaryUDN"
	primaryUDNAllowPrio = 1001
	primaryUDNDenyPrio  = 1000
	// OVN evaluates ACL tiers in order: the isolation ACLs (tier 0) decide before any
	// network policy (tier 2) is consulted.
	primaryACLTier = 0
	defaultACLTier = 2

	// allowFromNodeOwnerType owns the node switch's ACL that lets the node (its
	// management port) reach every pod, the kubelet's probes among them.
	allowFromNodeOwnerType = "NetpolNode"
	defaultAllowPrio       = 1001

	// aclLoggingMeter rate-limits the log lines of ACLs that log; every ACL names it.
	aclLoggingMeter     = "acl-logging"
	aclLoggingRateLimit = 20 // packets per second, upstream's default
)

// IsolationPortGroup is the name of the port group holding the default-network ports
// of primary-UDN pods, in every zone.
var IsolationPortGroup = ovnHashName(isolationPortGroupID)

// ovnHashName is how upstream turns an object id into a name OVN accepts anywhere
// (a port group name must be a valid identifier): "a" and the id's 64-bit FNV-1a hash.
func ovnHashName(id string) string {
	h := fnv.New64a()
	h.Write([]byte(id))
	return "a" + strconv.FormatUint(h.Sum64(), 10)
}

// udnIsolation writes the isolation of the local node's primary-UDN pods on the default
// network's node switch: the port group of their ports (locked) with ACLs that let only
// ARP/ND for the management port and connections from it (the kubelet's probes)
// through, and drop the rest both ways. The group is written even while empty, as
// upstream does, so a pod's port is isolated the moment it joins.
func udnIsolation(e *emitter, locked []*nbdb.LogicalSwitchPort, mgmtIPs []netip.Addr) {
	e.aclLoggingMeter()
	pg := IsolationPortGroup
	egress, ingress := "inport == @"+pg, "outport == @"+pg
	// Resolution of the management port's address, each way, and its connections.
	var arpTo, arpFrom, fromHost []string
	for _, ip := range mgmtIPs {
		fromHost = append(fromHost, fmt.Sprintf("%s.src==%s", ipFamily(ip.Is6()), ip))
		if ip.Is6() {
			nd := fmt.Sprintf("( nd && nd.target == %s )", ip)
			arpTo, arpFrom = append(arpTo, nd), append(arpFrom, nd)
			continue
		}
		arpTo = append(arpTo, fmt.Sprintf("( arp && arp.tpa == %s )", ip))
		arpFrom = append(arpFrom, fmt.Sprintf("( arp && arp.spa == %s )", ip))
	}
	group := &nbdb.PortGroup{Name: pg}
	for _, lsp := range locked {
		group.Ports = append(group.Ports, lsp.UUID)
	}
	for _, a := range []struct {
		name  string
		dir   nbdb.ACLDirection
		prio  int
		match string
		act   nbdb.ACLAction
	}{
		{denyPrimaryUDNACL, nbdb.ACLDirectionFromLport, primaryUDNDenyPrio, egress, nbdb.ACLActionDrop},
		{allowHostARPACL, nbdb.ACLDirectionFromLport, primaryUDNAllowPrio, egress + " && (" + strings.Join(arpTo, " || ") + ")", nbdb.ACLActionAllow},
		{denyPrimaryUDNACL, nbdb.ACLDirectionToLport, primaryUDNDenyPrio, ingress, nbdb.ACLActionDrop},
		{allowHostARPACL, nbdb.ACLDirectionToLport, primaryUDNAllowPrio, ingress + " && (" + strings.Join(arpFrom, " || ") + ")", nbdb.ACLActionAllow},
		{allowHostACL, nbdb.ACLDirectionToLport, primaryUDNAllowPrio, ingress + " && (" + strings.Join(fromHost, " || ") + ")", nbdb.ACLActionAllowRelated},
	} {
		gress := policyDirection(a.dir)
		acl := e.acl(isolationOwnerType, []string{a.name, gress}, map[string]string{nameKey: a.name, directionKey: gress},
			&nbdb.ACL{Direction: a.dir, Priority: a.prio, Match: a.match, Action: a.act, Tier: primaryACLTier}, "")
		group.ACLs = append(group.ACLs, acl.UUID)
	}
	e.portGroup(group, isolationOwnerType, "SecondaryPods")
}

// allowFromNode lets the management port's connections (the kubelet's probes among
// them) reach every pod of a network's switch ls, above a network policy's default deny
// (priority 1000 of the same tier): upstream writes it on every primary network's
// switch.
func allowFromNode(e *emitter, ls *nbdb.LogicalSwitch, mgmtIPs []netip.Addr) {
	for _, ip := range mgmtIPs {
		acl := e.acl(allowFromNodeOwnerType, []string{ls.Name, ip.String()}, map[string]string{nameKey: ls.Name, "ip": ip.String()},
			&nbdb.ACL{Direction: nbdb.ACLDirectionToLport, Priority: defaultAllowPrio, Match: fmt.Sprintf("%s.src==%s", ipFamily(ip.Is6()), ip), Action: nbdb.ACLActionAllowRelated, Tier: defaultACLTier},
			nodeOf(ls))
		ls.ACLs = append(ls.ACLs, acl.UUID)
	}
}

// nodeOf names the node of a per-node switch, for the node key of rows hung on it.
func nodeOf(ls *nbdb.LogicalSwitch) string { return ls.ExternalIDs[rows.NodeKey] }

// policyDirection is upstream's name of an ACL's direction in its external IDs.
func policyDirection(d nbdb.ACLDirection) string {
	if d == nbdb.ACLDirectionFromLport {
		return "Egress"
	}
	return "Ingress"
}
