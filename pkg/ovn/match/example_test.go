package match_test

import (
	"fmt"
	"net/netip"

	"github.com/ovnk/ovnk/pkg/ovn/match"
)

// A router policy matched against two packets, and the way prerequisites survive
// negation: neither `tcp.dst != 80` nor `!(tcp.dst == 80)` matches a UDP packet.
func Example() {
	policy, err := match.Parse(`inport == "rtos-blue_node1" && ip4.dst == 100.65.0.2 /* blue_node1 */`)
	if err != nil {
		panic(err)
	}
	pkt := match.Packet{
		InPort: "rtos-blue_node1", EthType: 0x0800, Proto: 17, L4Dst: 53,
		IPSrc: netip.MustParseAddr("10.10.0.5"), IPDst: netip.MustParseAddr("100.65.0.2"),
	}
	ok, _ := policy.Eval(&pkt, nil)
	fmt.Println(policy, "=>", ok, policy.Fields())

	for _, s := range []string{`tcp.dst != 80`, `!(tcp.dst == 80)`, `udp.dst != 80`} {
		e, _ := match.Parse(s)
		ok, _ := e.Eval(&pkt, nil)
		fmt.Println(s, "=>", ok)
	}

	_, err = match.Parse(`!tcp`)
	fmt.Println(err)
	// Output:
	// inport == "rtos-blue_node1" && ip4.dst == 100.65.0.2 /* blue_node1 */ => true [eth.type inport ip4.dst]
	// tcp.dst != 80 => false
	// !(tcp.dst == 80) => false
	// udp.dst != 80 => true
	// column 2: nominal predicate tcp may only be tested positively (tcp or tcp == 1, not !tcp or tcp == 0)
}
