// Package validation checks UserDefinedNetworks and ClusterUserDefinedNetworks in Go
// the way the API server checks them when they are created: the constraints of the
// CRD schema (enums, lengths, ranges, item counts) and the CEL rules of pkg/api/v1,
// with the API server's field paths and the rules' messages. A client can then refuse a
// mistake before it sends anything, and say which value is wrong.
//
// The mirror is kept honest by a test that gives the same objects to this package and
// to a real API server with the generated CRDs and requires the same verdict.
//
// Transition rules (the immutability of topology, role, subnets, mtu, …) are not
// mirrored: they only apply to updates, and the plugin never updates a network.
//
// Strict adds checks the API server does not make, for values it accepts but that are
// almost certainly mistakes (a subnet with host bits set, subnets that overlap).
package validation

import (
	"fmt"
	"net/netip"
	"slices"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// Limits of the CRD schema (the kubebuilder markers of pkg/api/v1).
const (
	// MaxCIDRLength is the longest CIDR string: the longest IPv6 address and /128.
	MaxCIDRLength = 43
	// MinMTU and MaxMTU bound a network's mtu.
	MinMTU = 576
	MaxMTU = 65536
	// MinIPv6MTU is the smallest mtu of a network with an IPv6 subnet (RFC 8200).
	MinIPv6MTU = 1280
	// MinHostSubnet and MaxHostSubnet bound a Layer3 subnet's hostSubnet in the schema;
	// the CEL rules narrow it to the CIDR's family.
	MinHostSubnet = 1
	MaxHostSubnet = 127
	// MaxIPv4HostSubnet and MaxIPv6HostSubnet are the longest host subnets that leave
	// room for pods (a /31 or /127 has no address left after the gateway).
	MaxIPv4HostSubnet = 30
	MaxIPv6HostSubnet = 126
)

// The CEL rules' messages, verbatim: the API server answers with them, and so do we.
const (
	msgNotCIDR             = "must be a CIDR in prefix notation, such as 10.128.0.0/16 or fd00:10:128::/48"
	msgDualStackCIDRs      = "two CIDRs must be one IPv4 and one IPv6 (dual-stack); list at most one CIDR per IP family"
	msgDualStackSubnets    = "two subnets must be one IPv4 and one IPv6 (dual-stack); list at most one subnet per IP family"
	msgJoinNeedsPrimary    = "joinSubnets is only allowed when role is Primary: Secondary networks have no gateway router to join; remove joinSubnets"
	msgIPv6MTU             = "mtu must be at least 1280 when an IPv6 subnet is used (the IPv6 minimum link MTU)"
	msgHostSubnetTooShort  = "hostSubnet must be a longer prefix than the prefix of cidr, so that every node gets a block of it"
	msgHostSubnetNoRoom    = "hostSubnet leaves no room for pods: use at most 30 for an IPv4 cidr and at most 126 for an IPv6 cidr"
	msgSubnetsRequired     = "subnets is required unless ipam.mode is Disabled"
	msgSubnetsWithoutIPAM  = "subnets must be omitted when ipam.mode is Disabled: without IPAM OVN-Kubernetes assigns no addresses"
	msgIPAMDisabledRole    = "ipam.mode Disabled is only allowed for Secondary networks: a Primary network must give pods addresses"
	msgPersistentNeedsIPAM = "lifecycle Persistent needs mode Enabled: there are no addresses to persist without IPAM"
	msgLayer3Block         = "layer3 is required when topology is Layer3 and must be omitted otherwise"
	msgLayer2Block         = "layer2 is required when topology is Layer2 and must be omitted otherwise"
	msgNoOverlayShape      = "transport NoOverlay is only supported for topology Layer3 with layer3.role Primary; use a Layer3 Primary network or omit transport to use the Geneve overlay"
	msgNoOverlayRequired   = "noOverlay is required when transport is NoOverlay: set noOverlay.outboundSNAT (Enabled or Disabled) and noOverlay.routing (Managed or Unmanaged)"
	msgNoOverlayForbidden  = "noOverlay is only allowed when transport is NoOverlay: remove noOverlay or set transport to NoOverlay"
)

// UserDefinedNetwork returns what the API server would refuse in u on create.
func UserDefinedNetwork(u *ovnkv1.UserDefinedNetwork) field.ErrorList {
	c := checker{schema: apivalidation.ValidateObjectMeta(&u.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))}
	c.topology(u.Spec.Topology, u.Spec.Layer3, u.Spec.Layer2, field.NewPath("spec"))
	return c.result()
}

