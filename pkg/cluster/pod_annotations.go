package cluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
)

// AnnotationPodNetworks is the pod's addresses on each network it is attached to,
// keyed by NAD name ("default" or "<namespace>/<nad>").
const AnnotationPodNetworks = "k8s.ovn.org/pod-networks"

// Roles of a network for a pod (PodInterface.Role).
const (
	// PodRolePrimary: the pod's default route and services use this network.
	PodRolePrimary = "primary"
	// PodRoleSecondary: an extra interface.
	PodRoleSecondary = "secondary"
	// PodRoleInfrastructureLocked: the default network of a pod whose primary network is
	// user-defined; it only carries kubelet probes and the like.
	PodRoleInfrastructureLocked = "infrastructure-locked"
)

// PodNetworksCodec reads and writes k8s.ovn.org/pod-networks. It validates
// ip_addresses (at most one per IP family), mac_address (48 bits), gateway_ips (each of
// a family the pod has an address in), routes, ipv6_lla_gateway_ip, tunnel_id and
// role, reads the legacy ip_address and gateway_ip when the lists are absent, and
// ignores fields it does not know (e.g. ipam_mode), which Format therefore drops.
var PodNetworksCodec = Codec[map[string]PodInterface]{Key: AnnotationPodNetworks, parse: parsePodNetworks, format: formatPodNetworks}

// podNetworkJSON is one entry of k8s.ovn.org/pod-networks. ip_addresses and
// mac_address are always written, as OVN-Kubernetes does.
type podNetworkJSON struct {
	IPs            []string       `json:"ip_addresses"`
	MAC            string         `json:"mac_address"`
	Gateways       []string       `json:"gateway_ips,omitempty"`
	Routes         []podRouteJSON `json:"routes,omitempty"`
	IP             string         `json:"ip_address,omitempty"`
	Gateway        string         `json:"gateway_ip,omitempty"`
	GatewayIPv6LLA string         `json:"ipv6_lla_gateway_ip,omitempty"`
	TunnelID       int            `json:"tunnel_id,omitempty"`
	Role           string         `json:"role,omitempty"`
}

type podRouteJSON struct {
	Dest    string `json:"dest"`
	NextHop string `json:"nextHop"`
}

func parsePodNetworks(value string) (map[string]PodInterface, error) {
	var all map[string]json.RawMessage
	if err := decodeJSON(value, &all, "object"); err != nil {
		return nil, err
	}
	out := make(map[string]PodInterface, len(all))
	for _, nad := range slices.Sorted(maps.Keys(all)) {
		if nad == "" {
			return nil, fmt.Errorf("an entry has an empty NAD name")
		}
		var j podNetworkJSON
		if err := decodeJSON(string(all[nad]), &j, "object"); err != nil {
			return nil, fmt.Errorf("entry %q: %w", nad, err)
		}
		pi, err := podInterfaceFromJSON(j)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", nad, err)
		}
		out[nad] = pi
	}
	return out, nil
}

func podInterfaceFromJSON(j podNetworkJSON) (PodInterface, error) {
	var pi PodInterface
	var err error
	if pi.MAC, err = parseMAC(j.MAC); err != nil {
		return pi, fmt.Errorf("mac_address: %w", err)
	}
	if pi.IPs, err = withLegacy("ip_addresses", j.IPs, "ip_address", j.IP, parseIfAddr); err != nil {
		return pi, err
	}
	if pi.Gateways, err = withLegacy("gateway_ips", j.Gateways, "gateway_ip", j.Gateway, parseAddr); err != nil {
		return pi, err
	}
	for _, r := range j.Routes {
		route := PodRoute{}
		if route.Dest, err = parseIfAddr(r.Dest); err != nil {
			return pi, fmt.Errorf("routes: dest: %w", err)
		}
		route.Dest = route.Dest.Masked()
		if r.NextHop != "" {
			if route.NextHop, err = parseAddr(r.NextHop); err != nil {
				return pi, fmt.Errorf("routes: nextHop: %w", err)
			}
		}
		pi.Routes = append(pi.Routes, route)
	}
	if j.GatewayIPv6LLA != "" {
		if pi.GatewayIPv6LLA, err = parseAddr(j.GatewayIPv6LLA); err != nil {
			return pi, fmt.Errorf("ipv6_lla_gateway_ip: %w", err)
		}
	}
	pi.TunnelID = j.TunnelID
	pi.Role = j.Role
	return pi, checkPodInterface(pi)
}

