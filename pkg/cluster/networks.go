package cluster

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ovnk/ovnk/pkg/alloc"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// CUDNNetworkName is the network name of the ClusterUserDefinedNetwork name:
// "cluster_udn_<name>".
func CUDNNetworkName(name string) string { return "cluster_udn_" + name }

// UDNNetworkName is the network name of the UserDefinedNetwork namespace/name:
// "<namespace>_<name>".
func UDNNetworkName(namespace, name string) string { return namespace + "_" + name }

// UserNetworkName is how users name the network OVN calls ovnName, the inverse of
// CUDNNetworkName and UDNNetworkName: "cluster_udn_blue" is the CUDN blue, "ns1_red"
// the UDN ns1/red, "default" the default network. The mapping is unambiguous because
// Kubernetes names never contain "_"; a name of neither form is returned as it is.
func UserNetworkName(ovnName string) string {
	if name, ok := strings.CutPrefix(ovnName, CUDNNetworkName("")); ok {
		return name
	}
	if ns, name, ok := strings.Cut(ovnName, "_"); ok {
		return ns + "/" + name
	}
	return ovnName
}

// subnetCIDRs are the CIDRs of subnets.
func subnetCIDRs(subnets []Subnet) []netip.Prefix {
	out := make([]netip.Prefix, len(subnets))
	for i, s := range subnets {
		out[i] = s.CIDR
	}
	return out
}

// ofFamilies returns the prefixes whose IP family one of subnets has; nil if none.
func ofFamilies(prefixes []netip.Prefix, subnets []Subnet) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range prefixes {
		if slices.ContainsFunc(subnets, func(s Subnet) bool { return s.CIDR.Addr().Is4() == p.Addr().Is4() }) {
			out = append(out, p)
		}
	}
	return out
}

// checkSubnet masks a network's subnet and checks (or, when 0, defaults) its host
// subnet length. hostSubnet is ignored for Layer2 (layer3 false).
func checkSubnet(field, cidr string, hostSubnet int, layer3 bool) (Subnet, error) {
	p, err := parseIfAddr(cidr)
	if err != nil {
		return Subnet{}, fmt.Errorf("%s: %w", field, err)
	}
	s := Subnet{CIDR: p.Masked()}
	if !layer3 {
		return s, nil
	}
	s.HostSubnet = hostSubnet
	if s.HostSubnet == 0 {
		s.HostSubnet = DefaultHostSubnetIPv6
		if p.Addr().Is4() {
			s.HostSubnet = DefaultHostSubnetIPv4
		}
	}
	if s.HostSubnet <= p.Bits() || s.HostSubnet > p.Addr().BitLen() {
		return Subnet{}, &HostSubnetError{Field: field, Subnet: s.CIDR, HostSubnet: s.HostSubnet}
	}
	return s, nil
}

// HostSubnetError says that a Layer3 subnet cannot be cut into its nodes' blocks: the
// host subnet (each node's prefix length) is not longer than the subnet's, or longer
// than an address.
type HostSubnetError struct {
	// Field names the subnet's spec field or setting.
	Field      string
	Subnet     netip.Prefix
	HostSubnet int
}

// HostSubnets are the host subnet lengths that fit in the subnet and leave each node's
// block an address for pods (CheckSubnets refuses the longer ones): from min to max,
// none when max < min.
func (e *HostSubnetError) HostSubnets() (min, max int) {
	return e.Subnet.Bits() + 1, maxPodPrefix(e.Subnet.Addr().Is4())
}

// LongestSubnet is the longest prefix length a Layer3 subnet of the family may have:
// one that holds a node's block with an address for pods.
func (e *HostSubnetError) LongestSubnet() int { return maxPodPrefix(e.Subnet.Addr().Is4()) - 1 }

// CheckHostSubnet checks a Layer3 subnet's host subnet, the prefix length of each node's
// block: it must be one of the lengths HostSubnets gives, longer than the subnet's and
// leaving the block an address for pods. field names the subnet's setting or spec field;
// the error is a *HostSubnetError.
func CheckHostSubnet(field string, subnet netip.Prefix, hostSubnet int) error {
	e := &HostSubnetError{Field: field, Subnet: subnet, HostSubnet: hostSubnet}
	if min, max := e.HostSubnets(); hostSubnet < min || hostSubnet > max {
		return e
	}
	return nil
}

func (e *HostSubnetError) Error() string {
	fix := fmt.Sprintf("no host subnet inside it leaves an address for pods: want a subnet of at most /%d", e.LongestSubnet())
	if min, max := e.HostSubnets(); min <= max {
		fix = fmt.Sprintf("want a prefix length from %d to %d", min, max)
	}
	return fmt.Sprintf("%s: host subnet /%d does not fit in %s: %s", e.Field, e.HostSubnet, e.Subnet, fix)
}

