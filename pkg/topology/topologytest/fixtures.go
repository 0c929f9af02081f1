// Package topologytest holds cluster states for tests and benchmarks of the topology
// compiler and of everything downstream of it (the reconciler, the agent, the plugin).
package topologytest

import (
	"fmt"
	"net/netip"

	"github.com/ovnk/ovnk/pkg/cluster"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = pfx(s)
	}
	return out
}

func baseConfig() cluster.Config {
	return cluster.Config{
		MasqueradeSubnets:  prefixes("169.254.0.0/17", "fd69::/112"),
		DefaultJoinSubnets: prefixes("100.64.0.0/16", "fd98::/64"),
		ServiceSubnets:     prefixes("10.96.0.0/16", "fd00:10:96::/112"),
		HostServiceIPs:     []netip.Addr{addr("10.96.0.1"), addr("10.96.0.10")},
	}
}

// kindNode is a node of a kind cluster on the 172.18.0.0/16 docker network, numbered as
// its address: ovn-control-plane is .3 in OKEP-5094's listings.
func kindNode(name string, id int, hostOctet int) *cluster.Node {
	v4 := netip.AddrFrom4([4]byte{172, 18, 0, byte(hostOctet)})
	v6 := netip.MustParseAddr("fc00:f853:ccd:e793::" + itoa(hostOctet))
	return &cluster.Node{
		Name:           name,
		ID:             id,
		ChassisID:      "chassis-" + name,
		Subnets:        map[string][]netip.Prefix{},
		PrimaryIfAddrs: []netip.Prefix{netip.PrefixFrom(v4, 16), netip.PrefixFrom(v6, 64)},
		Gateway: cluster.Gateway{
			Mode:        "shared",
			InterfaceID: "breth0_" + name,
			MAC:         "02:42:ac:12:00:" + hex2(hostOctet),
			IPs:         []netip.Prefix{netip.PrefixFrom(v4, 16), netip.PrefixFrom(v6, 64)},
			NextHops:    []netip.Addr{addr("172.18.0.1"), addr("fc00:f853:ccd:e793::1")},
		},
		Layer2TopologyVersion: "2.0",
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func hex2(i int) string {
	const h = "0123456789abcdef"
	return string([]byte{h[i>>4&0xf], h[i&0xf]})
}

// OKEP5094 is OKEP-5094's example: the Layer2 primary UDN "namespace-scoped" in
// namespace test12 (OVN prefix test12_namespace.scoped_), 203.203.0.0/16 and
// 2010:100:200::/60, network id 1 (its management SNAT uses 169.254.0.12), on three
// nodes. Node ids 4, 3 and 2 reproduce the OKEP's transit router port listing and its
// IPv6 address plan; docs/topology.md explains where the OKEP disagrees with itself.
func OKEP5094() *cluster.State {
	nodes := []*cluster.Node{
		kindNode("ovn-control-plane", 4, 3),
		kindNode("ovn-worker", 3, 2),
		kindNode("ovn-worker2", 2, 4),
	}
	net := &cluster.Network{
		Name:           "test12_namespace-scoped",
		Topology:       cluster.Layer2,
		Role:           cluster.Primary,
		Subnets:        []cluster.Subnet{{CIDR: pfx("203.203.0.0/16")}, {CIDR: pfx("2010:100:200::/60")}},
		MTU:            1400,
		Transport:      cluster.Geneve,
		JoinSubnets:    prefixes("100.65.0.0/16", "fd99::/64"),
		TransitSubnets: prefixes("100.88.0.0/16", "fd97::/64"),
		ID:             1,
		TunnelKeys:     []int{16711684, 16715779},
		Namespaces:     []string{"test12"},
		Owner:          cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: "test12", Name: "namespace-scoped"},
	}
	pods := []*cluster.Pod{
		{Namespace: "test12", Name: "vm-a", Node: "ovn-control-plane", Networks: map[string]cluster.PodInterface{
			net.Name: {IPs: prefixes("203.203.0.3/16", "2010:100:200::3/60"), MAC: "0a:58:cb:cb:00:03", Role: "primary", TunnelID: 3},
		}},
		{Namespace: "test12", Name: "vm-b", Node: "ovn-worker", Networks: map[string]cluster.PodInterface{
			net.Name: {IPs: prefixes("203.203.0.4/16", "2010:100:200::4/60"), MAC: "0a:58:cb:cb:00:04", Role: "primary", TunnelID: 4},
		}},
	}
	return &cluster.State{Config: baseConfig(), Nodes: nodes, Networks: []*cluster.Network{net}, Pods: pods}
}

// Layer3 is a three-node cluster with the default network and the Layer3 CUDN blue,
// dual-stack, with a pod of each network on node1 and node2.
func Layer3() *cluster.State {
	nodes := []*cluster.Node{kindNode("node1", 2, 2), kindNode("node2", 3, 3), kindNode("node3", 4, 4)}
	for i, n := range nodes {
		n.TransitSwitchIPs = []netip.Prefix{
			netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 88, 0, byte(n.ID)}), 16),
			netip.MustParsePrefix("fd97::" + itoa(n.ID) + "/64"),
		}
		n.Subnets["default"] = prefixes("10.244."+itoa(i)+".0/24", "fd00:10:244:"+itoa(i+1)+"::/64")
		n.Subnets["cluster_udn_blue"] = prefixes("10.10."+itoa(i)+".0/24", "2014:100:200:"+itoa(i)+"::/64")
	}
	def := &cluster.Network{
		Name:           "default",
		Topology:       cluster.Layer3,
		Role:           cluster.Primary,
		Subnets:        []cluster.Subnet{{CIDR: pfx("10.244.0.0/16"), HostSubnet: 24}, {CIDR: pfx("fd00:10:244::/48"), HostSubnet: 64}},
		MTU:            1400,
		Transport:      cluster.Geneve,
		JoinSubnets:    prefixes("100.64.0.0/16", "fd98::/64"),
		TransitSubnets: prefixes("100.88.0.0/16", "fd97::/64"),
		ID:             0,
	}
	blue := &cluster.Network{
		Name:           "cluster_udn_blue",
		Topology:       cluster.Layer3,
		Role:           cluster.Primary,
		Subnets:        []cluster.Subnet{{CIDR: pfx("10.10.0.0/16"), HostSubnet: 24}, {CIDR: pfx("2014:100:200::/48"), HostSubnet: 64}},
		MTU:            1400,
		Transport:      cluster.Geneve,
		JoinSubnets:    prefixes("100.65.0.0/16", "fd99::/64"),
		TransitSubnets: prefixes("100.88.0.0/16", "fd97::/64"),
		ID:             2,
		TunnelKeys:     []int{16711685},
		Namespaces:     []string{"blue"},
		Owner:          cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "blue"},
	}
	pods := []*cluster.Pod{
		{Namespace: "blue", Name: "web", Node: "node1", Networks: map[string]cluster.PodInterface{
			"default":          {IPs: prefixes("10.244.0.5/24", "fd00:10:244:1::5/64"), MAC: "0a:58:0a:f4:00:05", Role: "infrastructure-locked"},
			"cluster_udn_blue": {IPs: prefixes("10.10.0.5/24", "2014:100:200::5/64"), MAC: "0a:58:0a:0a:00:05", Role: "primary"},
		}},
		{Namespace: "kube-system", Name: "dns", Node: "node2", Networks: map[string]cluster.PodInterface{
			"default": {IPs: prefixes("10.244.1.7/24", "fd00:10:244:2::7/64"), MAC: "0a:58:0a:f4:01:07", Role: "primary"},
		}},
	}
	return &cluster.State{Config: baseConfig(), Nodes: nodes, Networks: []*cluster.Network{blue, def}, Pods: pods}
}

