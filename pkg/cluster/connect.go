package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// ClusterNetworkConnect annotations, written by the leader (OVN-Kubernetes' names and
// formats).
const (
	// AnnotationConnectSubnets maps each connected network, by NetworkOwnerKey, to its
	// block of the connect subnets: {"layer3_1":{"ipv4":"192.168.0.0/24"}}.
	AnnotationConnectSubnets = "k8s.ovn.org/network-connect-subnet"
	// AnnotationConnectRouterTunnelKey is the connect router's datapath tunnel key.
	AnnotationConnectRouterTunnelKey = "k8s.ovn.org/connect-router-tunnel-key"
)

// Connect is a ClusterNetworkConnect: networks joined through one connect router, so
// that each reaches the others (symmetric inside one connect, never transitive across
// two).
type Connect struct {
	Name string
	// Networks are the names of the selected networks that exist and can be connected
	// (primary Layer3 or Layer2 networks on Geneve), sorted.
	Networks []string
	// Refused are selected networks that cannot be connected, with the reason.
	Refused map[string]string
	// Subnets are spec.connectSubnets: at most one per family.
	Subnets []ConnectSubnet
	// PodNetwork and ServiceNetwork are spec.connectivity.
	PodNetwork, ServiceNetwork bool
	// TunnelKey is k8s.ovn.org/connect-router-tunnel-key; 0 until allocated.
	TunnelKey int
	// Blocks maps a network name to its blocks of Subnets, one per family
	// (k8s.ovn.org/network-connect-subnet, keyed there by NetworkOwnerKey). A network
	// without a block is not connected yet.
	Blocks map[string][]netip.Prefix
}

// ConnectSubnet is one family's connect address space and the prefix length of each
// network's block of it.
type ConnectSubnet struct {
	CIDR          netip.Prefix
	NetworkPrefix int
}

// NetworkOwnerKey names a network in k8s.ovn.org/network-connect-subnet:
// "<topology>_<network id>", e.g. "layer3_1".
func NetworkOwnerKey(n *Network) string {
	return NetworkOwnerKeyOf(n.Topology, n.ID)
}

// NetworkOwnerKeyOf is NetworkOwnerKey of a network with topology t and id id, for
// callers that know the id before a Network carries it (the leader).
func NetworkOwnerKeyOf(t Topology, id int) string {
	return strings.ToLower(string(t)) + "_" + strconv.Itoa(id)
}

// ConnectZoneStatusKey is a connect's entry in a node's ovnk.io/zone-status:
// "ClusterNetworkConnect/<name>". The "/" keeps it apart from every network name, which
// never has one.
func ConnectZoneStatusKey(cnc string) string {
	return "ClusterNetworkConnect/" + cnc
}

// ConnectBlock is one network's entry of k8s.ovn.org/network-connect-subnet.
type ConnectBlock struct {
	IPv4 string `json:"ipv4,omitempty"`
	IPv6 string `json:"ipv6,omitempty"`
}

// Connect annotation codecs.
var (
	// ConnectSubnetsCodec reads and writes k8s.ovn.org/network-connect-subnet: owner
	// key → one block per family. Blocks must be masked prefixes of their family.
	ConnectSubnetsCodec = Codec[map[string][]netip.Prefix]{Key: AnnotationConnectSubnets, parse: parseConnectSubnets, format: formatConnectSubnets}
	// ConnectTunnelKeyCodec reads and writes k8s.ovn.org/connect-router-tunnel-key.
	ConnectTunnelKeyCodec = Codec[int]{Key: AnnotationConnectRouterTunnelKey, parse: parseTunnelKey, format: formatTunnelKey}
)

func parseConnectSubnets(value string) (map[string][]netip.Prefix, error) {
	var raw map[string]ConnectBlock
	if err := decodeJSON(value, &raw, "object"); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string][]netip.Prefix, len(raw))
	for owner, b := range raw {
		if owner == "" {
			return nil, fmt.Errorf("a network key is empty")
		}
		var blocks []netip.Prefix
		for _, f := range []struct {
			text string
			v4   bool
		}{{b.IPv4, true}, {b.IPv6, false}} {
			if f.text == "" {
				continue
			}
			p, err := netip.ParsePrefix(f.text)
			if err != nil || p.Addr().Is4() != f.v4 || p != p.Masked() {
				return nil, fmt.Errorf("network %q: %s is not a masked IPv%s prefix", owner, quote(f.text), map[bool]string{true: "4", false: "6"}[f.v4])
			}
			blocks = append(blocks, p)
		}
		if len(blocks) == 0 {
			return nil, fmt.Errorf("network %q has no block", owner)
		}
		out[owner] = blocks
	}
	return out, nil
}