// defaultNetwork builds the cluster default network: Layer3, Primary, id 0, serving
// every namespace. join are its join subnets; when empty, the defaults of its families.
func defaultNetwork(cfg DefaultNetworkConfig, join []netip.Prefix, namespaces []*corev1.Namespace) (*Network, error) {
	n := &Network{
		Name:      DefaultNetworkName,
		Topology:  Layer3,
		Role:      Primary,
		MTU:       cmp.Or(cfg.MTU, DefaultMTU),
		Transport: Geneve,
	}
	if len(cfg.Subnets) == 0 {
		return nil, fmt.Errorf("default network: no cluster subnets are configured")
	}
	for i, s := range cfg.Subnets {
		if !s.CIDR.IsValid() {
			return nil, fmt.Errorf("default network: cluster subnet %d is not set", i)
		}
		sub, err := checkSubnet("default network: cluster subnet", s.CIDR.String(), s.HostSubnet, true)
		if err != nil {
			return nil, err
		}
		n.Subnets = append(n.Subnets, sub)
	}
	n.JoinSubnets = slices.Clone(join)
	if len(join) == 0 {
		n.JoinSubnets = ofFamilies(DefaultJoinSubnets(), n.Subnets)
	}
	n.TransitSubnets = slices.Clone(cfg.TransitSubnets)
	if len(cfg.TransitSubnets) == 0 {
		n.TransitSubnets = ofFamilies(DefaultTransitSubnets(), n.Subnets)
	}
	for _, ns := range namespaces {
		n.Namespaces = append(n.Namespaces, ns.Name)
	}
	return n, nil
}

// networkSource is a user-defined network's object, reduced to what Build reads.
type networkSource struct {
	name        string
	owner       ObjectRef
	annotations map[string]string
	path        string // the field path of spec below, for messages
	created     time.Time
	spec        ovnkv1.NetworkSpec
	namespaces  []string
	err         error // a problem found before build, e.g. an invalid namespace selector
}

// userDefinedNetworks adds the networks of the CUDNs and UDNs to b.
func (b *builder) userDefinedNetworks(cudns []*ovnkv1.ClusterUserDefinedNetwork, udns []*ovnkv1.UserDefinedNetwork, namespaces []*corev1.Namespace) {
	srcs := networkSources(cudns, udns, namespaces)
	b.nads = nadNetworksOf(srcs)
	byName := map[string][]networkSource{}
	for _, src := range srcs {
		byName[src.name] = append(byName[src.name], src)
	}
	var built []networkSource
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		srcs := byName[name]
		if len(srcs) > 1 {
			b.collision(name, srcs)
			continue
		}
		n, err := srcs[0].build()
		if err != nil {
			b.errs = append(b.errs, err)
			b.unavailable[name] = true
			continue
		}
		b.networks[name] = n
		built = append(built, srcs[0])
	}
	b.ovnNameCollisions(built)
}

// ovnNameCollisions leaves out every built network whose OVN name (OVNName) an older
// one has, so that a zone never programs two networks into one set of rows. The
// leader refuses such a network (cluster.AcceptNetworks: the one holding an id wins,
// then the older, then the first by name) and allocates it nothing, but one created
// before the leader checked OVN names may hold an id; of networks that all hold ids
// the leader keeps the same one as this.
func (b *builder) ovnNameCollisions(built []networkSource) {
	slices.SortStableFunc(built, func(x, y networkSource) int {
		return cmp.Or(x.created.Compare(y.created), cmp.Compare(x.name, y.name))
	})
	kept := map[string]string{} // OVN name → network name
	for _, src := range built {
		ovnName := OVNName(src.name)
		first, taken := kept[ovnName]
		if !taken {
			kept[ovnName] = src.name
			continue
		}
		delete(b.networks, src.name)
		b.unavailable[src.name] = true
		b.errs = append(b.errs, &ObjectError{Object: src.owner, Err: &OVNNameConflictError{Network: src.name, Other: first, OVNName: ovnName}})
	}
}

// collision reports every object whose network name is taken by another, and leaves
// them all out: which one pods' NAD names mean cannot be told.
func (b *builder) collision(name string, srcs []networkSource) {
	slices.SortFunc(srcs, func(x, y networkSource) int { return cmp.Compare(x.owner.String(), y.owner.String()) })
	for i, src := range srcs {
		var others []string
		for j, o := range srcs {
			if j != i {
				others = append(others, objectName(o.owner))
			}
		}
		b.errs = append(b.errs, &ObjectError{Object: src.owner, Err: fmt.Errorf(
			"network name %q is also the name of %s; rename one of them", name, strings.Join(others, " and "))})
	}
	b.unavailable[name] = true
}

// CUDNNamespaces names the namespaces a ClusterUserDefinedNetwork serves: those of
// namespaces its namespace selector matches, in the order given. A selector that does
// not parse is an error: the spec is invalid, and the leader does not create the
// network. It is the rule the leader reads networks by (SpecNetworks, Build), for the
// plugin to show which namespaces a network serves.
func CUDNNamespaces(c *ovnkv1.ClusterUserDefinedNetwork, namespaces []corev1.Namespace) ([]string, error) {
	return selectNamespaces(&c.Spec.NamespaceSelector, namespacePtrs(namespaces))
}

// selectNamespaces returns the names of the namespaces sel matches, sorted.
func selectNamespaces(sel *metav1.LabelSelector, namespaces []*corev1.Namespace) ([]string, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("spec.namespaceSelector: %w", err)
	}
	var out []string
	for _, ns := range namespaces {
		if s.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns.Name)
		}
	}
	return out, nil
}

