package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Node annotations and labels, as OVN-Kubernetes names them. docs/annotations.md
// describes each with an example.
const (
	// AnnotationNodeID is the node's id ("4"), allocated by the leader.
	AnnotationNodeID = "k8s.ovn.org/node-id"
	// AnnotationNodeChassisID is the node's OVN chassis name (its OVS system-id).
	AnnotationNodeChassisID = "k8s.ovn.org/node-chassis-id"
	// AnnotationNodeSubnets maps Layer3 network names to the node's subnets in them.
	AnnotationNodeSubnets = "k8s.ovn.org/node-subnets"
	// AnnotationNodeTransitSwitchPortIfAddr holds the node's transit switch addresses.
	AnnotationNodeTransitSwitchPortIfAddr = "k8s.ovn.org/node-transit-switch-port-ifaddr"
	// AnnotationNodePrimaryIfAddr holds the addresses of the node's primary interface.
	AnnotationNodePrimaryIfAddr = "k8s.ovn.org/node-primary-ifaddr"
	// AnnotationHostCIDRs lists every address (with prefix length) configured on the host.
	AnnotationHostCIDRs = "k8s.ovn.org/host-cidrs"
	// AnnotationL3GatewayConfig is the node's external gateway configuration.
	AnnotationL3GatewayConfig = "k8s.ovn.org/l3-gateway-config"
	// AnnotationLayer2TopologyVersion is "2.0" once the node runs the Layer2
	// transit-router topology of OKEP-5094.
	AnnotationLayer2TopologyVersion = "k8s.ovn.org/layer2-topology-version"
	// LabelEgressAssignable marks a node that may host EgressIPs; its value is ignored.
	LabelEgressAssignable = "k8s.ovn.org/egress-assignable"

	// Layer2TopologyVersionTransitRouter is the layer2-topology-version of the
	// transit-router topology; any other value, or none, means the legacy topology.
	Layer2TopologyVersionTransitRouter = "2.0"
)

// Gateway modes of k8s.ovn.org/l3-gateway-config.
const (
	// GatewayModeShared: the node's traffic and OVN's share the external bridge.
	GatewayModeShared = "shared"
	// GatewayModeLocal: traffic leaving the cluster goes through the host's stack.
	GatewayModeLocal = "local"
	// GatewayModeDisabled: the node has no external gateway.
	GatewayModeDisabled = "disabled"
)

// maxVLANID is the largest VLAN id the NB schema accepts as a tag.
const maxVLANID = 4095

// Node annotation codecs.
var (
	// NodeIDCodec reads and writes k8s.ovn.org/node-id: a non-negative decimal integer.
	NodeIDCodec = Codec[int]{Key: AnnotationNodeID, parse: parseID, format: formatID}
	// NodeChassisIDCodec reads and writes k8s.ovn.org/node-chassis-id: a non-empty
	// string without spaces, usually a UUID.
	NodeChassisIDCodec = Codec[string]{Key: AnnotationNodeChassisID, parse: parseChassisID, format: formatChassisID}
	// NodeSubnetsCodec reads and writes k8s.ovn.org/node-subnets. It reads an entry
	// written as one CIDR string (single-stack, as older releases wrote) or as a list,
	// and always writes lists. Each network has at least one subnet and at most one per
	// IP family; no host bits may be set.
	NodeSubnetsCodec = Codec[map[string][]netip.Prefix]{Key: AnnotationNodeSubnets, parse: parseNodeSubnets, format: formatNodeSubnets}
	// TransitSwitchPortIfAddrCodec reads and writes
	// k8s.ovn.org/node-transit-switch-port-ifaddr, {"ipv4": CIDR, "ipv6": CIDR}. The
	// value is the IPv4 address first, then the IPv6 one.
	TransitSwitchPortIfAddrCodec = Codec[[]netip.Prefix]{Key: AnnotationNodeTransitSwitchPortIfAddr, parse: parseIfAddrPair, format: formatIfAddrPair}
	// PrimaryIfAddrCodec reads and writes k8s.ovn.org/node-primary-ifaddr, in the same
	// format as TransitSwitchPortIfAddrCodec.
	PrimaryIfAddrCodec = Codec[[]netip.Prefix]{Key: AnnotationNodePrimaryIfAddr, parse: parseIfAddrPair, format: formatIfAddrPair}
	// HostCIDRsCodec reads and writes k8s.ovn.org/host-cidrs, a JSON list of interface
	// addresses in CIDR notation. It is a set: the value is sorted (by text, as
	// OVN-Kubernetes writes it) without duplicates.
	HostCIDRsCodec = Codec[[]netip.Prefix]{Key: AnnotationHostCIDRs, parse: parseHostCIDRs, format: formatHostCIDRs}
	// L3GatewayConfigCodec reads and writes the "default" entry of
	// k8s.ovn.org/l3-gateway-config; entries of other networks are ignored. It reads
	// the legacy singular "ip-address" and "next-hop" when the lists are absent.
	L3GatewayConfigCodec = Codec[Gateway]{Key: AnnotationL3GatewayConfig, parse: parseGateway, format: formatGateway}
)

