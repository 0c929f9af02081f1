package cni

import (
	"net"
	"net/netip"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/podnet"
)

// wired is one interface of the plan as ADD made it: the plan's interface (its Name the
// pod end's) and the host end.
type wired struct {
	podnet.Interface
	hostName, hostMAC string
}

// resultOf is ADD's result for the interfaces it wired in the sandbox at netnsPath: per
// interface the host end (no sandbox) and then the pod end (sandbox = netnsPath), each
// address pointing at its pod end by index — containerd's go-cni files every address
// under the interface its index names and takes the pod's addresses from the one named
// CNI_IFNAME, which must have a sandbox — with the gateway of its family's default
// route, and the plan's routes.
func resultOf(version, netnsPath string, ifaces []wired) *types100.Result {
	res := &types100.Result{CNIVersion: version}
	for _, w := range ifaces {
		mac, _ := net.ParseMAC(w.MAC) // checked by Validate
		res.Interfaces = append(res.Interfaces,
			&types100.Interface{Name: w.hostName, Mac: w.hostMAC, Mtu: w.MTU},
			&types100.Interface{Name: w.Name, Mac: mac.String(), Mtu: w.MTU, Sandbox: netnsPath})
		idx := len(res.Interfaces) - 1
		for _, a := range w.IPs {
			ip := &types100.IPConfig{Interface: types100.Int(idx), Address: *netconf.IPNetOf(a)}
			if gw := gatewayOf(w.Interface, a); gw.IsValid() {
				ip.Gateway = net.IP(gw.AsSlice())
			}
			res.IPs = append(res.IPs, ip)
		}
		for _, r := range w.Routes {
			route := &types.Route{Dst: *netconf.IPNetOf(r.Dst.Masked())}
			if r.Via.IsValid() {
				route.GW = net.IP(r.Via.AsSlice())
			}
			res.Routes = append(res.Routes, route)
		}
	}
	return res
}

// gatewayOf is the next hop of the interface's default route of the address's family,
// the result's gateway for that address; invalid when there is none.
func gatewayOf(ifc podnet.Interface, a netip.Prefix) netip.Addr {
	for _, r := range ifc.Routes {
		if r.Dst.Bits() == 0 && r.Via.IsValid() && r.Via.Is4() == a.Addr().Is4() {
			return r.Via
		}
	}
	return netip.Addr{}
}