// checkPodInterface validates what parsing alone does not: families, roles, ranges.
func checkPodInterface(pi PodInterface) error {
	if err := onePerFamily("ip_addresses", pi.IPs); err != nil {
		return err
	}
	if err := onePerFamily("gateway_ips", addrPrefixes(pi.Gateways)); err != nil {
		return err
	}
	for _, gw := range pi.Gateways {
		if gw.Zone() != "" {
			return fmt.Errorf("gateway_ips: %s has a zone", gw)
		}
		if !slices.ContainsFunc(pi.IPs, func(p netip.Prefix) bool { return p.Addr().Is4() == gw.Is4() }) {
			return fmt.Errorf("gateway_ips: %s is an %s gateway but the pod has no %s address", gw, family(gw), family(gw))
		}
	}
	for _, r := range pi.Routes {
		if !r.Dest.IsValid() {
			return fmt.Errorf("routes: invalid dest %q", r.Dest)
		}
		if r.Dest.Bits() == 0 {
			return fmt.Errorf("routes: dest %s is a default route; give it as gateway_ips", r.Dest)
		}
		if r.NextHop.Zone() != "" {
			return fmt.Errorf("routes: nextHop %s has a zone", r.NextHop)
		}
		if r.NextHop.IsValid() && r.NextHop.Is4() != r.Dest.Addr().Is4() {
			return fmt.Errorf("routes: nextHop %s and dest %s are of different IP families", r.NextHop, r.Dest)
		}
	}
	if lla := pi.GatewayIPv6LLA; lla.IsValid() && (!lla.Is6() || !lla.IsLinkLocalUnicast() || lla.Zone() != "") {
		return fmt.Errorf("ipv6_lla_gateway_ip: %s is not an IPv6 link-local address", lla)
	}
	if pi.TunnelID < 0 {
		return fmt.Errorf("tunnel_id %d is negative", pi.TunnelID)
	}
	switch pi.Role {
	case "", PodRolePrimary, PodRoleSecondary, PodRoleInfrastructureLocked:
	default:
		return fmt.Errorf("role %s is not %q, %q or %q", quote(pi.Role), PodRolePrimary, PodRoleSecondary, PodRoleInfrastructureLocked)
	}
	return nil
}

// addrPrefixes turns addresses into single-address prefixes, so that onePerFamily can
// check them; an invalid address stays invalid.
func addrPrefixes(addrs []netip.Addr) []netip.Prefix {
	out := make([]netip.Prefix, len(addrs))
	for i, a := range addrs {
		out[i] = netip.PrefixFrom(a, a.BitLen())
	}
	return out
}

func formatPodNetworks(m map[string]PodInterface) (string, error) {
	out := make(map[string]podNetworkJSON, len(m))
	for _, nad := range slices.Sorted(maps.Keys(m)) {
		j, err := podInterfaceToJSON(m[nad])
		if err != nil {
			return "", fmt.Errorf("entry %q: %w", nad, err)
		}
		if nad == "" {
			return "", fmt.Errorf("an entry has an empty NAD name")
		}
		out[nad] = j
	}
	return encodeJSON(out), nil
}

func podInterfaceToJSON(pi PodInterface) (podNetworkJSON, error) {
	if err := checkPodInterface(pi); err != nil {
		return podNetworkJSON{}, err
	}
	mac, err := parseMAC(pi.MAC)
	if err != nil {
		return podNetworkJSON{}, fmt.Errorf("mac_address: %w", err)
	}
	j := podNetworkJSON{MAC: mac, IPs: prefixStrings(pi.IPs), TunnelID: pi.TunnelID, Role: pi.Role}
	for _, gw := range pi.Gateways {
		j.Gateways = append(j.Gateways, gw.String())
	}
	if len(j.IPs) == 1 {
		j.IP = j.IPs[0]
		if len(j.Gateways) == 1 {
			j.Gateway = j.Gateways[0]
		}
	}
	for _, r := range pi.Routes {
		rj := podRouteJSON{Dest: r.Dest.Masked().String()}
		if r.NextHop.IsValid() {
			rj.NextHop = r.NextHop.String()
		}
		j.Routes = append(j.Routes, rj)
	}
	if pi.GatewayIPv6LLA.IsValid() {
		j.GatewayIPv6LLA = pi.GatewayIPv6LLA.String()
	}
	return j, nil
}
