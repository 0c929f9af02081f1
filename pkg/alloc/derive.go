// Package alloc derives and allocates the addresses, MACs, ids and tunnel keys of the
// OVN topology. Derivations are pure functions of ids every zone knows (node id,
// network id), so every zone computes the same values without talking to the others;
// allocators hand out what cannot be derived and are driven by the elected leader.
package alloc

import (
	"crypto/sha256"
	"fmt"
	"math"
	"net"
	"net/netip"
)

// offsetAddr returns the address n places after base, or an error if it falls outside p
// or p is the zero prefix. It runs once per node and network in every zone's compile,
// so it uses the allocation-free uint128 arithmetic rather than math/big.
func offsetAddr(p netip.Prefix, n uint64) (netip.Addr, error) {
	if !p.IsValid() {
		return netip.Addr{}, fmt.Errorf("no prefix given (the zero netip.Prefix)")
	}
	p = p.Masked()
	// A subnet of 64 or more host bits holds every uint64 offset.
	if hostBits := p.Addr().BitLen() - p.Bits(); hostBits < 64 && n >= uint64(1)<<hostBits {
		return netip.Addr{}, fmt.Errorf("offset %d is outside %s", n, p)
	}
	return addrNum(p.Addr()).add(uint128{lo: n}).addr(p.Addr().Is4()), nil
}

// NthAddr returns the n-th address of p (0 is the network address), for example the
// gateway (.1) and management port (.2) addresses of a node subnet. p need not be masked.
// It fails for a negative n, an n past p's last address, and the zero prefix.
func NthAddr(p netip.Prefix, n int) (netip.Addr, error) {
	if n < 0 {
		return netip.Addr{}, fmt.Errorf("negative offset %d in %s", n, p)
	}
	return offsetAddr(p, uint64(n))
}

// TransitPeers returns the pair of addresses joining a Layer2 network's transit router
// to node nodeID's gateway router: the /31 (IPv4) or /127 (IPv6) at transit base + 2N,
// its first address on the transit router, its second on the gateway router. Node id 0
// gets the subnet's first pair; the last node id that fits is half the subnet's size
// minus one (32767 in a /16); beyond it, and for a negative id, it fails.
func TransitPeers(transit netip.Prefix, nodeID int) (router, gateway netip.Prefix, err error) {
	if nodeID < 0 {
		return router, gateway, fmt.Errorf("node id %d is negative", nodeID)
	}
	bits := transit.Addr().BitLen() - 1
	first, err := offsetAddr(transit, 2*uint64(nodeID))
	if err != nil {
		return router, gateway, fmt.Errorf("transit peers of node id %d: %w; use a larger transit subnet", nodeID, err)
	}
	second, err := offsetAddr(transit, 2*uint64(nodeID)+1)
	if err != nil {
		return router, gateway, fmt.Errorf("transit peers of node id %d: %w; use a larger transit subnet", nodeID, err)
	}
	return netip.PrefixFrom(first, bits), netip.PrefixFrom(second, bits), nil
}

// TransitSwitchIP returns node nodeID's address on a Layer3 transit switch: transit base
// + N with the transit subnet's prefix length. It fails for a negative id and for an id
// past the subnet's last address (65535 is the last in a /16).
func TransitSwitchIP(transit netip.Prefix, nodeID int) (netip.Prefix, error) {
	return hostInPrefix(transit, nodeID, "transit switch IP")
}

// GatewayRouterJoinIP returns node nodeID's gateway router address on the join subnet:
// join base + N with the join subnet's prefix length. (.1 is the cluster router's.) It
// fails for a negative id and for an id past the subnet's last address.
func GatewayRouterJoinIP(join netip.Prefix, nodeID int) (netip.Prefix, error) {
	return hostInPrefix(join, nodeID, "gateway router join IP")
}

func hostInPrefix(p netip.Prefix, n int, what string) (netip.Prefix, error) {
	if n < 0 {
		return netip.Prefix{}, fmt.Errorf("%s: node id %d is negative", what, n)
	}
	a, err := offsetAddr(p, uint64(n))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s of node id %d: %w; use a larger subnet", what, n, err)
	}
	return netip.PrefixFrom(a, p.Bits()), nil
}

