package connectcmd

import (
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strings"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// defaultConnectSubnet is the connect subnet of a family when --subnet is not given
// (cluster.DefaultConnectSubnets).
func defaultConnectSubnet(v4 bool) cluster.ConnectSubnet {
	defaults := cluster.DefaultConnectSubnets()
	i := slices.IndexFunc(defaults, func(s cluster.ConnectSubnet) bool { return s.CIDR.Addr().Is4() == v4 })
	return defaults[i]
}

// defaultNetworkPrefix is --network-prefix's default: the IPv4 default connect
// subnet's block length.
var defaultNetworkPrefix = defaultConnectSubnet(true).NetworkPrefix

// ipv6PrefixOffset turns an IPv4 prefix length into the IPv6 one with as many host
// bits: the API requires 32 - IPv4 networkPrefix == 128 - IPv6 networkPrefix.
const ipv6PrefixOffset = 128 - 32

// connectSubnet is one family's connect address space and each network's block size,
// with how the user gave it, for messages.
type connectSubnet struct {
	cidr        netip.Prefix
	blockPrefix int
	// origin names the value in messages: "--subnet 10.0.0.0/16" or "the default
	// connect subnet 192.168.0.0/16".
	origin string
}

func (s connectSubnet) api() ovnkv1.ConnectSubnet {
	return ovnkv1.ConnectSubnet{CIDR: ovnkv1.ConnectCIDR(s.cidr.String()), NetworkPrefix: int32(s.blockPrefix)}
}

// parseCIDRs reads a flag of one CIDR per IP family, such as --subnet and the
// deprecated --service-cidr: each a network address, at most one IPv4 and one IPv6.
func parseCIDRs(flag string, values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		p, err := netip.ParsePrefix(strings.TrimSpace(v))
		switch {
		case err != nil:
			return nil, fmt.Errorf("--%s %s: not a CIDR; write it as 192.168.0.0/16 or fd00:10::/112", flag, v)
		case p != p.Masked():
			return nil, fmt.Errorf("--%s %s: host bits set; did you mean %s?", flag, v, p.Masked())
		}
		for _, q := range out {
			if q.Addr().Is4() == p.Addr().Is4() {
				return nil, fmt.Errorf("--%s %s: give at most one IPv4 and one IPv6 CIDR", flag, strings.Join(values, ","))
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// blockPrefix is a network's block length in a family for --network-prefix n: n is an
// IPv4 length (IPv6 blocks are ipv6PrefixOffset longer, so both hold as many links),
// or, above 32, an IPv6 length (IPv4 blocks are ipv6PrefixOffset shorter).
func blockPrefix(n int, v4 bool) int {
	switch {
	case n <= 32 && !v4:
		return n + ipv6PrefixOffset
	case n > 32 && v4:
		return n - ipv6PrefixOffset
	}
	return n
}

// checkBlockPrefix checks that a network's block is a part of the subnet that holds a
// link (two addresses).
func checkBlockPrefix(s connectSubnet, n int) error {
	bitLen := s.cidr.Addr().BitLen()
	if s.blockPrefix > s.cidr.Bits() && s.blockPrefix < bitLen {
		return nil
	}
	lo, hi := s.cidr.Bits()+1, bitLen-1
	family := "IPv4"
	if !s.cidr.Addr().Is4() {
		family = "IPv6"
	}
	if s.blockPrefix < 1 {
		return fmt.Errorf("--network-prefix %d is an IPv6 prefix length (it is above 32), and IPv4 has none %d shorter for %s: give the IPv4 length instead, e.g. %d, and IPv6 blocks are %d longer",
			n, ipv6PrefixOffset, s.origin, defaultNetworkPrefix, ipv6PrefixOffset)
	}
	if s.blockPrefix != n {
		return fmt.Errorf("--network-prefix %d: that gives %s blocks of /%d, which do not fit %s: a block must be smaller than the subnet and hold a link of two addresses, so give an %s prefix from %d to %d (or the %s one, %d apart)",
			n, family, s.blockPrefix, s.origin, family, lo, hi, otherFamily(family), ipv6PrefixOffset)
	}
	return fmt.Errorf("--network-prefix %d does not fit %s: each network's block must be smaller than the subnet and hold a link of two addresses, so use a prefix from %d to %d",
		n, s.origin, lo, hi)
}

func otherFamily(family string) string {
	if family == "IPv4" {
		return "IPv6"
	}
	return "IPv4"
}

// pow2 is 2^n, saturated where it would overflow: such a count is more than enough.
func pow2(n int) uint64 {
	if n >= 62 {
		return 1 << 62
	}
	return 1 << n
}

// log2Ceil is the least n with 2^n >= v.
func log2Ceil(v uint64) int {
	if v <= 1 {
		return 0
	}
	return bits.Len64(v - 1)
}

// checkCapacity checks that the subnet holds a block for each network, and each block
// the links of a Layer3 network (layer3Addrs addresses, see layer3LinkAddresses) or
// the one link of a Layer2 network.
func checkCapacity(s connectSubnet, flagPrefix int, nets []netview.Network, layer3Addrs int, layer3Text string) error {
	bitLen := s.cidr.Addr().BitLen()
	blockSize := pow2(bitLen - s.blockPrefix)
	var layer3 []string
	for _, n := range nets {
		if n.Topology() == ovnkv1.NetworkTopologyLayer3 {
			layer3 = append(layer3, n.Ref())
		}
	}
	// A Layer2 network's one link, or a Layer3 network's links by the leader's rule.
	need := uint64(2)
	if len(layer3) > 0 {
		need = max(need, uint64(layer3Addrs))
	}
	if blockSize < need {
		longest := bitLen - log2Ceil(need)
		if s.cidr.Addr().Is4() != (flagPrefix <= 32) {
			longest = blockPrefix(longest, flagPrefix <= 32)
		}
		return fmt.Errorf("--network-prefix %d gives each network a block of %d addresses in %s, but Layer3 network%s %s need%s 2 per node, %d %s: use --network-prefix %d or less",
			flagPrefix, blockSize, s.origin, plural(len(layer3)), andList(layer3), verbS(len(layer3)), need, layer3Text, longest)
	}
	blocks := pow2(s.blockPrefix - s.cidr.Bits())
	if blocks < uint64(len(nets)) {
		widest := s.blockPrefix - log2Ceil(uint64(len(nets)))
		return fmt.Errorf("%s holds %d blocks of /%d, but the %d networks need one each, %d addresses: use a /%d or larger, or a longer --network-prefix",
			s.origin, blocks, s.blockPrefix, len(nets), uint64(len(nets))*blockSize, widest)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// verbS is the "s" of a verb whose subject is n things: "needs" for one.
func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// modelSubnets are the connect subnets as pkg/cluster has them.
func modelSubnets(subnets []connectSubnet) []cluster.ConnectSubnet {
	out := make([]cluster.ConnectSubnet, len(subnets))
	for i, s := range subnets {
		out[i] = cluster.ConnectSubnet{CIDR: s.cidr, NetworkPrefix: s.blockPrefix}
	}
	return out
}

// originOf names the connect subnet p in messages, as the user gave it.
func originOf(subnets []connectSubnet, p netip.Prefix) string {
	return subnets[slices.IndexFunc(subnets, func(s connectSubnet) bool { return s.cidr == p })].origin
}

// reservedOverlaps refuses connect subnets the leader would refuse for overlapping a
// range: one of the cluster's own (cluster.CheckConnectReserved: nothing would be
// connected), or one of a network the connect selects, which are exactly nets, cnets as
// the leader reads them (cluster.CheckConnectNetwork: that network would not be
// connected). A range of a network the connect does not select is the leader's concern
// only once a connect through these subnets selects it, so for the connectable networks
// not selected it returns warnings rather than an error: such a network could never be
// connected through these subnets.
func reservedOverlaps(snap *snapshot, reserved []cluster.ReservedRange, nets []netview.Network, cnets []*cluster.Network, subnets []connectSubnet) ([]string, error) {
	model := modelSubnets(subnets)
	var clash *cluster.ConnectReservedError
	if errors.As(cluster.CheckConnectReserved(model, reserved), &clash) {
		return nil, fmt.Errorf("%s overlaps %s: a connect subnet must stay out of the cluster's own ranges (its cluster, join, transit, masquerade and service subnets), so choose another with --subnet",
			originOf(subnets, clash.Subnet), clash.Range.What)
	}
	for i, cn := range cnets {
		var own *cluster.ConnectNetworkOverlapError
		if errors.As(cluster.CheckConnectNetwork(model, cn), &own) {
			return nil, fmt.Errorf("%s overlaps %s of network %s: a connect subnet must stay out of the subnets, join and transit subnets of the networks it connects, so choose another with --subnet",
				originOf(subnets, own.Subnet), own.Range.What, nets[i].Ref())
		}
	}
	var warnings []string
	for _, n := range snap.networks {
		if slices.ContainsFunc(nets, func(m netview.Network) bool { return m.Owner() == n.Owner() }) {
			continue
		}
		cn, err := snap.model.Network(n)
		if err != nil || cluster.Connectability(cn) != cluster.Connectable {
			continue // never connected: its ranges are free
		}
		var own *cluster.ConnectNetworkOverlapError
		if errors.As(cluster.CheckConnectNetwork(model, cn), &own) {
			warnings = append(warnings, fmt.Sprintf("%s overlaps %s of network %s, which this connect does not select, so it is allowed; but no connect through this subnet could ever connect %s: choose another --subnet if it may join these networks later",
				originOf(subnets, own.Subnet), own.Range.What, n.Ref(), n.Ref()))
		}
	}
	return warnings, nil
}