// EgressAssignable reports whether the node carries the k8s.ovn.org/egress-assignable
// label (with any value).
func (n *Node) EgressAssignable() bool {
	_, ok := n.Labels[LabelEgressAssignable]
	return ok
}

// Layer2TransitRouter reports whether the node runs the Layer2 transit-router topology.
func (n *Node) Layer2TransitRouter() bool {
	return n.Layer2TopologyVersion == Layer2TopologyVersionTransitRouter
}

func parseChassisID(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("the chassis id is empty")
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("chassis id %s is not valid UTF-8", quote(s))
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return "", fmt.Errorf("chassis id %s contains a space or control character", quote(s))
		}
	}
	return s, nil
}

func formatChassisID(s string) (string, error) { return parseChassisID(s) }

func parseNodeSubnets(value string) (map[string][]netip.Prefix, error) {
	var raw map[string]json.RawMessage
	if err := decodeJSON(value, &raw, "object"); err != nil {
		return nil, err
	}
	out := make(map[string][]netip.Prefix, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		strs, err := stringOrList(raw[name])
		if err != nil {
			return nil, fmt.Errorf("network %q: %w", name, err)
		}
		subnets := make([]netip.Prefix, 0, len(strs))
		for _, s := range strs {
			p, err := parseSubnet(s)
			if err != nil {
				return nil, fmt.Errorf("network %q: %w", name, err)
			}
			subnets = append(subnets, p)
		}
		if err := checkNodeSubnets(name, subnets); err != nil {
			return nil, err
		}
		out[name] = subnets
	}
	return out, nil
}

// stringOrList decodes a JSON string or a list of strings.
func stringOrList(entry json.RawMessage) ([]string, error) {
	entry = bytes.TrimSpace(entry)
	if string(entry) != "null" {
		var one string
		if json.Unmarshal(entry, &one) == nil {
			return []string{one}, nil
		}
		var list []string
		if json.Unmarshal(entry, &list) == nil {
			return list, nil
		}
	}
	return nil, fmt.Errorf("%s is neither a CIDR string nor a list of CIDR strings", quote(string(entry)))
}

func checkNodeSubnets(name string, subnets []netip.Prefix) error {
	if name == "" {
		return fmt.Errorf("a network name is empty")
	}
	if len(subnets) == 0 {
		return fmt.Errorf("network %q has no subnets", name)
	}
	return onePerFamily(fmt.Sprintf("network %q", name), subnets)
}

func formatNodeSubnets(m map[string][]netip.Prefix) (string, error) {
	out := make(map[string][]string, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if err := checkNodeSubnets(name, m[name]); err != nil {
			return "", err
		}
		for _, p := range m[name] {
			if p != p.Masked() {
				return "", fmt.Errorf("network %q: %s has host bits set", name, p)
			}
		}
		out[name] = prefixStrings(m[name])
	}
	return encodeJSON(out), nil
}

// ifAddrPair is the JSON form of k8s.ovn.org/node-primary-ifaddr and
// k8s.ovn.org/node-transit-switch-port-ifaddr.
type ifAddrPair struct {
	IPv4 string `json:"ipv4,omitempty"`
	IPv6 string `json:"ipv6,omitempty"`
}

