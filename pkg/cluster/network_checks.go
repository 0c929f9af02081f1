package cluster

import (
	"fmt"
	"net/netip"
	"time"
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

// AcceptNetworks runs CheckReserved and CheckConflicts over networks, which are in
// order of seniority (CompareSeniority): each is checked against those accepted
// before it, so that an established network never loses to a newcomer. It returns
// the refused networks, each with why.
func AcceptNetworks(networks []*Network, reserved []ReservedRange) map[*Network]error {
	refused := map[*Network]error{}
	accepted := map[string][]*Network{} // by namespace
	for _, n := range networks {
		err := CheckReserved(n, reserved)
		if err == nil {
			err = CheckConflicts(n, accepted)
		}
		if err != nil {
			refused[n] = err
			continue
		}
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
