// Package topologytest holds cluster states for tests and benchmarks of the topology
// compiler and of everything downstream of it (the reconciler, the agent, the plugin).
package topologytest

import (
	"fmt"
	"net/netip"
	"slices"

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
// dual-stack: on node1 the blue pod blue/web (whose default-network port is
// infrastructure-locked) and the default-network pod default/client, on node2 the
// default-network pod kube-system/dns.
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
		{Namespace: "blue", Name: "web", Node: "node1", UID: "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f", Networks: map[string]cluster.PodInterface{
			"default":          {IPs: prefixes("10.244.0.5/24", "fd00:10:244:1::5/64"), MAC: "0a:58:0a:f4:00:05", Role: "infrastructure-locked"},
			"cluster_udn_blue": {IPs: prefixes("10.10.0.5/24", "2014:100:200::5/64"), MAC: "0a:58:0a:0a:00:05", Role: "primary"},
		}},
		{Namespace: "default", Name: "client", Node: "node1", UID: "8d3e6b1c-2f4a-4b5c-8d6e-7f8091a2b3c4", Networks: map[string]cluster.PodInterface{
			"default": {IPs: prefixes("10.244.0.6/24", "fd00:10:244:1::6/64"), MAC: "0a:58:0a:f4:00:06", Role: "primary"},
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

// udn is a primary user-defined network of namespace ns named name, as OVN-Kubernetes
// names it: network "<ns>_<name>".
func udn(ns, name string, topology cluster.Topology, id int, subnets ...cluster.Subnet) *cluster.Network {
	return &cluster.Network{
		Name:       cluster.UDNNetworkName(ns, name),
		Topology:   topology,
		Role:       cluster.Primary,
		Subnets:    subnets,
		MTU:        1400,
		Transport:  cluster.Geneve,
		ID:         id,
		Namespaces: []string{ns},
		Owner:      cluster.ObjectRef{Kind: "UserDefinedNetwork", Namespace: ns, Name: name},
	}
}

// OKEP5224 is OKEP-5224's blue/green example: the Layer3 primary UDNs blue-network in
// namespace blue (100.10.0.0/16) and green-network in namespace green (200.10.0.0/16),
// IPv4 only, on three nodes, joined by the ClusterNetworkConnect colored-enterprise
// with connect subnet 192.168.0.0/16 cut into /24 blocks. Node subnets and ids (ovn-worker
// 2, ovn-worker2 3, ovn-control-plane 4) are chosen so that green, connected first and so
// holding block 192.168.0.0/24, has exactly the OKEP's green policy and routes; blue's
// block is the next one, so its lines differ from the OKEP's in the third octet only
// (docs/connect.md explains why no block allocation can give both). A pod of each
// network runs on ovn-worker.
func OKEP5224() *cluster.State {
	nodes := []*cluster.Node{
		kindNode("ovn-control-plane", 4, 3),
		kindNode("ovn-worker", 2, 2),
		kindNode("ovn-worker2", 3, 4),
	}
	blue := udn("blue", "blue-network", cluster.Layer3, 1, cluster.Subnet{CIDR: pfx("100.10.0.0/16"), HostSubnet: 24})
	green := udn("green", "green-network", cluster.Layer3, 2, cluster.Subnet{CIDR: pfx("200.10.0.0/16"), HostSubnet: 24})
	for _, n := range []*cluster.Network{blue, green} {
		n.JoinSubnets = prefixes("100.65.0.0/16")
		n.TransitSubnets = prefixes("100.88.0.0/16")
		n.TunnelKeys = []int{16711683 + n.ID}
	}
	for i, third := range []int{0, 2, 1} { // ovn-control-plane .0, ovn-worker .2, ovn-worker2 .1
		nodes[i].Subnets[blue.Name] = prefixes("100.10." + itoa(third) + ".0/24")
		nodes[i].Subnets[green.Name] = prefixes("200.10." + itoa(third) + ".0/24")
	}
	pods := []*cluster.Pod{
		{Namespace: "blue", Name: "web", Node: "ovn-worker", Networks: map[string]cluster.PodInterface{
			blue.Name: {IPs: prefixes("100.10.2.5/24"), MAC: "0a:58:64:0a:02:05", Role: "primary"},
		}},
		{Namespace: "green", Name: "db", Node: "ovn-worker", Networks: map[string]cluster.PodInterface{
			green.Name: {IPs: prefixes("200.10.2.6/24"), MAC: "0a:58:c8:0a:02:06", Role: "primary"},
		}},
	}
	connect := &cluster.Connect{
		Name:       "colored-enterprise",
		Networks:   []string{blue.Name, green.Name},
		Refused:    map[string]string{},
		Subnets:    []cluster.ConnectSubnet{{CIDR: pfx("192.168.0.0/16"), NetworkPrefix: 24}},
		PodNetwork: true,
		TunnelKey:  16715779,
		Blocks: map[string][]netip.Prefix{
			green.Name: prefixes("192.168.0.0/24"),
			blue.Name:  prefixes("192.168.1.0/24"),
		},
	}
	return &cluster.State{Config: baseConfig(), Nodes: nodes, Networks: []*cluster.Network{blue, green},
		Pods: pods, Connects: []*cluster.Connect{connect}}
}

// MixedConnect is a Layer3 network connected to a Layer2 one, dual-stack (OKEP-5224's
// mixed case): the Layer3 UDN blue-network (103.103.0.0/16, 2014:103::/48) and the
// Layer2 UDN yellow-network (105.105.0.0/16, 2010:105::/60, with OKEP-5094's transit
// router), joined by the ClusterNetworkConnect mixed over 192.168.0.0/16 (/24 blocks)
// and fd00:192:168::/112 (/120 blocks, the same 8 host bits). Each network has a pod on
// ovn-worker, and yellow one on ovn-worker2 too.
func MixedConnect() *cluster.State {
	nodes := []*cluster.Node{
		kindNode("ovn-control-plane", 4, 3),
		kindNode("ovn-worker", 2, 2),
		kindNode("ovn-worker2", 3, 4),
	}
	blue := udn("blue", "blue-network", cluster.Layer3, 1,
		cluster.Subnet{CIDR: pfx("103.103.0.0/16"), HostSubnet: 24}, cluster.Subnet{CIDR: pfx("2014:103::/48"), HostSubnet: 64})
	blue.TunnelKeys = []int{16711684}
	yellow := udn("yellow", "yellow-network", cluster.Layer2, 3,
		cluster.Subnet{CIDR: pfx("105.105.0.0/16")}, cluster.Subnet{CIDR: pfx("2010:105::/60")})
	yellow.TunnelKeys = []int{16711686, 16715780}
	for _, n := range []*cluster.Network{blue, yellow} {
		n.JoinSubnets = prefixes("100.65.0.0/16", "fd99::/64")
		n.TransitSubnets = prefixes("100.88.0.0/16", "fd97::/64")
	}
	for i, third := range []int{0, 2, 1} {
		nodes[i].Subnets[blue.Name] = prefixes("103.103."+itoa(third)+".0/24", "2014:103:0:"+itoa(third)+"::/64")
	}
	pods := []*cluster.Pod{
		{Namespace: "blue", Name: "web", Node: "ovn-worker", Networks: map[string]cluster.PodInterface{
			blue.Name: {IPs: prefixes("103.103.2.5/24", "2014:103:0:2::5/64"), MAC: "0a:58:67:67:02:05", Role: "primary"},
		}},
		{Namespace: "yellow", Name: "gw-a", Node: "ovn-worker", Networks: map[string]cluster.PodInterface{
			yellow.Name: {IPs: prefixes("105.105.0.5/16", "2010:105::5/60"), MAC: "0a:58:69:69:00:05", Role: "primary", TunnelID: 5},
		}},
		{Namespace: "yellow", Name: "gw-b", Node: "ovn-worker2", Networks: map[string]cluster.PodInterface{
			yellow.Name: {IPs: prefixes("105.105.0.6/16", "2010:105::6/60"), MAC: "0a:58:69:69:00:06", Role: "primary", TunnelID: 6},
		}},
	}
	connect := &cluster.Connect{
		Name:     "mixed",
		Networks: []string{blue.Name, yellow.Name},
		Refused:  map[string]string{},
		Subnets: []cluster.ConnectSubnet{
			{CIDR: pfx("192.168.0.0/16"), NetworkPrefix: 24},
			{CIDR: pfx("fd00:192:168::/112"), NetworkPrefix: 120},
		},
		PodNetwork: true,
		TunnelKey:  16715781,
		Blocks: map[string][]netip.Prefix{
			blue.Name:   prefixes("192.168.0.0/24", "fd00:192:168::/120"),
			yellow.Name: prefixes("192.168.1.0/24", "fd00:192:168::100/120"),
		},
	}
	return &cluster.State{Config: baseConfig(), Nodes: nodes, Networks: []*cluster.Network{blue, yellow},
		Pods: pods, Connects: []*cluster.Connect{connect}}
}

// ConnectScale is a cluster of nodes × Layer3 networks, IPv4, every network connected
// to others by ClusterNetworkConnects (OKEP-5224's scale concern is 500 × 500). Network
// j has the j-th /17 of 10.0.0.0/8 and each node a /26 of it, so both counts must be at
// most 512. The connect subnet is 172.16.0.0/12 with the smallest blocks that hold every
// node's link. One connect router cannot have more than alloc.MaxPortTunnelKey ports,
// so the networks are split, in order, into as few connects as fit (8 for 500 × 500):
// each connect joins the networks of its share to each other.
func ConnectScale(nodes, networks int) *cluster.State {
	if nodes < 1 || nodes > 512 || networks < 1 || networks > 512 {
		panic(fmt.Sprintf("topologytest.ConnectScale(%d, %d): nodes and networks must be 1–512", nodes, networks))
	}
	st := &cluster.State{Config: baseConfig()}
	for i := 0; i < nodes; i++ {
		st.Nodes = append(st.Nodes, kindNode(fmt.Sprintf("node%04d", i), i+2, i%250+2))
	}
	prefix, perConnect := connectBlocks(nodes)
	for j := 0; j < networks; j++ {
		base := netip.AddrFrom4([4]byte{10, byte(j / 2), byte(j % 2 * 128), 0})
		net := &cluster.Network{
			Name:           fmt.Sprintf("cluster_udn_net%04d", j),
			Topology:       cluster.Layer3,
			Role:           cluster.Primary,
			Subnets:        []cluster.Subnet{{CIDR: netip.PrefixFrom(base, 17), HostSubnet: 26}},
			MTU:            1400,
			Transport:      cluster.Geneve,
			JoinSubnets:    prefixes("100.65.0.0/16"),
			TransitSubnets: prefixes("100.88.0.0/16"),
			ID:             j + 1,
			TunnelKeys:     []int{16711683 + j + 1},
			Owner:          cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: fmt.Sprintf("net%04d", j)},
		}
		st.Networks = append(st.Networks, net)
		for i, node := range st.Nodes {
			b := base.As4()
			b[2] += byte(i / 4)
			b[3] = byte(i % 4 * 64)
			node.Subnets[net.Name] = []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4(b), 26)}
		}
		k, pos := j/perConnect, j%perConnect
		if pos == 0 {
			st.Connects = append(st.Connects, &cluster.Connect{
				Name:       fmt.Sprintf("connect%02d", k),
				Refused:    map[string]string{},
				Subnets:    []cluster.ConnectSubnet{{CIDR: pfx("172.16.0.0/12"), NetworkPrefix: prefix}},
				PodNetwork: true,
				TunnelKey:  16715779 + k,
				Blocks:     map[string][]netip.Prefix{},
			})
		}
		cc := st.Connects[k]
		cc.Networks = append(cc.Networks, net.Name)
		block := uint32(172)<<24 | uint32(16)<<16 + uint32(pos)<<(32-prefix)
		cc.Blocks[net.Name] = []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(block >> 24), byte(block >> 16), byte(block >> 8), byte(block)}), prefix)}
	}
	return st
}