func parseIfAddrPair(value string) ([]netip.Prefix, error) {
	var j ifAddrPair
	if err := decodeJSON(value, &j, "object"); err != nil {
		return nil, err
	}
	if j.IPv4 == "" && j.IPv6 == "" {
		return nil, fmt.Errorf("%s has neither an \"ipv4\" nor an \"ipv6\" address", quote(value))
	}
	var out []netip.Prefix
	for _, f := range []struct {
		key, s string
		is4    bool
	}{{"ipv4", j.IPv4, true}, {"ipv6", j.IPv6, false}} {
		if f.s == "" {
			continue
		}
		p, err := parseIfAddr(f.s)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f.key, err)
		}
		if p.Addr().Is4() != f.is4 {
			return nil, fmt.Errorf("%q: %s is an %s address", f.key, quote(f.s), family(p.Addr()))
		}
		out = append(out, p)
	}
	return out, nil
}

func formatIfAddrPair(prefixes []netip.Prefix) (string, error) {
	if len(prefixes) == 0 {
		return "", fmt.Errorf("no address")
	}
	if err := onePerFamily("addresses", prefixes); err != nil {
		return "", err
	}
	var j ifAddrPair
	for _, p := range prefixes {
		if p.Addr().Is4() {
			j.IPv4 = p.String()
		} else {
			j.IPv6 = p.String()
		}
	}
	return encodeJSON(j), nil
}

func parseHostCIDRs(value string) ([]netip.Prefix, error) {
	var strs []string
	if err := decodeJSON(value, &strs, "array"); err != nil {
		return nil, err
	}
	out := make([]netip.Prefix, 0, len(strs))
	for _, s := range strs {
		p, err := parseIfAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return sortedHostCIDRs(out), nil
}

// sortedHostCIDRs sorts prefixes by their text and drops duplicates; nil if empty.
func sortedHostCIDRs(prefixes []netip.Prefix) []netip.Prefix {
	if len(prefixes) == 0 {
		return nil
	}
	out := slices.Clone(prefixes)
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if a.String() < b.String() {
			return -1
		}
		if a.String() > b.String() {
			return 1
		}
		return 0
	})
	return slices.Compact(out)
}

func formatHostCIDRs(prefixes []netip.Prefix) (string, error) {
	for _, p := range prefixes {
		if !p.IsValid() {
			return "", fmt.Errorf("invalid prefix %q", p)
		}
	}
	strs := prefixStrings(sortedHostCIDRs(prefixes))
	if strs == nil {
		strs = []string{}
	}
	return encodeJSON(strs), nil
}

// gatewayJSON is one entry of k8s.ovn.org/l3-gateway-config. OVN-Kubernetes writes
// every value as a string, including node-port-enable and vlan-id.
type gatewayJSON struct {
	Mode           string   `json:"mode"`
	BridgeID       string   `json:"bridge-id,omitempty"`
	InterfaceID    string   `json:"interface-id,omitempty"`
	MACAddress     string   `json:"mac-address,omitempty"`
	IPAddresses    []string `json:"ip-addresses,omitempty"`
	IPAddress      string   `json:"ip-address,omitempty"`
	NextHops       []string `json:"next-hops,omitempty"`
	NextHop        string   `json:"next-hop,omitempty"`
	NodePortEnable string   `json:"node-port-enable,omitempty"`
	VLANID         string   `json:"vlan-id,omitempty"`
}

func parseGateway(value string) (Gateway, error) {
	var all map[string]json.RawMessage
	if err := decodeJSON(value, &all, "object"); err != nil {
		return Gateway{}, err
	}
	entry, ok := all[DefaultNetworkName]
	if !ok {
		return Gateway{}, fmt.Errorf("%s has no %q entry", quote(value), DefaultNetworkName)
	}
	var j gatewayJSON
	if err := decodeJSON(string(entry), &j, "object"); err != nil {
		return Gateway{}, fmt.Errorf("entry %q: %w", DefaultNetworkName, err)
	}
	gw, err := gatewayFromJSON(j)
	if err != nil {
		return Gateway{}, fmt.Errorf("entry %q: %w", DefaultNetworkName, err)
	}
	return gw, nil
}