func formatConnectSubnets(m map[string][]netip.Prefix) (string, error) {
	raw := make(map[string]ConnectBlock, len(m))
	for owner, blocks := range m {
		if owner == "" {
			return "", fmt.Errorf("a network key is empty")
		}
		if len(blocks) == 0 {
			return "", fmt.Errorf("network %q has no block", owner)
		}
		if err := onePerFamily(fmt.Sprintf("network %q", owner), blocks); err != nil {
			return "", err
		}
		var b ConnectBlock
		for _, p := range blocks {
			if p != p.Masked() {
				return "", fmt.Errorf("network %q: block %s has host bits set; the block is %s", owner, p, p.Masked())
			}
			if p.Addr().Is4() {
				b.IPv4 = p.String()
			} else {
				b.IPv6 = p.String()
			}
		}
		raw[owner] = b
	}
	return encodeJSON(raw), nil
}

func parseTunnelKey(value string) (int, error) {
	k, err := strconv.Atoi(value)
	if err != nil || k < 1 || k > maxTunnelKey {
		return 0, fmt.Errorf("%s is not a tunnel key (an integer from 1 to %d)", quote(value), maxTunnelKey)
	}
	return k, nil
}

func formatTunnelKey(k int) (string, error) {
	if k < 1 || k > maxTunnelKey {
		return "", fmt.Errorf("tunnel key %d is outside 1-%d", k, maxTunnelKey)
	}
	return strconv.Itoa(k), nil
}

// connects builds the State's connects from the ClusterNetworkConnects, after the
// networks. A connect that cannot be read is left out with an error; a selected network
// that cannot be connected is listed in Refused.
func (b *builder) connects(cncs []*ovnkv1.ClusterNetworkConnect, namespaces []*corev1.Namespace, cudns []*ovnkv1.ClusterUserDefinedNetwork) []*Connect {
	var out []*Connect
	for _, cnc := range slices.SortedFunc(slices.Values(cncs), func(a, c *ovnkv1.ClusterNetworkConnect) int { return cmp.Compare(a.Name, c.Name) }) {
		ref := ObjectRef{Kind: "ClusterNetworkConnect", Name: cnc.Name}
		c, err := b.connect(cnc, namespaces, cudns)
		if err != nil {
			var oe *ObjectError // the annotation codecs name the object already
			if !errors.As(err, &oe) {
				err = &ObjectError{Object: ref, Err: err}
			}
			b.errs = append(b.errs, err)
			continue
		}
		out = append(out, c)
	}
	return out
}

// connect reads one connect: its spec, then the leader's allocations.
func (b *builder) connect(cnc *ovnkv1.ClusterNetworkConnect, namespaces []*corev1.Namespace, cudns []*ovnkv1.ClusterUserDefinedNetwork) (*Connect, error) {
	ref := ObjectRef{Kind: "ClusterNetworkConnect", Name: cnc.Name}
	c, err := connectSpec(cnc, b.networks, namespaces, cudns)
	if err != nil {
		return nil, err
	}
	if k, ok, err := ConnectTunnelKeyCodec.Lookup(ref, cnc.Annotations); err != nil {
		return nil, err
	} else if ok {
		c.TunnelKey = k
	}
	blocks, _, err := ConnectSubnetsCodec.Lookup(ref, cnc.Annotations)
	if err != nil {
		return nil, err
	}
	for _, name := range c.Networks {
		if bl, ok := blocks[NetworkOwnerKey(b.networks[name])]; ok {
			c.Blocks[name] = bl
		}
	}
	return c, nil
}

// ConnectSpec reads what a ClusterNetworkConnect asks for, from its spec alone: its
// subnets and connectivity, and the networks its selectors pick among networks, split
// into the connectable ones and the Refused ones. It does not read the leader's
// annotations: TunnelKey is 0 and Blocks is empty. networks are the cluster's networks
// (SpecNetworks' or Build's); namespaces resolve PrimaryUserDefinedNetworks selectors,
// and cudns' labels ClusterUserDefinedNetworks selectors. A selected network missing
// from networks (invalid, or not built) is left out. It is the leader's view, which
// allocates before Build can read any allocation.
func ConnectSpec(cnc *ovnkv1.ClusterNetworkConnect, networks []*Network, namespaces []corev1.Namespace, cudns []*ovnkv1.ClusterUserDefinedNetwork) (*Connect, error) {
	return connectSpec(cnc, indexNetworks(networks), namespacePtrs(namespaces), cudns)
}

func indexNetworks(networks []*Network) map[string]*Network {
	byName := make(map[string]*Network, len(networks))
	for _, n := range networks {
		byName[n.Name] = n
	}
	return byName
}

func namespacePtrs(namespaces []corev1.Namespace) []*corev1.Namespace {
	out := make([]*corev1.Namespace, len(namespaces))
	for i := range namespaces {
		out[i] = &namespaces[i]
	}
	return out
}