// ClusterUserDefinedNetwork returns what the API server would refuse in c on create.
// The namespace selector is not checked: the CRD schema accepts any selector (Strict
// checks that it parses).
func ClusterUserDefinedNetwork(cudn *ovnkv1.ClusterUserDefinedNetwork) field.ErrorList {
	c := checker{schema: apivalidation.ValidateObjectMeta(&cudn.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))}
	c.networkSpec(&cudn.Spec.Network, field.NewPath("spec", "network"))
	return c.result()
}

// checker collects the errors of the two stages of the API server's validation: the
// object metadata and the structural schema (types, enums, lengths, ranges, item
// counts), then the CEL rules.
type checker struct {
	schema, rules field.ErrorList
}

// result is what the API server reports. It evaluates no CEL rule when an earlier
// error is of a kind that could make the rules fail to evaluate or cost too much (an
// unsupported enum value, a missing field, a string or list too long): then only the
// earlier errors count (hasBlockingErr in k8s.io/apiextensions-apiserver).
func (c *checker) result() field.ErrorList {
	for _, e := range c.schema {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return c.schema
		}
	}
	return append(c.schema, c.rules...)
}

// rule records a CEL rule's failure.
func (c *checker) rule(path *field.Path, value any, msg string) {
	c.rules = append(c.rules, field.Invalid(path, value, msg))
}

// networkSpec checks a ClusterUserDefinedNetwork's spec.network: the topology and its
// block, then the transport rules of OKEP-5259.
func (c *checker) networkSpec(n *ovnkv1.NetworkSpec, path *field.Path) {
	c.topology(n.Topology, n.Layer3, n.Layer2, path)
	if n.Transport != "" {
		enum(c, path.Child("transport"), n.Transport, ovnkv1.TransportOptionGeneve, ovnkv1.TransportOptionNoOverlay)
	}
	noOverlay := n.Transport == ovnkv1.TransportOptionNoOverlay
	if noOverlay && (n.Topology != ovnkv1.NetworkTopologyLayer3 || n.Layer3 == nil || n.Layer3.Role != ovnkv1.NetworkRolePrimary) {
		c.rule(path.Child("transport"), n.Transport, msgNoOverlayShape)
	}
	if noOverlay && n.NoOverlay == nil {
		c.rule(path.Child("noOverlay"), nil, msgNoOverlayRequired)
	}
	if n.NoOverlay != nil {
		if !noOverlay {
			c.rule(path.Child("noOverlay"), n.NoOverlay, msgNoOverlayForbidden)
		}
		enum(c, path.Child("noOverlay", "outboundSNAT"), n.NoOverlay.OutboundSNAT, ovnkv1.SNATEnabled, ovnkv1.SNATDisabled)
		enum(c, path.Child("noOverlay", "routing"), n.NoOverlay.Routing, ovnkv1.RoutingManaged, ovnkv1.RoutingUnmanaged)
	}
}

// topology checks the topology and that exactly its block is set, and the block.
func (c *checker) topology(t ovnkv1.NetworkTopology, l3 *ovnkv1.Layer3Config, l2 *ovnkv1.Layer2Config, path *field.Path) {
	enum(c, path.Child("topology"), t, ovnkv1.NetworkTopologyLayer2, ovnkv1.NetworkTopologyLayer3)
	if (t == ovnkv1.NetworkTopologyLayer3) != (l3 != nil) {
		c.rule(path.Child("layer3"), nil, msgLayer3Block)
	}
	if (t == ovnkv1.NetworkTopologyLayer2) != (l2 != nil) {
		c.rule(path.Child("layer2"), nil, msgLayer2Block)
	}
	if l3 != nil {
		c.layer3(l3, path.Child("layer3"))
	}
	if l2 != nil {
		c.layer2(l2, path.Child("layer2"))
	}
}

