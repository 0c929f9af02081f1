package trace

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/topology"
)

// PodPort is a pod's logical switch port on one network.
type PodPort struct {
	// Pod is "namespace/name"; Node the node it runs on.
	Pod, Node string
	// Network names the network as users know it: "default", a
	// ClusterUserDefinedNetwork's name or a UserDefinedNetwork's namespace/name — or,
	// read from a pod's annotation without the network objects to tell which network
	// it attaches to, the network attachment's "namespace/name" (NAD).
	Network string
	// NAD is the network attachment's name in the pod's annotation ("default",
	// "namespace/name"), when the port was read from it.
	NAD string
	// Port is the logical switch port, as OVN-Kubernetes names it.
	Port string
	IPs  []netip.Addr
	// Primary is set on the pod's primary network (the one its default route uses).
	Primary bool
}

// NewCluster is a Cluster over zones, with chassis mapping chassis names to nodes and
// ports the pods' ports.
func NewCluster(zones ZoneSource, chassis map[string]string, ports []PodPort) *Cluster {
	c := &Cluster{Zones: zones, Chassis: chassis, Pods: map[string]string{}, ports: ports}
	for _, p := range ports {
		c.Pods[p.Port] = p.Pod
	}
	return c
}

// ClusterOf is a Cluster over zones for the nodes and pods of st.
func ClusterOf(st *cluster.State, zones ZoneSource) *Cluster {
	chassis := map[string]string{}
	for _, n := range st.Nodes {
		if n.ChassisID != "" {
			chassis[n.ChassisID] = n.Name
		}
	}
	networks := map[string]*cluster.Network{}
	for _, n := range st.Networks {
		networks[n.Name] = n
	}
	var ports []PodPort
	for _, p := range st.Pods {
		for name, iface := range p.Networks {
			n := networks[name]
			if n == nil {
				continue
			}
			pp := PodPort{Pod: p.Namespace + "/" + p.Name, Node: p.Node, Network: cluster.UserNetworkName(name),
				Port: topology.PodPortName(n, p), Primary: strings.EqualFold(iface.Role, "primary")}
			for _, ip := range iface.IPs {
				pp.IPs = append(pp.IPs, ip.Addr())
			}
			ports = append(ports, pp)
		}
	}
	sortPorts(ports)
	return NewCluster(zones, chassis, ports)
}

// PodPortsOf reads a pod's ports from its k8s.ovn.org/pod-networks annotation, naming
// each port as OVN-Kubernetes does: "<namespace>_<pod>" on the default network,
// prefixed with the network attachment's name made an OVN prefix on any other. Each
// port's Network is network(NAD) of its attachment's name (cluster.NADNetworks'
// UserName, or the name itself when the networks cannot be read). A pod not scheduled,
// finished (its addresses are free for others) or not yet given addresses has none; a
// malformed annotation is an error naming the pod.
func PodPortsOf(p *corev1.Pod, network func(nad string) string) ([]PodPort, error) {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil, nil
	}
	ref := cluster.ObjectRef{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
	nets, ok, err := cluster.PodNetworksCodec.Lookup(ref, p.Annotations)
	if err != nil || !ok {
		return nil, err
	}
	var ports []PodPort
	for nad, iface := range nets {
		pp := PodPort{Pod: p.Namespace + "/" + p.Name, Node: p.Spec.NodeName, Network: network(nad), NAD: nad,
			Port: cluster.OVNPrefix(nad) + p.Namespace + "_" + p.Name, Primary: strings.EqualFold(iface.Role, "primary")}
		for _, ip := range iface.IPs {
			pp.IPs = append(pp.IPs, ip.Addr())
		}
		ports = append(ports, pp)
	}
	sortPorts(ports)
	return ports, nil
}

func sortPorts(ports []PodPort) {
	slices.SortFunc(ports, func(a, b PodPort) int {
		return strings.Compare(a.Pod+"\x00"+a.Port, b.Pod+"\x00"+b.Port)
	})
}

// PodEndpoint finds the port of pod ("namespace/name") on network — matched against
// the network's name, its OVN name, the attachment's "namespace/name", or as a bare
// name the last part of a "namespace/name" network (a UserDefinedNetwork of the pod's
// namespace, or an attachment named after its ClusterUserDefinedNetwork) — or, when
// network is empty, on the pod's primary network. At most one port matches: a pod's
// attachments are all named "<its namespace>/<network object's name>". Errors name the
// pod and say what to pass instead.
func (c *Cluster) PodEndpoint(pod, network string) (PodPort, error) {
	var mine []PodPort
	for _, p := range c.ports {
		if p.Pod == pod {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		return PodPort{}, fmt.Errorf("pod %s has no addresses on any network (no k8s.ovn.org/pod-networks yet): is it scheduled and running?", pod)
	}
	var names []string
	for _, p := range mine {
		names = append(names, p.Network)
	}
	if network == "" {
		for _, p := range mine {
			if p.Primary {
				return p, nil
			}
		}
		return PodPort{}, fmt.Errorf("pod %s has no primary network; pick one with --network (%s)", pod, strings.Join(names, ", "))
	}
	want := cluster.UserNetworkName(network) // cluster_udn_blue is blue
	for _, p := range mine {
		if p.Network == want || p.NAD == network || strings.HasSuffix(p.Network, "/"+want) {
			return p, nil
		}
	}
	return PodPort{}, fmt.Errorf("pod %s is not on network %q; it is on %s", pod, network, strings.Join(names, ", "))
}

// PodOfIP finds the pod port that has ip, preferring a primary network's.
func (c *Cluster) PodOfIP(ip netip.Addr) (PodPort, bool) {
	var found PodPort
	ok := false
	for _, p := range c.ports {
		if slices.Contains(p.IPs, ip) && (!ok || (p.Primary && !found.Primary)) {
			found, ok = p, true
		}
	}
	return found, ok
}

// PickAddr is the address of ips in the wanted family.
func PickAddr(ips []netip.Addr, v6 bool) (netip.Addr, bool) {
	for _, ip := range ips {
		if ip.Is6() == v6 {
			return ip, true
		}
	}
	return netip.Addr{}, false
}