func connectSpec(cnc *ovnkv1.ClusterNetworkConnect, networks map[string]*Network, namespaces []*corev1.Namespace, cudns []*ovnkv1.ClusterUserDefinedNetwork) (*Connect, error) {
	c := &Connect{Name: cnc.Name, Refused: map[string]string{}, Blocks: map[string][]netip.Prefix{}}
	for _, s := range cnc.Spec.ConnectSubnets {
		p, err := netip.ParsePrefix(string(s.CIDR))
		if err != nil || p != p.Masked() {
			return nil, fmt.Errorf("connect subnet %s is not a network address in CIDR notation such as 192.168.0.0/16", quote(string(s.CIDR)))
		}
		c.Subnets = append(c.Subnets, ConnectSubnet{CIDR: p, NetworkPrefix: int(s.NetworkPrefix)})
	}
	for _, t := range cnc.Spec.Connectivity {
		switch t {
		case ovnkv1.ConnectivityPodNetwork:
			c.PodNetwork = true
		case ovnkv1.ConnectivityClusterIPServiceNetwork:
			c.ServiceNetwork = true
		}
	}
	selected, err := selectNetworks(cnc.Spec.NetworkSelectors, networks, namespaces, cudns)
	if err != nil {
		return nil, err
	}
	for _, name := range selected {
		if why := Connectability(networks[name]); why != Connectable {
			c.Refused[name] = string(why)
		} else {
			c.Networks = append(c.Networks, name)
		}
	}
	return c, nil
}

// ConnectRefusal says why a network cannot be connected, in the words of the
// connect's status; Connectable when it can.
type ConnectRefusal string

const (
	Connectable ConnectRefusal = ""
	// RefusedSecondary: only primary networks have a router to connect.
	RefusedSecondary ConnectRefusal = "a secondary network cannot be connected; only primary networks can"
	// RefusedNoOverlay: connect routers reach each other through the Geneve overlay.
	RefusedNoOverlay ConnectRefusal = "a no-overlay network cannot be connected: connect routers need the Geneve overlay"
)

// Connectability says whether a network a connect selects can be connected.
func Connectability(n *Network) ConnectRefusal {
	switch {
	case n.Role != Primary:
		return RefusedSecondary
	case n.Transport == NoOverlay:
		return RefusedNoOverlay
	}
	return Connectable
}

// SelectNetworks names the networks the selectors pick among networks (SpecNetworks'
// or Build's), sorted: ClusterUserDefinedNetworks by the labels of their objects
// (cudns), and the primary UserDefinedNetworks of the namespaces whose labels match. A
// network missing from networks (its spec is invalid) is never picked, connectable or
// not. A selector that does not parse is an error: the leader connects nothing then.
func SelectNetworks(selectors ovnkv1.NetworkSelectors, networks []*Network, namespaces []corev1.Namespace, cudns []*ovnkv1.ClusterUserDefinedNetwork) ([]string, error) {
	byName, nsPtrs := indexNetworks(networks), namespacePtrs(namespaces)
	return selectNetworks(selectors, byName, nsPtrs, cudns)
}

// selectNetworks names the networks the selectors pick among networks, sorted and
// without repeats.
func selectNetworks(selectors ovnkv1.NetworkSelectors, networks map[string]*Network, namespaces []*corev1.Namespace, cudns []*ovnkv1.ClusterUserDefinedNetwork) ([]string, error) {
	picked := map[string]bool{}
	for _, s := range selectors {
		switch s.NetworkSelectionType {
		case ovnkv1.ClusterUserDefinedNetworks:
			if s.ClusterUserDefinedNetworkSelector == nil {
				continue
			}
			sel, err := selectorOf(s.ClusterUserDefinedNetworkSelector.NetworkSelector)
			if err != nil {
				return nil, err
			}
			for _, cudn := range cudns {
				if name := CUDNNetworkName(cudn.Name); networks[name] != nil && sel.Matches(labels.Set(cudn.Labels)) {
					picked[name] = true
				}
			}
		case ovnkv1.PrimaryUserDefinedNetworks:
			if s.PrimaryUserDefinedNetworkSelector == nil {
				continue
			}
			sel, err := selectorOf(s.PrimaryUserDefinedNetworkSelector.NamespaceSelector)
			if err != nil {
				return nil, err
			}
			primaryUDNs := primaryUDNsByNamespace(networks)
			for _, ns := range namespaces {
				if sel.Matches(labels.Set(ns.Labels)) {
					// The namespace's primary UDN, whatever its name: at most one is valid.
					for _, name := range primaryUDNs[ns.Name] {
						picked[name] = true
					}
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(picked)), nil
}

// primaryUDNsByNamespace names the primary UserDefinedNetworks of each namespace.
func primaryUDNsByNamespace(networks map[string]*Network) map[string][]string {
	out := map[string][]string{}
	for name, n := range networks {
		if n.Owner.Kind == "UserDefinedNetwork" && n.Role == Primary {
			out[n.Owner.Namespace] = append(out[n.Owner.Namespace], name)
		}
	}
	return out
}

func selectorOf(s metav1.LabelSelector) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(&s)
	if err != nil {
		return nil, fmt.Errorf("network selector: %w", err)
	}
	return sel, nil
}