func (c *checker) layer3(l *ovnkv1.Layer3Config, path *field.Path) {
	enum(c, path.Child("role"), l.Role, ovnkv1.NetworkRolePrimary, ovnkv1.NetworkRoleSecondary)
	c.mtuRange(l.MTU, path.Child("mtu"))

	subnets := path.Child("subnets")
	c.itemCount(subnets, len(l.Subnets))
	cidrs := make([]ovnkv1.CIDR, len(l.Subnets))
	for i, s := range l.Subnets {
		cidrs[i] = s.CIDR
		c.layer3Subnet(s, subnets.Index(i))
	}
	if twoOfOneFamily(cidrs) {
		c.rule(subnets, cidrs, msgDualStackSubnets)
	}
	if len(l.JoinSubnets) > 0 {
		c.dualStackCIDRs(l.JoinSubnets, path.Child("joinSubnets"))
		if l.Role != ovnkv1.NetworkRolePrimary {
			c.rule(path.Child("joinSubnets"), l.JoinSubnets, msgJoinNeedsPrimary)
		}
	}
	if l.MTU != 0 && l.MTU < MinIPv6MTU && slices.ContainsFunc(cidrs, isIPv6) {
		c.rule(path.Child("mtu"), l.MTU, msgIPv6MTU)
	}
}

func (c *checker) layer3Subnet(s ovnkv1.Layer3Subnet, path *field.Path) {
	c.cidr(s.CIDR, path.Child("cidr"))
	if s.HostSubnet == 0 {
		return
	}
	host := path.Child("hostSubnet")
	if s.HostSubnet < MinHostSubnet || s.HostSubnet > MaxHostSubnet {
		c.schema = append(c.schema, field.Invalid(host, s.HostSubnet, fmt.Sprintf("must be between %d and %d", MinHostSubnet, MaxHostSubnet)))
	}
	p, ok := parseCIDR(s.CIDR)
	if !ok {
		return
	}
	if int(s.HostSubnet) <= p.Bits() {
		c.rule(host, s.HostSubnet, msgHostSubnetTooShort)
	}
	limit := MaxIPv6HostSubnet
	if p.Addr().Is4() {
		limit = MaxIPv4HostSubnet
	}
	if int(s.HostSubnet) > limit {
		c.rule(host, s.HostSubnet, msgHostSubnetNoRoom)
	}
}

func (c *checker) layer2(l *ovnkv1.Layer2Config, path *field.Path) {
	enum(c, path.Child("role"), l.Role, ovnkv1.NetworkRolePrimary, ovnkv1.NetworkRoleSecondary)
	c.mtuRange(l.MTU, path.Child("mtu"))
	if len(l.Subnets) > 0 {
		c.dualStackCIDRs(l.Subnets, path.Child("subnets"))
	}
	if len(l.JoinSubnets) > 0 {
		c.dualStackCIDRs(l.JoinSubnets, path.Child("joinSubnets"))
		if l.Role != ovnkv1.NetworkRolePrimary {
			c.rule(path.Child("joinSubnets"), l.JoinSubnets, msgJoinNeedsPrimary)
		}
	}
	ipamDisabled := false
	if l.IPAM != nil {
		c.ipam(l.IPAM, path.Child("ipam"))
		ipamDisabled = l.IPAM.Mode == ovnkv1.IPAMDisabled
	}
	switch {
	case len(l.Subnets) == 0 && !ipamDisabled:
		c.rule(path.Child("subnets"), nil, msgSubnetsRequired)
	case len(l.Subnets) > 0 && ipamDisabled:
		c.rule(path.Child("subnets"), l.Subnets, msgSubnetsWithoutIPAM)
	}
	if ipamDisabled && l.Role != ovnkv1.NetworkRoleSecondary {
		c.rule(path.Child("ipam"), l.IPAM, msgIPAMDisabledRole)
	}
	if l.MTU != 0 && l.MTU < MinIPv6MTU && slices.ContainsFunc(l.Subnets, isIPv6) {
		c.rule(path.Child("mtu"), l.MTU, msgIPv6MTU)
	}
}

