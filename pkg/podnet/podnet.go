// Package podnet is a pod's network wiring as the node agent plans it and the CNI plugin
// carries it out: one interface per network the pod is on, with its MAC, MTU, addresses
// and routes, and the logical switch port its veth is bound to. The agent serves a Plan
// as JSON on its node's unix socket (GET /cni/v1/pods/{namespace}/{name}, docs/agent.md)
// and the plugin decodes it.
//
// The package holds the protocol's types and the host-side naming only, and imports
// nothing outside the standard library: agent and plugin share it without the plugin
// taking in the cluster model and the Kubernetes API types. The planner that turns the
// cluster state into a Plan is package podnet/podplan, which only the agent imports.
package podnet

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Plan is everything a pod's wiring holds.
type Plan struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// UID is the pod's metadata.uid. Its ports carry it (external_ids:iface-id-ver), so
	// OVN binds them to this very pod, never to a leftover of an earlier pod of the
	// same name.
	UID string `json:"uid"`
	// Interfaces are the default network's first (if the pod is on it), then the
	// primary user-defined network's, then the secondary networks' in name order.
	Interfaces []Interface `json:"interfaces"`
}

// Interface is one network interface of a pod.
type Interface struct {
	// Name is the interface inside the pod: eth0, ovn-udn1, net1, … The CNI plugin
	// names the first one CNI_IFNAME instead (eth0 too, as containerd calls it).
	Name string `json:"name"`
	// Network is the network's name ("default", "cluster_udn_blue", …), for messages.
	Network string `json:"network"`
	// IfaceID is the logical switch port, the OVS Interface's external_ids:iface-id.
	IfaceID string `json:"ifaceID"`
	MAC     string `json:"mac"`
	MTU     int    `json:"mtu"`
	// IPs are the interface's addresses with their prefix lengths.
	IPs    []netip.Prefix `json:"ips"`
	Routes []Route        `json:"routes,omitempty"`
}

// Route is a route in the pod through the interface that lists it.
type Route struct {
	Dst netip.Prefix `json:"dst"`
	// Via is the next hop; the zero Addr (left out of the JSON) for a route without.
	Via netip.Addr `json:"via,omitzero"`
}

// Ref is the pod's "namespace/name", for messages.
func (p Plan) Ref() string { return p.Namespace + "/" + p.Name }

// maxIfName is the longest interface name Linux takes (IFNAMSIZ less the NUL).
const maxIfName = 15

// HostInterfaceName names the host end of the veth of a pod's interface number index
// (0 for the first) in the sandbox with this container id. The first interface's end
// is the id's first 15 characters, as upstream's CNI names it. Interface i > 0 gets the
// id's first 15-len(s) characters followed by s = "_<i>" (…_1, …_2, …, …_10): at most 15
// bytes, and never equal to another sandbox's name, since container ids (containerd's
// are 64 hex digits) hold no "_" and differ in their first 12 characters in practice.
// DEL finds a sandbox's ends by these names without knowing how many there were
// (IsHostInterfaceOf).
func HostInterfaceName(containerID string, index int) string {
	if index == 0 {
		return truncate(containerID, maxIfName)
	}
	suffix := "_" + strconv.Itoa(index)
	return truncate(containerID, maxIfName-len(suffix)) + suffix
}

// IsHostInterfaceOf reports whether name is the host end of one of the interfaces of
// the sandbox with this container id, whatever its number.
func IsHostInterfaceOf(containerID, name string) bool {
	if containerID == "" {
		return false
	}
	if name == HostInterfaceName(containerID, 0) {
		return true
	}
	i := strings.LastIndexByte(name, '_')
	if i < 0 {
		return false
	}
	n, err := strconv.Atoi(name[i+1:])
	return err == nil && n > 0 && name == HostInterfaceName(containerID, n)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Validate checks what the plugin needs of a plan before it touches anything: names
// that Linux takes, a MAC, an MTU, addresses, and routes of the interface's families.
// Errors name the pod and the interface.
func (p Plan) Validate() error {
	if len(p.Interfaces) == 0 {
		return fmt.Errorf("plan of pod %s has no interfaces", p.Ref())
	}
	seen := map[string]bool{}
	for _, ifc := range p.Interfaces {
		what := fmt.Sprintf("pod %s interface %q (network %s)", p.Ref(), ifc.Name, ifc.Network)
		switch {
		case ifc.Name == "" || len(ifc.Name) > maxIfName || strings.ContainsAny(ifc.Name, "/ \t\n:") || ifc.Name == "." || ifc.Name == "..":
			return fmt.Errorf("%s: not a Linux interface name (1 to %d characters, no '/', ':' or blank)", what, maxIfName)
		case seen[ifc.Name]:
			return fmt.Errorf("%s: the name is used twice", what)
		case ifc.IfaceID == "":
			return fmt.Errorf("%s: no logical switch port (iface-id)", what)
		case ifc.MTU < 68 || ifc.MTU > 65535:
			return fmt.Errorf("%s: MTU %d is not from 68 to 65535", what, ifc.MTU)
		case len(ifc.IPs) == 0:
			return fmt.Errorf("%s: no addresses", what)
		}
		seen[ifc.Name] = true
		if !isMAC48(ifc.MAC) {
			return fmt.Errorf("%s: MAC %q is not a 48-bit MAC such as 0a:58:0a:f4:00:05", what, ifc.MAC)
		}
		for _, a := range ifc.IPs {
			if !a.IsValid() {
				return fmt.Errorf("%s: an address is not valid", what)
			}
		}
		for _, r := range ifc.Routes {
			if !r.Dst.IsValid() || r.Via.IsValid() && r.Via.Is4() != r.Dst.Addr().Is4() {
				return fmt.Errorf("%s: route to %s via %s mixes families or has no destination", what, r.Dst, r.Via)
			}
		}
	}
	return nil
}

// isMAC48 reports whether s is six colon-separated pairs of hex digits.
func isMAC48(s string) bool {
	if len(s) != 17 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
