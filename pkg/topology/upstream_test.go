package topology

import (
	"slices"
	"testing"

	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// The rows below are written out by hand from what upstream ovn-kubernetes writes for
// the same cluster (docs/topology.md lists the facts), so the expectation is not the
// compiler's own output. Layer3 fixture, node1: node id 2, blue is network 2 (masquerade
// 169.254.0.13, management masquerade 169.254.0.14), MTU 1400.

const isolationPG = "a8747502060113802905" // upstream's name of the isolation port group

func TestUpstreamIsolationRows(t *testing.T) {
	res, err := Compile(topologytest.Layer3(), "node1")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Rows
	acls := map[string]*nbdb.ACL{}
	for _, a := range s.ACLs {
		acls[a.Match] = a
	}
	for _, want := range []struct {
		match  string
		dir    nbdb.ACLDirection
		prio   int
		action nbdb.ACLAction
		tier   int
	}{
		{"inport == @" + isolationPG, nbdb.ACLDirectionFromLport, 1000, nbdb.ACLActionDrop, 0},
		{"outport == @" + isolationPG, nbdb.ACLDirectionToLport, 1000, nbdb.ACLActionDrop, 0},
		{"inport == @" + isolationPG + " && (( arp && arp.tpa == 10.244.0.2 ) || ( nd && nd.target == fd00:10:244:1::2 ))", nbdb.ACLDirectionFromLport, 1001, nbdb.ACLActionAllow, 0},
		{"outport == @" + isolationPG + " && (( arp && arp.spa == 10.244.0.2 ) || ( nd && nd.target == fd00:10:244:1::2 ))", nbdb.ACLDirectionToLport, 1001, nbdb.ACLActionAllow, 0},
		{"outport == @" + isolationPG + " && (ip4.src==10.244.0.2 || ip6.src==fd00:10:244:1::2)", nbdb.ACLDirectionToLport, 1001, nbdb.ACLActionAllowRelated, 0},
		{"ip4.src==10.244.0.2", nbdb.ACLDirectionToLport, 1001, nbdb.ACLActionAllowRelated, 2},
		{"ip6.src==fd00:10:244:1::2", nbdb.ACLDirectionToLport, 1001, nbdb.ACLActionAllowRelated, 2},
		{"ip4.src==10.10.0.2", nbdb.ACLDirectionToLport, 1001, nbdb.ACLActionAllowRelated, 2},
		{"ip6.src==2014:100:200::2", nbdb.ACLDirectionToLport, 1001, nbdb.ACLActionAllowRelated, 2},
	} {
		a := acls[want.match]
		if a == nil {
			t.Errorf("no ACL %q", want.match)
			continue
		}
		if a.Direction != want.dir || a.Priority != want.prio || a.Action != want.action || a.Tier != want.tier ||
			a.Meter == nil || *a.Meter != "acl-logging" || a.Log || len(a.Options) != 0 {
			t.Errorf("ACL %q: %s %d %s tier %d meter %v log %v options %v", want.match, a.Direction, a.Priority, a.Action, a.Tier, a.Meter, a.Log, a.Options)
		}
	}
	if len(s.ACLs) != 9 {
		t.Errorf("%d ACLs, want the 9 above", len(s.ACLs))
	}
	// Upstream's keys beside ours: the feature, the ACL's name and its direction.
	deny := acls["inport == @"+isolationPG]
	for k, v := range map[string]string{"k8s.ovn.org/owner-type": "UDNIsolation", "k8s.ovn.org/name": "DenyPrimaryUDN", "direction": "Egress"} {
		if deny != nil && deny.ExternalIDs[k] != v {
			t.Errorf("isolation ACL external_ids %v, want %s=%s", deny.ExternalIDs, k, v)
		}
	}
	fromNode := acls["ip4.src==10.244.0.2"]
	for k, v := range map[string]string{"k8s.ovn.org/owner-type": "NetpolNode", "k8s.ovn.org/name": "node1", "ip": "10.244.0.2"} {
		if fromNode != nil && fromNode.ExternalIDs[k] != v {
			t.Errorf("allow-from-node ACL external_ids %v, want %s=%s", fromNode.ExternalIDs, k, v)
		}
	}

	ix := rows.NewIndex(s)
	if len(s.PortGroups) != 1 || s.PortGroups[0].Name != isolationPG || len(s.PortGroups[0].ACLs) != 5 {
		t.Fatalf("port groups %+v", s.PortGroups)
	}
	var members []string
	for _, key := range s.PortGroups[0].Ports {
		members = append(members, ix.SwitchPorts[key].Name)
	}
	if !slices.Equal(members, []string{"blue_web"}) {
		t.Errorf("isolation port group holds %v, want blue/web's default port alone", members)
	}
	for _, name := range []string{"node1", "cluster_udn_blue_node1"} {
		if ls := ix.Switch(name); len(ls.ACLs) != 2 {
			t.Errorf("node switch %s holds ACLs %v, want its two allow-from-node ACLs", name, ls.ACLs)
		}
	}
	if pg := s.PortGroups[0]; pg.ExternalIDs["k8s.ovn.org/owner-type"] != "UDNIsolation" || pg.ExternalIDs["k8s.ovn.org/name"] != "SecondaryPods" {
		t.Errorf("port group external_ids %v", pg.ExternalIDs)
	}
	if len(s.Meters) != 1 || s.Meters[0].Name != "acl-logging" || s.Meters[0].Unit != "pktps" || s.Meters[0].Fair == nil || !*s.Meters[0].Fair ||
		len(s.MeterBands) != 1 || s.MeterBands[0].Rate != 20 || s.MeterBands[0].Action != "drop" {
		t.Errorf("meter %+v bands %+v", s.Meters, s.MeterBands)
	}
	if web := portNamed(s, "blue_web"); web.Options["iface-id-ver"] != "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f" {
		t.Errorf("blue_web options %v", web.Options)
	}
}

func TestUpstreamMasqueradeAndNames(t *testing.T) {
	res, err := Compile(topologytest.Layer3(), "node1")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Rows
	ix := rows.NewIndex(s)

	if rtoe := routerPortNamed(s, "rtoe-GR_cluster_udn_blue_node1"); rtoe == nil ||
		!slices.Contains(rtoe.Networks, "169.254.0.13/32") || !slices.Contains(rtoe.Networks, "172.18.0.2/16") {
		t.Errorf("UDN external port %+v", rtoe)
	}
	if gr := ix.Router("GR_cluster_udn_blue_node1"); gr.Options["disable_garp_rarp"] != "true" {
		t.Errorf("UDN GR options %v", gr.Options)
	}
	if etor := portNamed(s, "etor-GR_cluster_udn_blue_node1"); etor.Options["nat-addresses"] != "" || etor.Options["exclude-lb-vips-from-garp"] != "" {
		t.Errorf("UDN etor options %v", etor.Options)
	}
	if etor := portNamed(s, "etor-GR_node1"); etor.Options["nat-addresses"] != "router" || etor.Options["exclude-lb-vips-from-garp"] != "true" {
		t.Errorf("default etor options %v", etor.Options)
	}
	natOf := func(router, logicalIP string) *nbdb.NAT {
		for _, id := range ix.Router(router).Nat {
			if n := ix.NATs[id]; n.LogicalIP == logicalIP {
				return n
			}
		}
		return nil
	}
	if n := natOf("GR_cluster_udn_blue_node1", "100.65.0.2"); n == nil || n.ExternalIP != "169.254.0.13" || n.ExternalPortRange != "32768-60999" {
		t.Errorf("UDN GR join SNAT %+v", n)
	}
	if n := natOf("cluster_udn_blue_ovn_cluster_router", "10.10.0.0/24"); n == nil || n.ExternalIP != "169.254.0.14" {
		t.Errorf("management SNAT on the node subnet: %+v", n)
	}
	cr := ix.Router("cluster_udn_blue_ovn_cluster_router")
	var reroute bool
	for _, id := range cr.Policies {
		p := ix.Policies[id]
		if p.Priority == 1004 && p.Match == `inport == "rtos-cluster_udn_blue_node1" && ip4.dst == 169.254.0.13 /* cluster_udn_blue_node1 */` &&
			p.Action == "reroute" && slices.Equal(p.Nexthops, []string{"10.10.0.2"}) {
			reroute = true
		}
	}
	if !reroute {
		t.Error("no 1004 reroute of the masquerade address to the management port")
	}
	type route struct{ prefix, nexthop, policy, port string }
	routesOf := func(router string) []route {
		var out []route
		for _, id := range ix.Router(router).StaticRoutes {
			r := ix.Routes[id]
			rt := route{prefix: r.IPPrefix, nexthop: r.Nexthop, policy: "dst-ip"}
			if r.Policy != nil {
				rt.policy = string(*r.Policy)
			}
			if r.OutputPort != nil {
				rt.port = *r.OutputPort
			}
			out = append(out, rt)
		}
		return out
	}
	for _, want := range []route{
		{"10.96.0.1", "10.10.0.2", "dst-ip", ""},
		{"10.10.0.0/24", "100.65.0.2", "src-ip", ""},
		{"10.10.0.0/16", "100.65.0.2", "src-ip", ""},
		{"100.65.0.3/32", "100.88.0.3", "dst-ip", ""},
	} {
		if !slices.Contains(routesOf("cluster_udn_blue_ovn_cluster_router"), want) {
			t.Errorf("UDN cluster router lacks route %+v", want)
		}
	}
	if !slices.Contains(routesOf("ovn_cluster_router"), route{"10.244.0.0/16", "100.64.0.2", "src-ip", ""}) {
		t.Error("default cluster router lacks the whole network's src-ip route")
	}
	if !slices.Contains(routesOf("GR_cluster_udn_blue_node1"), route{"10.10.0.0/16", "100.65.0.1", "dst-ip", ""}) {
		t.Errorf("UDN GR's route back to the network: %+v", routesOf("GR_cluster_udn_blue_node1"))
	}

	if rtots := routerPortNamed(s, "cluster_udn_blue_rtots-node1"); rtots == nil || rtots.Options["mcast_flood"] != "true" {
		t.Errorf("transit switch router port %+v", rtots)
	}
	if portNamed(s, "cluster_udn_blue_tstor-node2") == nil || ix.Switch("ext_cluster_udn_blue_node1") == nil {
		t.Error("upstream's names of the transit switch ports or the external switch are missing")
	}
	for _, name := range []string{"rtos-cluster_udn_blue_node1", "rtoj-GR_cluster_udn_blue_node1", "rtos-node1", "rtoj-GR_node1"} {
		if p := routerPortNamed(s, name); p == nil || p.Options["gateway_mtu"] != "1400" {
			t.Errorf("%s: %+v", name, p)
		}
	}
	for _, n := range s.NATs {
		if n.ExternalPortRange != "32768-60999" {
			t.Errorf("NAT %s without external_port_range", n.UUID)
		}
	}
}

func TestUpstreamTransitRouterKeys(t *testing.T) {
	res, err := Compile(topologytest.OKEP5094(), "ovn-control-plane")
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]string{
		"trtos-test12_namespace.scoped_ovn_layer2_switch":    "1",
		"trtor-GR_test12_namespace.scoped_ovn-control-plane": "14", // node id 4
		"trtor-GR_test12_namespace.scoped_ovn-worker":        "13",
	} {
		if p := routerPortNamed(res.Rows, name); p == nil || p.Options["requested-tnl-key"] != key {
			t.Errorf("%s: %+v, want requested-tnl-key %s", name, p, key)
		}
	}
	if p := routerPortNamed(res.Rows, "trtos-test12_namespace.scoped_ovn_layer2_switch"); p == nil || p.Options["gateway_mtu"] != "1400" {
		t.Errorf("the pods' gateway port %+v, want gateway_mtu 1400", p)
	}
}

func portNamed(s *rows.Set, name string) *nbdb.LogicalSwitchPort {
	return named(s.SwitchPorts, name, func(p *nbdb.LogicalSwitchPort) string { return p.Name })
}

func routerPortNamed(s *rows.Set, name string) *nbdb.LogicalRouterPort {
	return named(s.RouterPorts, name, func(p *nbdb.LogicalRouterPort) string { return p.Name })
}

// named returns the row of list whose name is name, or nil.
func named[T any](list []*T, name string, nameOf func(*T) string) *T {
	for _, r := range list {
		if nameOf(r) == name {
			return r
		}
	}
	return nil
}