func (c *checker) ipam(cfg *ovnkv1.IPAMConfig, path *field.Path) {
	if cfg.Mode == "" && cfg.Lifecycle == "" {
		// The schema's minProperties: an empty ipam block says nothing.
		c.schema = append(c.schema, field.Invalid(path, cfg, "must set mode or lifecycle, or be omitted"))
		return
	}
	if cfg.Mode != "" {
		enum(c, path.Child("mode"), cfg.Mode, ovnkv1.IPAMEnabled, ovnkv1.IPAMDisabled)
	}
	if cfg.Lifecycle != "" {
		enum(c, path.Child("lifecycle"), cfg.Lifecycle, ovnkv1.IPAMLifecyclePersistent)
	}
	if cfg.Lifecycle == ovnkv1.IPAMLifecyclePersistent && cfg.Mode != "" && cfg.Mode != ovnkv1.IPAMEnabled {
		c.rule(path, cfg, msgPersistentNeedsIPAM)
	}
}

// dualStackCIDRs checks a DualStackCIDRs list: one or two CIDRs, of different families.
func (c *checker) dualStackCIDRs(cidrs []ovnkv1.CIDR, path *field.Path) {
	c.itemCount(path, len(cidrs))
	for i, cidr := range cidrs {
		c.cidr(cidr, path.Index(i))
	}
	if twoOfOneFamily(cidrs) {
		c.rule(path, cidrs, msgDualStackCIDRs)
	}
}

// itemCount is the schema's minItems=1 and maxItems=2 of subnet lists.
func (c *checker) itemCount(path *field.Path, n int) {
	switch {
	case n == 0:
		c.schema = append(c.schema, field.Required(path, "list one CIDR, or one IPv4 and one IPv6 CIDR"))
	case n > 2:
		c.schema = append(c.schema, field.TooMany(path, n, 2))
	}
}

// cidr checks the CIDR type: at most MaxCIDRLength characters (schema) and CEL's
// isCIDR (rule).
func (c *checker) cidr(cidr ovnkv1.CIDR, path *field.Path) {
	if len(cidr) > MaxCIDRLength {
		c.schema = append(c.schema, field.TooLong(path, cidr, MaxCIDRLength))
	}
	if _, ok := parseCIDR(cidr); !ok {
		c.rule(path, cidr, msgNotCIDR)
	}
}

func (c *checker) mtuRange(mtu int32, path *field.Path) {
	if mtu != 0 && (mtu < MinMTU || mtu > MaxMTU) {
		c.schema = append(c.schema, field.Invalid(path, mtu, fmt.Sprintf("must be between %d and %d", MinMTU, MaxMTU)))
	}
}

// enum checks that v is one of allowed, as the schema's enum does.
func enum[T ~string](c *checker, path *field.Path, v T, allowed ...T) {
	if !slices.Contains(allowed, v) {
		c.schema = append(c.schema, field.NotSupported(path, v, allowed))
	}
}

// parseCIDR is CEL's cidr(): a prefix in CIDR notation, host bits allowed, no zone,
// and no IPv4-mapped IPv6 address (k8s.io/apiserver/pkg/cel/library).
func parseCIDR(c ovnkv1.CIDR) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(string(c))
	if err != nil || p.Addr().Is4In6() {
		return netip.Prefix{}, false
	}
	return p, true
}

func isIPv6(c ovnkv1.CIDR) bool {
	p, ok := parseCIDR(c)
	return ok && p.Addr().Is6()
}

// twoOfOneFamily is the negation of the dual-stack rules: two valid CIDRs of one family.
func twoOfOneFamily(cidrs []ovnkv1.CIDR) bool {
	if len(cidrs) != 2 {
		return false
	}
	a, okA := parseCIDR(cidrs[0])
	b, okB := parseCIDR(cidrs[1])
	return okA && okB && a.Addr().Is4() == b.Addr().Is4()
}
