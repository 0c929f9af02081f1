// Package podplan turns a pod of the cluster state into its wiring (a podnet.Plan): the
// agent answers the CNI plugin with it, and the sandbox's pods daemon wired pods by it.
// It is apart from package podnet because it reads the cluster state, which pulls in
// the Kubernetes API types the plugin binary does without.
package podplan

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/pkg/topology"
)

// Interface names inside a pod, as OVN-Kubernetes' CNI and Multus give them: the
// default network is eth0 (for a pod of a primary user-defined network it is
// infrastructure-locked: probes only, no default route), the primary user-defined
// network ovn-udn1, secondary networks net1, net2, … in network-name order.
const (
	DefaultIfName    = "eth0"
	PrimaryUDNIfName = "ovn-udn1"
	secondaryIfName  = "net"
)

// For plans the wiring of pod p of st: one interface per network the pod is on, with
// the network's MTU (cluster.DefaultMTU when the network says 0), the annotation's MAC,
// addresses and routes, and default routes through the gateways of its primary
// interface. A pod on a network st does not hold, or with no addresses on one, is an
// error naming the pod and the network.
func For(st *cluster.State, p *cluster.Pod) (podnet.Plan, error) {
	plan := podnet.Plan{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
	if p.UID == "" {
		return plan, fmt.Errorf("pod %s has no UID", plan.Ref())
	}
	type entry struct {
		net   *cluster.Network
		iface cluster.PodInterface
	}
	var def, primary *entry
	var secondaries []*entry
	for name, iface := range p.Networks {
		i := slices.IndexFunc(st.Networks, func(n *cluster.Network) bool { return n.Name == name })
		if i < 0 {
			return plan, fmt.Errorf("pod %s is on network %s, which the cluster state does not hold", plan.Ref(), name)
		}
		e := &entry{st.Networks[i], iface}
		switch {
		case e.net.IsDefault():
			def = e
		case iface.Role == cluster.PodRolePrimary:
			primary = e
		default:
			secondaries = append(secondaries, e)
		}
	}
	slices.SortFunc(secondaries, func(a, b *entry) int { return strings.Compare(a.net.Name, b.net.Name) })
	add := func(e *entry, name string) error {
		ifc := podnet.Interface{
			Name:    name,
			Network: e.net.Name,
			IfaceID: topology.PodPortName(e.net, p),
			MAC:     e.iface.MAC,
			MTU:     e.net.MTU,
			IPs:     slices.Clone(e.iface.IPs),
		}
		if ifc.MTU == 0 {
			ifc.MTU = cluster.DefaultMTU
		}
		if len(ifc.IPs) == 0 {
			return fmt.Errorf("pod %s has no addresses on network %s", plan.Ref(), e.net.Name)
		}
		// The default network's entry has an empty role on a cluster without
		// user-defined networks: it is then the primary one.
		if e.iface.Role == cluster.PodRolePrimary || e.iface.Role == "" && e.net.IsDefault() {
			for _, gw := range e.iface.Gateways {
				ifc.Routes = append(ifc.Routes, podnet.Route{Dst: netip.PrefixFrom(unspecified(gw), 0), Via: gw})
			}
		}
		for _, r := range e.iface.Routes {
			ifc.Routes = append(ifc.Routes, podnet.Route{Dst: r.Dest, Via: r.NextHop})
		}
		plan.Interfaces = append(plan.Interfaces, ifc)
		return nil
	}
	if def != nil {
		if err := add(def, DefaultIfName); err != nil {
			return plan, err
		}
	}
	if primary != nil {
		if err := add(primary, PrimaryUDNIfName); err != nil {
			return plan, err
		}
	}
	for i, e := range secondaries {
		if err := add(e, secondaryIfName+strconv.Itoa(i+1)); err != nil {
			return plan, err
		}
	}
	return plan, nil
}

func unspecified(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}
