package cluster

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/ovnk/ovnk/pkg/alloc"
)

// The checks between networks that decide whether the leader creates a valid network,
// and that kubectl ovnk network create runs first to refuse what the leader would. A
// network that fails one is left uncreated (its NetworkCreated condition False), and
// its ranges do not count against the networks checked after it.

// ReservedRange is a range no user-defined network's subnets may overlap, and how
// messages name it, e.g. `cluster subnet 10.244.0.0/16 of network "default"`.
type ReservedRange struct {
	Prefix netip.Prefix
	What   string
}

// ReservedOverlapError says that a network's subnet or join subnet overlaps a range it
// must stay out of: one of the cluster's reserved ranges, or (for a subnet) the
// network's own join or Layer3 transit subnet.
type ReservedOverlapError struct {
	Network string
	// Subnet is the network's subnet, or its join subnet when Join is set.
	Subnet netip.Prefix
	Join   bool
	// Range is what it overlaps.
	Range ReservedRange
	// Own says Range is one of the network's own join or transit subnets.
	Own bool
}

func (e *ReservedOverlapError) Error() string {
	if e.Join {
		return fmt.Sprintf("network %q join subnet %s overlaps %s; set joinSubnets to a range the cluster does not use", e.Network, e.Subnet, e.Range.What)
	}
	return fmt.Sprintf("network %q subnet %s overlaps %s; use a subnet that overlaps none of the cluster's subnets and no other network of the same namespaces",
		e.Network, e.Subnet, e.Range.What)
}

// SubnetConflictError says that two networks serving one namespace have overlapping
// subnets: a pod address would not say which network it is on.
type SubnetConflictError struct {
	Network, Other      string
	Subnet, OtherSubnet netip.Prefix
	Namespace           string
}

func (e *SubnetConflictError) Error() string {
	return fmt.Sprintf("network %q subnet %s overlaps subnet %s of network %q, which also serves namespace %q; networks of the same namespace need subnets that do not overlap",
		e.Network, e.Subnet, e.OtherSubnet, e.Other, e.Namespace)
}

// PrimaryConflictError says that a namespace would get a second primary network.
type PrimaryConflictError struct {
	Network, Other, Namespace string
}

func (e *PrimaryConflictError) Error() string {
	return fmt.Sprintf("network %q would be the second primary network of namespace %q, whose primary network is %q; a namespace has at most one primary network: select other namespaces or delete one of the networks",
		e.Network, e.Namespace, e.Other)
}

// CheckReserved checks n's subnets against reserved and against its own join subnets
// and, for Layer3, its transit subnets (a Layer2 network's transit subnets already
// avoid its subnets), and its join subnets against reserved. The error is a
// *ReservedOverlapError.
func CheckReserved(n *Network, reserved []ReservedRange) error {
	type candidate struct {
		ReservedRange
		own bool
	}
	var ranges []candidate
	for _, r := range reserved {
		ranges = append(ranges, candidate{r, false})
	}
	for _, j := range n.JoinSubnets {
		ranges = append(ranges, candidate{ReservedRange{j, fmt.Sprintf("its own join subnet %s", j)}, true})
	}
	if n.Topology == Layer3 {
		for _, t := range n.TransitSubnets {
			ranges = append(ranges, candidate{ReservedRange{t, fmt.Sprintf("its transit subnet %s", t)}, true})
		}
	}
	for _, s := range n.Subnets {
		for _, r := range ranges {
			if s.CIDR.Overlaps(r.Prefix) {
				return &ReservedOverlapError{Network: n.Name, Subnet: s.CIDR, Range: r.ReservedRange, Own: r.own}
			}
		}
	}
	for _, j := range n.JoinSubnets {
		for _, r := range reserved {
			if j.Overlaps(r.Prefix) {
				return &ReservedOverlapError{Network: n.Name, Subnet: j, Join: true, Range: r}
			}
		}
	}
	return nil
}

