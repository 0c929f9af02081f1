package topology

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
)

// PodPortName is the logical switch port of a pod on a network, as OVN-Kubernetes names
// it: "<namespace>_<pod>" on the default network; on a user-defined network the same,
// prefixed with the network attachment's name ("<namespace>/<network object>") turned
// into an OVN prefix.
func PodPortName(n *cluster.Network, p *cluster.Pod) string {
	return podPortPrefix(n, p.Namespace) + p.Namespace + "_" + p.Name
}

// podPortPrefix is what PodPortName puts before "<namespace>_<pod>".
func podPortPrefix(n *cluster.Network, namespace string) string {
	if n.IsDefault() {
		return ""
	}
	return cluster.OVNPrefix(namespace + "/" + n.Owner.Name)
}

// podPort builds a pod's switch port: its MAC and addresses and the chassis it is bound
// to. podSwitchPort adds it; a local port's security pins it to its addresses.
func podPort(e *emitter, p *cluster.Pod, iface cluster.PodInterface, chassis string) (*nbdb.LogicalSwitchPort, error) {
	n := e.net
	mac, err := net.ParseMAC(iface.MAC)
	if err != nil || len(mac) != 6 {
		return nil, fmt.Errorf("pod %s/%s on network %s: MAC %q is not a 48-bit MAC", p.Namespace, p.Name, n.Name, iface.MAC)
	}
	if len(iface.IPs) == 0 {
		return nil, fmt.Errorf("pod %s/%s on network %s has no IP addresses", p.Namespace, p.Name, n.Name)
	}
	return &nbdb.LogicalSwitchPort{
		Name:      e.podPortName(p),
		Addresses: []string{podAddresses(mac, iface.IPs)},
		Options:   map[string]string{"requested-chassis": chassis},
	}, nil
}

// podAddresses is macAndIPs of a pod's MAC and addresses, written into one buffer: a
// zone writes it for every pod of every Layer2 network.
func podAddresses(mac net.HardwareAddr, ips []netip.Prefix) string {
	const hex = "0123456789abcdef"
	var buf [128]byte // room for a MAC and two IPv6 addresses
	b := buf[:0]
	for i, octet := range mac { // as mac.String() writes it
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, hex[octet>>4], hex[octet&0xf])
	}
	for _, ip := range ips {
		b = append(b, ' ')
		b = ip.Addr().AppendTo(b)
	}
	return string(b)
}

// podSwitchPort adds a pod's port to ls. Besides what every port carries, its external
// IDs name the pod's namespace and mark it a pod's; they are set in the port's map
// rather than merged from one of their own, which a zone would make and drop for
// each pod of each Layer2 network.
func (e *emitter) podSwitchPort(ls *nbdb.LogicalSwitch, lsp *nbdb.LogicalSwitchPort, p *cluster.Pod, node string) {
	e.switchPort(ls, lsp, node)
	lsp.ExternalIDs["namespace"] = p.Namespace
	lsp.ExternalIDs["pod"] = "true"
}

// localPods adds a port for each of the local node's pods on the network, and returns
// the ports of the pods whose role on it is infrastructure-locked: the default-network
// ports of primary-UDN pods, which the isolation port group holds.
func (c *compiler) localPods(e *emitter, n *cluster.Network, ls *nbdb.LogicalSwitch) (locked []*nbdb.LogicalSwitchPort) {
	hold := n.Topology == cluster.Layer2 && c.opts.HoldLocalLayer2Pods
	for _, p := range c.podsByNetwork[n.Name] {
		if p.Node != c.local.Name {
			continue
		}
		lsp, err := podPort(e, p, p.Networks[n.Name], c.local.ChassisID)
		if err != nil {
			e.warnf("%v", err)
			if e.pods == nil {
				e.pods = map[string]error{}
			}
			e.pods[p.Namespace+"/"+p.Name] = err
			continue
		}
		lsp.PortSecurity = []string{lsp.Addresses[0]}
		if hold && !slices.Equal(c.opts.Wired[lsp.Name], lsp.Addresses) {
			continue
		}
		if key := p.Networks[n.Name].TunnelID; key > 0 {
			lsp.Options["requested-tnl-key"] = strconv.Itoa(key)
		}
		if p.UID != "" {
			lsp.Options["iface-id-ver"] = p.UID
		}
		e.podSwitchPort(ls, lsp, p, c.local.Name)
		if p.Networks[n.Name].Role == cluster.PodRoleInfrastructureLocked {
			locked = append(locked, lsp)
		}
	}
	return locked
}

// layer2Pods adds the local pods, and a remote port for every pod on another node: the
// switch spans zones, so each zone must know where every MAC lives. A pod port's tunnel
// key comes from its annotation and is the same in every zone.
func (c *compiler) layer2Pods(e *emitter, n *cluster.Network, ls *nbdb.LogicalSwitch) {
	pods := c.podsByNetwork[n.Name]
	reserve(&ls.Ports, len(pods))
	reserve(&e.set.SwitchPorts, len(pods))
	c.localPods(e, n, ls)
	// A remote pod's port never fails the network.
	_ = e.loop(loopRemotePods, ls, nil, func() error {
		c.remotePodPorts(e, n, ls)
		return nil
	})
}

// remotePodPorts adds a remote port to the switch ls for every pod of network n on
// another node.
func (c *compiler) remotePodPorts(e *emitter, n *cluster.Network, ls *nbdb.LogicalSwitch) {
	for _, p := range c.podsByNetwork[n.Name] {
		if p.Node == c.local.Name {
			continue
		}
		var owner *cluster.Node
		if i, ok := c.nodeIndex[p.Node]; ok {
			owner = c.state.Nodes[i]
		}
		iface := p.Networks[n.Name]
		key := podKey{namespace: p.Namespace, name: p.Name, node: p.Node, hasNode: owner != nil, mac: iface.MAC, ips: iface.IPs, tunnelID: iface.TunnelID}
		if owner != nil {
			key.chassis = owner.ChassisID
		}
		_ = e.remotePods.emit(key, ls, func() error {
			c.remotePod(e, n, ls, p, owner, iface)
			return nil
		})
	}
}

// remotePod adds the remote port of a pod on another node (owner, nil if that node is
// not in the state) to a Layer2 network's switch ls.
func (c *compiler) remotePod(e *emitter, n *cluster.Network, ls *nbdb.LogicalSwitch, p *cluster.Pod, owner *cluster.Node, iface cluster.PodInterface) {
	if owner == nil {
		e.warnf("pod %s/%s on network %s: node %s is not ready for OVN; no remote port", p.Namespace, p.Name, n.Name, p.Node)
		return
	}
	if iface.TunnelID <= 0 {
		e.warnf("pod %s/%s on network %s has no tunnel_id in k8s.ovn.org/pod-networks; no remote port", p.Namespace, p.Name, n.Name)
		return
	}
	lsp, err := podPort(e, p, iface, owner.ChassisID)
	if err != nil {
		e.warnf("%v", err)
		return
	}
	lsp.Type = "remote"
	lsp.Options["requested-tnl-key"] = strconv.Itoa(iface.TunnelID)
	e.podSwitchPort(ls, lsp, p, p.Node)
}