// Scale is a cluster of nodes × networks: half Layer3, half Layer2, dual-stack,
// every network reusing the same subnets (user-defined networks are isolated, so they
// may), with one pod per node on each Layer2 network.
func Scale(nodes, networks int) *cluster.State {
	st := &cluster.State{Config: baseConfig()}
	for i := 0; i < nodes; i++ {
		n := kindNode(fmt.Sprintf("node%04d", i), i+2, i%250+2)
		st.Nodes = append(st.Nodes, n)
	}
	for j := 0; j < networks; j++ {
		net := &cluster.Network{
			Name:           fmt.Sprintf("cluster_udn_net%04d", j),
			Role:           cluster.Primary,
			MTU:            1400,
			Transport:      cluster.Geneve,
			JoinSubnets:    prefixes("100.65.0.0/16", "fd99::/64"),
			TransitSubnets: prefixes("100.88.0.0/16", "fd97::/64"),
			ID:             j + 1,
			Owner:          cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: fmt.Sprintf("net%04d", j)},
		}
		if j%2 == 0 {
			net.Topology = cluster.Layer3
			net.Subnets = []cluster.Subnet{{CIDR: pfx("10.128.0.0/14"), HostSubnet: 24}, {CIDR: pfx("fd10::/48"), HostSubnet: 64}}
			net.TunnelKeys = []int{16711683 + j + 1}
			for i, node := range st.Nodes {
				node.Subnets[net.Name] = []netip.Prefix{
					netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(128 + i/256), byte(i % 256), 0}), 24),
					netip.MustParsePrefix(fmt.Sprintf("fd10:0:0:%x::/64", i)),
				}
			}
		} else {
			net.Topology = cluster.Layer2
			net.Subnets = []cluster.Subnet{{CIDR: pfx("10.200.0.0/16")}, {CIDR: pfx("fd20::/60")}}
			net.TunnelKeys = []int{16711683 + j + 1, 16715779 + j}
			for i, node := range st.Nodes {
				st.Pods = append(st.Pods, &cluster.Pod{
					Namespace: fmt.Sprintf("ns%04d", j), Name: fmt.Sprintf("pod%04d", i), Node: node.Name,
					Networks: map[string]cluster.PodInterface{net.Name: {
						IPs:      []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 200, byte(i / 250), byte(i%250 + 3)}), 16)},
						MAC:      fmt.Sprintf("0a:58:0a:c8:%02x:%02x", i/250, i%250+3),
						TunnelID: i + 3,
					}},
				})
			}
		}
		st.Networks = append(st.Networks, net)
	}
	return st
}

// ExtraNode is the i-th node of a Scale cluster, for adding nodes to one: it has a
// subnet in every Layer3 network of st, and each Layer2 network gets a pod on it.
func ExtraNode(st *cluster.State, i int) *cluster.Node {
	n := kindNode(fmt.Sprintf("node%04d", i), i+2, i%250+2)
	for _, net := range st.Networks {
		if net.Topology == cluster.Layer3 {
			n.Subnets[net.Name] = []netip.Prefix{
				netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(128 + i/256), byte(i % 256), 0}), 24),
				netip.MustParsePrefix(fmt.Sprintf("fd10:0:0:%x::/64", i)),
			}
		}
	}
	return n
}