// CheckConflicts checks n against the networks accepted before it, by namespace: with
// one serving a namespace n serves, n may not be a second primary network
// (*PrimaryConflictError) nor have an overlapping subnet (*SubnetConflictError).
func CheckConflicts(n *Network, accepted map[string][]*Network) error {
	seen := map[*Network]bool{}
	for _, ns := range n.Namespaces {
		for _, o := range accepted[ns] {
			if seen[o] {
				continue
			}
			seen[o] = true
			if n.Role == Primary && o.Role == Primary {
				return &PrimaryConflictError{Network: n.Name, Other: o.Name, Namespace: ns}
			}
			for _, s := range n.Subnets {
				for _, os := range o.Subnets {
					if s.CIDR.Overlaps(os.CIDR) {
						return &SubnetConflictError{Network: n.Name, Subnet: s.CIDR, Other: o.Name, OtherSubnet: os.CIDR, Namespace: ns}
					}
				}
			}
		}
	}
	return nil
}

// AcceptNetworks runs CheckOVNName, CheckSubnets, CheckReserved, CheckSpecialRanges
// and CheckConflicts over networks, which are in order of seniority
// (CompareSeniority): each is checked against those accepted before it, so that an
// established network never loses to a newcomer. It returns the refused networks, each
// with why.
func AcceptNetworks(networks []*Network, reserved []ReservedRange) map[*Network]error {
	refused := map[*Network]error{}
	accepted := map[string][]*Network{} // by namespace
	byOVNName := map[string]*Network{}
	for _, n := range networks {
		err := CheckOVNName(n, byOVNName)
		if err == nil {
			err = CheckSubnets(n, reserved)
		}
		if err == nil {
			err = CheckReserved(n, reserved)
		}
		if err == nil {
			err = CheckSpecialRanges(n)
		}
		if err == nil {
			err = CheckConflicts(n, accepted)
		}
		if err != nil {
			refused[n] = err
			continue
		}
		byOVNName[OVNName(n.Name)] = n
		for _, ns := range n.Namespaces {
			accepted[ns] = append(accepted[ns], n)
		}
	}
	return refused
}

// CompareSeniority orders two networks for AcceptNetworks: the one that holds a
// network id (the leader allocated it, so it exists in OVN) first, then the older
// one. Equal ones keep the caller's order, which should be by name.
func CompareSeniority(aHoldsID bool, aCreated time.Time, bHoldsID bool, bCreated time.Time) int {
	if aHoldsID != bHoldsID {
		if aHoldsID {
			return -1
		}
		return 1
	}
	return aCreated.Compare(bCreated)
}

// OVNNameConflictError says that a network's OVN name is an older network's: OVN names
// write "-" and "/" as "." (OVNPrefix), so networks named col-a and col.a would share
// every OVN row, each zone programming one over the other.
type OVNNameConflictError struct {
	Network, Other string
	// OVNName is the name both map to, e.g. cluster_udn_col.a.
	OVNName string
}

func (e *OVNNameConflictError) Error() string {
	return fmt.Sprintf("network %q has the OVN name %q of network %q (OVN names write \"-\" as \".\"), so the two would share their OVN rows: rename one of them",
		e.Network, e.OVNName, e.Other)
}

// OVNName is the name of network in OVN's rows, the stem of every row name of the
// network (OVNPrefix without its "_"): names that differ only in "-" against "." have
// the same one.
func OVNName(network string) string { return strings.TrimSuffix(OVNPrefix(network), "_") }

// CheckOVNName checks that no network accepted before n, of accepted (by OVN name),
// has n's OVN name (*OVNNameConflictError).
func CheckOVNName(n *Network, accepted map[string]*Network) error {
	name := OVNName(n.Name)
	if o := accepted[name]; o != nil && o != n {
		return &OVNNameConflictError{Network: n.Name, Other: o.Name, OVNName: name}
	}
	return nil
}

// UnusableSubnetError says that a subnet cannot carry the network's pods whatever else
// the cluster holds: an address range with a meaning of its own, one leaving no address
// for pods, or an IP family the cluster does not have.
type UnusableSubnetError struct {
	Network string
	Subnet  netip.Prefix
	// Problem says what is wrong, e.g. "overlaps the multicast range 224.0.0.0/4".
	Problem string
	// Fix says what to do instead.
	Fix string
}

func (e *UnusableSubnetError) Error() string {
	return fmt.Sprintf("network %q subnet %s %s: %s", e.Network, e.Subnet, e.Problem, e.Fix)
}

