package alloc_test

import (
	"fmt"
	"net/netip"

	"github.com/ovnk/ovnk/pkg/alloc"
)

// A new leader resumes: it reserves what the nodes' annotations say, then allocates for
// the nodes without a subnet.
func ExampleSubnetAllocator() {
	a, err := alloc.NewSubnetAllocator(netip.MustParsePrefix("10.244.0.0/16"), 24)
	if err != nil {
		panic(err)
	}
	persisted := map[string]string{"node-a": "10.244.0.0/24", "node-c": "10.244.2.0/24"}
	for _, node := range []string{"node-a", "node-c"} {
		if err := a.Reserve(node, netip.MustParsePrefix(persisted[node])); err != nil {
			panic(err)
		}
	}
	for _, node := range []string{"node-b", "node-d"} {
		p, _ := a.Allocate(node)
		fmt.Println(node, p)
	}
	// Output:
	// node-b 10.244.1.0/24
	// node-d 10.244.3.0/24
}

func ExampleNetworkTunnelKeys() {
	keys := alloc.NewTunnelKeyAllocator()
	l3, _ := alloc.NetworkTunnelKeys(keys, "cluster_udn_blue", 1, "Layer3", true)
	l2, _ := alloc.NetworkTunnelKeys(keys, "cluster_udn_green", 2, "Layer2", true)
	cnc, _ := keys.Allocate("cnc/blue-green", 1)
	fmt.Println(l3, l2, cnc)
	// Output: [16711684] [16711685 16715779] [16715780]
}

func ExampleTransitSubnets() {
	defaults := []netip.Prefix{netip.MustParsePrefix("100.88.0.0/16"), netip.MustParsePrefix("fd97::/64")}
	// A Layer2 network whose subnet is the default transit subnet, and its join subnets.
	avoid := []netip.Prefix{netip.MustParsePrefix("100.88.0.0/16"),
		netip.MustParsePrefix("100.65.0.0/16"), netip.MustParsePrefix("fd99::/64")}
	transit, changed, _ := alloc.TransitSubnets(defaults, avoid)
	fmt.Println(transit, changed)
	// Output: [100.89.0.0/16 fd97::/64] true
}

// The addresses of node id 4's ports on a dual-stack primary Layer2 network.
func ExampleTransitPeers() {
	router, gateway, _ := alloc.TransitPeers(netip.MustParsePrefix("100.88.0.0/16"), 4)
	join, _ := alloc.GatewayRouterJoinIP(netip.MustParsePrefix("100.65.0.0/16"), 4)
	mac := alloc.MACFromIP(join.Addr())
	fmt.Println("trtor", router, "rtotr", gateway, join, mac)
	gw := netip.MustParseAddr("203.203.0.1")
	lla, _ := alloc.LinkLocalFromMAC(alloc.MACFromIP(gw))
	fmt.Println("default gateway", gw, alloc.MACFromIP(gw), lla)
	// Output:
	// trtor 100.88.0.8/31 rtotr 100.88.0.9/31 100.65.0.4/16 0a:58:64:41:00:04
	// default gateway 203.203.0.1 0a:58:cb:cb:00:01 fe80::858:cbff:fecb:1
}
