package alloc

import (
	"fmt"
	"net/netip"
)

// MaxPortTunnelKey is the largest tunnel key OVN gives a logical port
// (options:requested-tnl-key of a switch or router port is 1–32767): the Geneve option
// carries a packet's logical ingress port in 15 bits. It bounds how many ports one
// router can have when their keys must agree across zones, as a connect router's do.
const MaxPortTunnelKey = 1<<15 - 1

// ConnectLink returns link number index of a ClusterNetworkConnect block (OKEP-5224):
// the /31 (IPv4) or /127 (IPv6) at block base + 2·index. Its first address is the
// network router's port (rtocr-), its second the connect router's port (crtor-), as in
// the OKEP's listings. A Layer3 network's link on node N has index N; a Layer2
// network's only link has index 0. It fails for a negative index, and for one whose
// link falls outside the block, naming the block size the index needs.
func ConnectLink(block netip.Prefix, index int) (network, connect netip.Prefix, err error) {
	if !block.IsValid() {
		return network, connect, fmt.Errorf("connect link %d: no block given (the zero netip.Prefix)", index)
	}
	if index < 0 {
		return network, connect, fmt.Errorf("connect link index %d is negative", index)
	}
	bits := block.Addr().BitLen() - 1
	first, err := offsetAddr(block, 2*uint64(index))
	if err == nil {
		var second netip.Addr
		if second, err = offsetAddr(block, 2*uint64(index)+1); err == nil {
			return netip.PrefixFrom(first, bits), netip.PrefixFrom(second, bits), nil
		}
	}
	return network, connect, fmt.Errorf("connect link %d does not fit block %s: it needs a block of at least %d addresses; use a shorter networkPrefix",
		index, block.Masked(), 2*(index+1))
}

// linksIn is how many /31 (/127) links block holds, saturated at MaxNodeID+1: no index
// beyond a node id is ever asked for.
func linksIn(block netip.Prefix) int {
	hostBits := block.Addr().BitLen() - block.Bits()
	if hostBits < 1 {
		return 0
	}
	if hostBits-1 >= 20 { // 2^20 links is already far beyond any node id
		return MaxNodeID + 1
	}
	return min(1<<(hostBits-1), MaxNodeID+1)
}

// ConnectPortTunnelKey returns the tunnel key of the connect router's port on link, a
// link of a block of the connect subnet with blocks of length networkPrefix:
//
//	key = blockIndex · linksPerBlock + linkIndex + 1
//
// blockIndex is the index of the networkPrefix block holding the link within subnet,
// linkIndex the link's index within that block (a Layer3 link's node id, a Layer2
// link's 0), and linksPerBlock the number of links a block holds, capped at
// MaxNodeID+1 (no link index exceeds a node id, and the cap keeps IPv6 keys small).
// Every zone computes the same key from the CNC's spec and annotation and the node id,
// and two links of one connect router never share a key while their blocks are
// distinct. It fails when link is not inside subnet, networkPrefix does not split
// subnet into blocks of at least one link, the link index reaches linksPerBlock, or the
// key exceeds MaxPortTunnelKey; each error names the values and what to change.
func ConnectPortTunnelKey(subnet netip.Prefix, networkPrefix int, link netip.Prefix) (int, error) {
	subnet = subnet.Masked()
	bits := subnet.Addr().BitLen()
	switch {
	case !subnet.IsValid() || !link.IsValid():
		return 0, fmt.Errorf("connect port tunnel key: subnet %s or link %s is not set", subnet, link)
	case networkPrefix <= subnet.Bits() || networkPrefix > bits-1:
		return 0, fmt.Errorf("connect subnet %s with networkPrefix %d has no blocks of links: networkPrefix must be longer than /%d and at most /%d",
			subnet, networkPrefix, subnet.Bits(), bits-1)
	case link.Addr().Is4() != subnet.Addr().Is4() || !subnet.Contains(link.Addr()):
		return 0, fmt.Errorf("connect link %s is not inside connect subnet %s; the network's k8s.ovn.org/network-connect-subnet block must come from it", link, subnet)
	}
	offset := addrNum(link.Masked().Addr()).sub(addrNum(subnet.Addr()))
	blockIndex := offset.rsh(bits - networkPrefix)
	if blockIndex.hi != 0 || blockIndex.lo > MaxPortTunnelKey {
		return 0, keyLimitError(link, subnet, networkPrefix)
	}
	block := netip.PrefixFrom(link.Addr(), networkPrefix).Masked()
	perBlock := linksIn(block)
	linkIndex := addrNum(link.Masked().Addr()).sub(addrNum(block.Addr())).rsh(1)
	if linkIndex.hi != 0 || linkIndex.lo >= uint64(perBlock) {
		return 0, fmt.Errorf("connect link %s lies past the first %d links of block %s, the links a port tunnel key is reserved for; give the network a block whose links start at its base",
			link, perBlock, block)
	}
	key := blockIndex.lo*uint64(perBlock) + linkIndex.lo + 1
	if key > MaxPortTunnelKey {
		return 0, keyLimitError(link, subnet, networkPrefix)
	}
	return int(key), nil
}

func keyLimitError(link, subnet netip.Prefix, networkPrefix int) error {
	return fmt.Errorf("connect link %s needs a port tunnel key above %d, OVN's limit for one router (block index × %d links per /%d block of %s + link index + 1); connect fewer networks or nodes per ClusterNetworkConnect, or use a smaller connect subnet or a longer networkPrefix",
		link, MaxPortTunnelKey, linksIn(netip.PrefixFrom(subnet.Addr(), networkPrefix)), networkPrefix, subnet)
}