// MACFromIP derives a router port's MAC from its address as OVN-Kubernetes does
// (util.IPAddrToHWAddr): 0a:58 followed by the four bytes of an IPv4 address
// (203.203.0.1 → 0a:58:cb:cb:00:01; an IPv4-mapped IPv6 address counts as IPv4), or by
// the first four bytes of the SHA-256 of an IPv6 address's text form (fd99::4 →
// 0a:58:29:37:8e:56). An IPv6 zone is ignored. It returns nil for the zero netip.Addr.
func MACFromIP(ip netip.Addr) net.HardwareAddr {
	if !ip.IsValid() {
		return nil
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		b := ip.As4()
		return net.HardwareAddr{0x0a, 0x58, b[0], b[1], b[2], b[3]}
	}
	h := sha256.Sum256([]byte(ip.String()))
	return net.HardwareAddr{0x0a, 0x58, h[0], h[1], h[2], h[3]}
}

// LinkLocalFromMAC derives the IPv6 link-local address a router advertises from its MAC
// by modified EUI-64 (0a:58:cb:cb:00:01 → fe80::858:cbff:fecb:1), the address OVN gives
// a router port without one configured. It fails unless the MAC has 6 bytes.
func LinkLocalFromMAC(mac net.HardwareAddr) (netip.Addr, error) {
	if len(mac) != 6 {
		return netip.Addr{}, fmt.Errorf("MAC %q is not 48 bits; give a 6-byte MAC such as 0a:58:cb:cb:00:01", mac)
	}
	var b [16]byte
	b[0], b[1] = 0xfe, 0x80
	b[8] = mac[0] ^ 0x02 // flip the universal/local bit
	b[9], b[10] = mac[1], mac[2]
	b[11], b[12] = 0xff, 0xfe
	b[13], b[14], b[15] = mac[3], mac[4], mac[5]
	return netip.AddrFrom16(b), nil
}

// MasqueradeIPs returns a user-defined network's two masquerade addresses, as
// OVN-Kubernetes derives them from the network id: the gateway router's at offset
// 10 + 2·id − 1 and the management port's at 10 + 2·id of the masquerade subnet. The
// first ten addresses belong to the default network. Network id 1 in 169.254.0.0/17 gets
// 169.254.0.11 and 169.254.0.12; the last id that fits a /17 is 16378. It fails for an id
// below 1 and for one whose addresses fall outside the subnet.
func MasqueradeIPs(masquerade netip.Prefix, networkID int) (gatewayRouter, managementPort netip.Addr, err error) {
	if networkID < 1 {
		return gatewayRouter, managementPort, fmt.Errorf("masquerade IPs need a user-defined network id (1 or more), got %d", networkID)
	}
	if uint64(networkID) > (math.MaxUint64-10)/2 {
		// 10+2·id would wrap around and land inside the subnet.
		return gatewayRouter, managementPort, fmt.Errorf("masquerade IPs of network id %d: the id is too large for any subnet", networkID)
	}
	gatewayRouter, err = offsetAddr(masquerade, 10+2*uint64(networkID)-1)
	if err != nil {
		return gatewayRouter, managementPort, fmt.Errorf("masquerade IP of network id %d: %w; use a larger masquerade subnet", networkID, err)
	}
	managementPort, err = offsetAddr(masquerade, 10+2*uint64(networkID))
	if err != nil {
		return gatewayRouter, managementPort, fmt.Errorf("masquerade IP of network id %d: %w; use a larger masquerade subnet", networkID, err)
	}
	return gatewayRouter, managementPort, nil
}

// UpgradeJoinIP returns the dummy join-subnet address of OKEP-5094's upgrade port: the
// highest address of the join subnet but its last that taken does not claim (a node's
// join IP), with the subnet's prefix length — 100.65.255.254/16 of 100.65.0.0/16 and
// fd99::ffff:ffff:ffff:fffe/64 of fd99::/64 when no node has them. A node that moved to
// the transit-router Layer2 topology puts it on its transit router's "-upgrade" port so
// that the join IPs of nodes still on the legacy topology are on a connected subnet; it
// is never a packet's source or destination, and every zone derives the same. It fails
// when every address but the network's and the last is taken.
func UpgradeJoinIP(join netip.Prefix, taken func(netip.Addr) bool) (netip.Prefix, error) {
	join = join.Masked()
	if join.Addr().BitLen()-join.Bits() < 2 {
		return netip.Prefix{}, fmt.Errorf("join subnet %s is too small for an upgrade address; it needs at least 4 addresses", join)
	}
	first := addrNum(join.Addr()).add(uint128{lo: 1})
	for n := addrNum(join.Addr()).add(prefixSize(join)).sub(uint128{lo: 2}); !n.less(first); n = n.sub(uint128{lo: 1}) {
		if a := n.addr(join.Addr().Is4()); !taken(a) {
			return netip.PrefixFrom(a, join.Bits()), nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("join subnet %s has no address left for the upgrade port: every one is a node's join IP; use a larger join subnet", join)
}