func gatewayFromJSON(j gatewayJSON) (Gateway, error) {
	switch j.Mode {
	case GatewayModeShared, GatewayModeLocal:
	case GatewayModeDisabled:
		return Gateway{Mode: GatewayModeDisabled}, nil
	default:
		return Gateway{}, fmt.Errorf("mode %s is not %q, %q or %q", quote(j.Mode), GatewayModeShared, GatewayModeLocal, GatewayModeDisabled)
	}
	gw := Gateway{Mode: j.Mode, BridgeID: j.BridgeID, InterfaceID: j.InterfaceID}
	var err error
	if gw.MAC, err = parseMAC(j.MACAddress); err != nil {
		return Gateway{}, fmt.Errorf("mac-address: %w", err)
	}
	ips, err := withLegacy("ip-addresses", j.IPAddresses, "ip-address", j.IPAddress, parseIfAddr)
	if err != nil {
		return Gateway{}, err
	}
	if len(ips) == 0 {
		return Gateway{}, fmt.Errorf("ip-addresses is missing")
	}
	gw.IPs = ips
	if gw.NextHops, err = withLegacy("next-hops", j.NextHops, "next-hop", j.NextHop, parseAddr); err != nil {
		return Gateway{}, err
	}
	switch j.NodePortEnable {
	case "true":
		gw.NodePortEnable = true
	case "false", "":
	default:
		return Gateway{}, fmt.Errorf("node-port-enable %s is not \"true\" or \"false\"", quote(j.NodePortEnable))
	}
	if j.VLANID != "" {
		vlan, err := strconv.ParseUint(j.VLANID, 10, 16)
		if err != nil || vlan > maxVLANID {
			return Gateway{}, fmt.Errorf("vlan-id %s is not a VLAN id from 0 to %d", quote(j.VLANID), maxVLANID)
		}
		gw.VLANID = int(vlan)
	}
	return gw, nil
}

// withLegacy parses a list field of an upstream annotation and its deprecated singular
// twin: the singular one is used when the list is empty, and must equal the list's
// first element otherwise. The result is nil when both are empty.
func withLegacy[T comparable](listKey string, list []string, oneKey, one string, parse func(string) (T, error)) ([]T, error) {
	if len(list) == 0 && one != "" {
		list = []string{one}
	}
	var out []T
	for _, s := range list {
		v, err := parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", listKey, err)
		}
		out = append(out, v)
	}
	if one != "" {
		v, err := parse(one)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", oneKey, err)
		}
		if v != out[0] {
			return nil, fmt.Errorf("%s %s contradicts %s %s", oneKey, quote(one), listKey, quote(list[0]))
		}
	}
	return out, nil
}

func formatGateway(gw Gateway) (string, error) {
	j := gatewayJSON{Mode: gw.Mode}
	switch gw.Mode {
	case GatewayModeShared, GatewayModeLocal:
	case GatewayModeDisabled:
		return encodeJSON(map[string]gatewayJSON{DefaultNetworkName: j}), nil
	default:
		return "", fmt.Errorf("mode %q is not %q, %q or %q", gw.Mode, GatewayModeShared, GatewayModeLocal, GatewayModeDisabled)
	}
	mac, err := parseMAC(gw.MAC)
	if err != nil {
		return "", fmt.Errorf("mac-address: %w", err)
	}
	if len(gw.IPs) == 0 {
		return "", fmt.Errorf("no ip-addresses")
	}
	for _, p := range gw.IPs {
		if !p.IsValid() {
			return "", fmt.Errorf("ip-addresses: invalid prefix %q", p)
		}
	}
	for _, a := range gw.NextHops {
		if !a.IsValid() || a.Zone() != "" {
			return "", fmt.Errorf("next-hops: invalid address %q", a)
		}
	}
	if gw.VLANID < 0 || gw.VLANID > maxVLANID {
		return "", fmt.Errorf("vlan-id %d is not from 0 to %d", gw.VLANID, maxVLANID)
	}
	j.BridgeID = gw.BridgeID
	j.InterfaceID = gw.InterfaceID
	j.MACAddress = mac
	j.IPAddresses = prefixStrings(gw.IPs)
	if len(gw.IPs) == 1 {
		j.IPAddress = j.IPAddresses[0]
	}
	for _, a := range gw.NextHops {
		j.NextHops = append(j.NextHops, a.String())
	}
	if len(gw.NextHops) == 1 {
		j.NextHop = j.NextHops[0]
	}
	j.NodePortEnable = strconv.FormatBool(gw.NodePortEnable)
	j.VLANID = strconv.Itoa(gw.VLANID)
	return encodeJSON(map[string]gatewayJSON{DefaultNetworkName: j}), nil
}