// connectBlocks returns the longest block prefix whose links hold node ids up to
// nodes+1 (ConnectScale's ids start at 2), and how many networks' blocks fit one
// connect router's port tunnel keys: block index × links + node id + 1 ≤ 32767.
func connectBlocks(nodes int) (prefix, perConnect int) {
	maxID := nodes + 1
	links := 1
	for prefix = 31; links < maxID+1; prefix-- {
		links *= 2
	}
	return prefix, (32767-maxID-1)/links + 1
}

// Layer2Upgrade is OKEP-5094's upgrade example grown to three nodes: the Layer2 CUDN
// "green" (203.203.0.0/24 and 2010:100:200::/60, join 100.65.0.0/16 and fd99::/64) on
// node1, node2 and node3 (ids 2, 3 and 4, so join IPs 100.65.0.2-4), whose gateway
// router ports have tunnel keys 4, 5 and 6 as in the OKEP's diagram, with a pod on each
// node (tunnel ids 7-9). The nodes named in upgraded carry
// k8s.ovn.org/layer2-topology-version "2.0"; the others run the legacy topology. The pod
// subnet is longer than the join subnet, the case that needs the per-join-IP routes.
func Layer2Upgrade(upgraded ...string) *cluster.State {
	var nodes []*cluster.Node
	for i, name := range []string{"node1", "node2", "node3"} {
		n := kindNode(name, i+2, i+2)
		n.Layer2TopologyVersion = ""
		if slices.Contains(upgraded, name) {
			n.Layer2TopologyVersion = cluster.Layer2TopologyVersionTransitRouter
		}
		n.Layer2GatewayTunnelIDs = map[string]int{"cluster_udn_green": 4 + i}
		nodes = append(nodes, n)
	}
	net := &cluster.Network{
		Name:           "cluster_udn_green",
		Topology:       cluster.Layer2,
		Role:           cluster.Primary,
		Subnets:        []cluster.Subnet{{CIDR: pfx("203.203.0.0/24")}, {CIDR: pfx("2010:100:200::/60")}},
		MTU:            1400,
		Transport:      cluster.Geneve,
		JoinSubnets:    prefixes("100.65.0.0/16", "fd99::/64"),
		TransitSubnets: prefixes("100.88.0.0/16", "fd97::/64"),
		ID:             2,
		TunnelKeys:     []int{16711685, 16715779},
		Namespaces:     []string{"green"},
		Owner:          cluster.ObjectRef{Kind: "ClusterUserDefinedNetwork", Name: "green"},
	}
	var pods []*cluster.Pod
	for i, node := range []string{"node1", "node2", "node3"} {
		o := 3 + i
		pods = append(pods, &cluster.Pod{Namespace: "green", Name: "pod-" + node, Node: node, Running: true, Networks: map[string]cluster.PodInterface{
			net.Name: {IPs: prefixes("203.203.0."+itoa(o)+"/24", "2010:100:200::"+itoa(o)+"/60"), MAC: "0a:58:cb:cb:00:0" + itoa(o), Role: "primary", TunnelID: 7 + i},
		}})
	}
	return &cluster.State{Config: baseConfig(), Nodes: nodes, Networks: []*cluster.Network{net}, Pods: pods}
}