// build turns the source into a Network, or an *ObjectError naming its object.
func (src networkSource) build() (*Network, error) {
	if src.err != nil {
		return nil, &ObjectError{Object: src.owner, Err: src.err}
	}
	n, err := src.fromSpec()
	if err != nil {
		return nil, &ObjectError{Object: src.owner, Err: err}
	}
	var ok bool
	if n.ID, ok, err = NetworkIDCodec.Lookup(src.owner, src.annotations); err != nil {
		return nil, err
	} else if !ok {
		// Build reads the object alone: ovnk's leader writes the id there, adopting the
		// one upstream's cluster manager wrote on the network's NADs.
		return nil, notReady(src.owner, AnnotationNetworkID, "ovnk's leader allocates it; upstream OVN-Kubernetes keeps it on the network's NADs")
	}
	if err := lookupInto(&n.TunnelKeys, TunnelKeysCodec, src.owner, src.annotations); err != nil {
		return nil, err
	}
	return n, nil
}

// fromSpec reads the network's shape from its spec, applying the defaults.
func (src networkSource) fromSpec() (*Network, error) {
	n := &Network{
		Name:       src.name,
		Owner:      src.owner,
		Namespaces: src.namespaces,
		Transport:  Geneve,
	}
	spec, path := src.spec, src.path
	block := path + ".layer3"
	if spec.Topology == ovnkv1.NetworkTopologyLayer2 {
		block = path + ".layer2"
	}
	var role ovnkv1.NetworkRole
	var mtu int32
	var join ovnkv1.DualStackCIDRs
	switch spec.Topology {
	case ovnkv1.NetworkTopologyLayer3:
		if spec.Layer3 == nil {
			return nil, fmt.Errorf("%s is missing for topology Layer3", block)
		}
		n.Topology, role, mtu, join = Layer3, spec.Layer3.Role, spec.Layer3.MTU, spec.Layer3.JoinSubnets
		for _, s := range spec.Layer3.Subnets {
			sub, err := checkSubnet(block+".subnets", string(s.CIDR), int(s.HostSubnet), true)
			if err != nil {
				return nil, err
			}
			n.Subnets = append(n.Subnets, sub)
		}
	case ovnkv1.NetworkTopologyLayer2:
		if spec.Layer2 == nil {
			return nil, fmt.Errorf("%s is missing for topology Layer2", block)
		}
		n.Topology, role, mtu, join = Layer2, spec.Layer2.Role, spec.Layer2.MTU, spec.Layer2.JoinSubnets
		for _, s := range spec.Layer2.Subnets {
			sub, err := checkSubnet(block+".subnets", string(s), 0, false)
			if err != nil {
				return nil, err
			}
			n.Subnets = append(n.Subnets, sub)
		}
	default:
		return nil, fmt.Errorf("%s.topology %q is not Layer3 or Layer2", path, spec.Topology)
	}
	cidrs := make([]netip.Prefix, len(n.Subnets))
	for i, s := range n.Subnets {
		cidrs[i] = s.CIDR
	}
	if err := onePerFamily(block+".subnets", cidrs); err != nil {
		return nil, err
	}
	switch role {
	case ovnkv1.NetworkRolePrimary:
		n.Role = Primary
	case ovnkv1.NetworkRoleSecondary:
		n.Role = Secondary
	default:
		return nil, fmt.Errorf("%s.role %q is not Primary or Secondary", block, role)
	}
	n.MTU = cmp.Or(int(mtu), DefaultMTU)
	switch spec.Transport {
	case "", ovnkv1.TransportOptionGeneve:
	case ovnkv1.TransportOptionNoOverlay:
		n.Transport = NoOverlay
	default:
		return nil, fmt.Errorf("%s.transport %q is not Geneve or NoOverlay", path, spec.Transport)
	}
	if n.Role == Primary {
		joins := UDNJoinSubnets()
		if len(join) > 0 {
			joins = nil
			for _, c := range join {
				p, err := parseIfAddr(string(c))
				if err != nil {
					return nil, fmt.Errorf("%s.joinSubnets: %w", block, err)
				}
				joins = append(joins, p.Masked())
			}
		}
		n.JoinSubnets = ofFamilies(joins, n.Subnets)
	}
	n.TransitSubnets = ofFamilies(DefaultTransitSubnets(), n.Subnets)
	if n.Topology == Layer2 && len(n.TransitSubnets) > 0 {
		// The transit router's peer pairs must not overlap the network (OKEP-5094
		// option 4): every zone picks the same replacement, as it is a pure function.
		avoid := append(slices.Clone(n.JoinSubnets), subnetCIDRs(n.Subnets)...)
		chosen, changed, err := alloc.TransitSubnets(n.TransitSubnets, avoid)
		if err != nil {
			return nil, fmt.Errorf("%s: no transit subnet avoids the network's subnets: %w", path, err)
		}
		n.TransitSubnets, n.TransitSubnetsChanged = chosen, changed
	}
	return n, nil
}