// specialRanges are the address ranges with a meaning of their own (RFC 6890), which
// no pod address may take: packets to them never reach a pod.
var specialRanges = []ReservedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), `the "this network" range 0.0.0.0/8`},
	{netip.MustParsePrefix("127.0.0.0/8"), "the loopback range 127.0.0.0/8"},
	{netip.MustParsePrefix("169.254.0.0/16"), "the link-local range 169.254.0.0/16"},
	{netip.MustParsePrefix("224.0.0.0/4"), "the multicast range 224.0.0.0/4"},
	{netip.MustParsePrefix("240.0.0.0/4"), "the reserved range 240.0.0.0/4 (with the broadcast address)"},
	{netip.MustParsePrefix("::/127"), "the unspecified and loopback addresses ::/127"},
	{netip.MustParsePrefix("fe80::/10"), "the link-local range fe80::/10"},
	{netip.MustParsePrefix("ff00::/8"), "the multicast range ff00::/8"},
}

// CheckSubnets checks that each of n's subnets can carry pods: of an IP family of the
// cluster, which the reserved ranges tell (the cluster's own ranges exist for each of
// its families; nil reserved checks no family), not the whole address space, and, for
// each node's block (a Layer3 host subnet) or the whole subnet (Layer2), with
// addresses left for pods once the first alloc.PodAddressSkip and an IPv4 broadcast
// address are kept. The error is an *UnusableSubnetError.
func CheckSubnets(n *Network, reserved []ReservedRange) error {
	for _, sub := range n.Subnets {
		s := sub.CIDR
		family, other := "IPv4", "IPv6"
		if s.Addr().Is6() {
			family, other = other, family
		}
		if len(reserved) > 0 && !slices.ContainsFunc(reserved, func(r ReservedRange) bool { return r.Prefix.Addr().Is4() == s.Addr().Is4() }) {
			return &UnusableSubnetError{Network: n.Name, Subnet: s, Problem: fmt.Sprintf("is %s, and the cluster is %s only", family, other),
				Fix: fmt.Sprintf("give only %s subnets, or make the cluster dual-stack first", other)}
		}
		if s.Bits() == 0 {
			return &UnusableSubnetError{Network: n.Name, Subnet: s, Problem: "is every " + family + " address", Fix: privateRangeFix}
		}
		block, problem, fix := s.Bits(), "leaves", "use a larger subnet"
		if n.Topology == Layer3 {
			block = sub.HostSubnet
			problem = fmt.Sprintf("gives each node a /%d, which leaves", block)
			fix = "give each node a larger block (a shorter host subnet)"
		}
		if !roomForPods(s.Addr().Is4(), block) {
			return &UnusableSubnetError{Network: n.Name, Subnet: s,
				Problem: problem + " no address for pods once the network address, gateway and management port (and for IPv4 the broadcast address) are kept",
				Fix:     fmt.Sprintf("%s: at most /%d for IPv4, /%d for IPv6", fix, maxPodPrefix(true), maxPodPrefix(false))}
		}
	}
	return nil
}

// privateRangeFix is the fix of a subnet no pod can use.
const privateRangeFix = "choose a private range, e.g. 10.128.0.0/16 or fd00:10::/48"

// CheckSpecialRanges checks that none of n's subnets overlaps a range of
// specialRanges. AcceptNetworks runs it after CheckReserved, so that a subnet over
// the masquerade subnet (in the link-local range) is told so. The error is an
// *UnusableSubnetError.
func CheckSpecialRanges(n *Network) error {
	for _, sub := range n.Subnets {
		for _, r := range specialRanges {
			if sub.CIDR.Overlaps(r.Prefix) {
				return &UnusableSubnetError{Network: n.Name, Subnet: sub.CIDR, Problem: "overlaps " + r.What + ", which pods cannot use", Fix: privateRangeFix}
			}
		}
	}
	return nil
}

// roomForPods reports whether a block of prefix length bits leaves a pod address.
func roomForPods(is4 bool, bits int) bool {
	hostBits := 128 - bits
	if is4 {
		hostBits = 32 - bits
	}
	if hostBits >= 8 {
		return true // 256 addresses or more always leave some; and 1<<hostBits could overflow
	}
	size := 1 << hostBits
	if is4 {
		size-- // the broadcast address
	}
	return size > alloc.PodAddressSkip
}

// maxPodPrefix is the longest prefix that leaves a pod address.
func maxPodPrefix(is4 bool) int {
	bits := 128
	if is4 {
		bits = 32
	}
	for !roomForPods(is4, bits) {
		bits--
	}
	return bits
}
