package host

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/host/sbchassis"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

func TestPlanLayer3Node(t *testing.T) {
	p, errs := PlanFor(topologytest.Layer3(), "node1", "br-int")
	if len(errs) > 0 || len(p.ChassisErrors) > 0 {
		t.Fatalf("errors: %v %v", errs, p.ChassisErrors)
	}
	// Every other node is a remote chassis, its tunnel at its primary IPv4 address.
	want := []sbchassis.RemoteChassis{
		{Name: "chassis-node2", Hostname: "node2", EncapIP: netip.MustParseAddr("172.18.0.3")},
		{Name: "chassis-node3", Hostname: "node3", EncapIP: netip.MustParseAddr("172.18.0.4")},
	}
	if len(p.Chassis) != len(want) {
		t.Fatalf("chassis %+v, want %+v", p.Chassis, want)
	}
	for i := range want {
		if p.Chassis[i] != want[i] {
			t.Errorf("chassis %d = %+v, want %+v", i, p.Chassis[i], want[i])
		}
	}
	// Upstream's names: ovn-k8s-mp0 for the default network, ovn-k8s-mp<id> for a UDN
	// (blue has id 2); the patch ports are ovn-controller's for each localnet port.
	ports := map[string]ManagementPort{}
	for _, mp := range p.ManagementPorts {
		ports[mp.Network] = mp
	}
	def, blue := ports["default"], ports["cluster_udn_blue"]
	if def.Link != "ovn-k8s-mp0" || def.LSP != "k8s-node1" || def.MAC != "0a:58:0a:f4:00:02" || def.OwnTable ||
		fmtPrefixes(def.Addresses) != "10.244.0.2/24 fd00:10:244:1::2/64" || fmtPrefixes(def.Routed) != "10.244.0.0/16 fd00:10:244::/48" {
		t.Errorf("default management port %+v", def)
	}
	if blue.Link != "ovn-k8s-mp2" || blue.LSP != "k8s-cluster_udn_blue_node1" || !blue.OwnTable ||
		fmtPrefixes(blue.Addresses) != "10.10.0.2/24 2014:100:200::2/64" {
		t.Errorf("blue management port %+v", blue)
	}
	gws := map[string]GatewayPort{}
	for _, g := range p.Gateways {
		gws[g.Network] = g
	}
	if g := gws["default"]; g.Patch != "patch-breth0_node1-to-br-int" || g.CTMark != 1 {
		t.Errorf("default gateway %+v", g)
	}
	if g := gws["cluster_udn_blue"]; g.Patch != "patch-cluster_udn_blue_breth0_node1-to-br-int" || g.CTMark != 5 {
		t.Errorf("blue gateway %+v (ct mark 3 + network id 2)", g)
	}
}

func TestPlanLayer2ManagementPortHasTheNetworksAddresses(t *testing.T) {
	p, errs := PlanFor(topologytest.OKEP5094(), "ovn-worker", "br-int")
	if len(errs) > 0 || len(p.ManagementPorts) != 1 {
		t.Fatalf("plan %+v, errors %v", p, errs)
	}
	mp := p.ManagementPorts[0]
	// Every node's port has the same addresses on the one switch; nothing is routed.
	if mp.Link != "ovn-k8s-mp1" || fmtPrefixes(mp.Addresses) != "203.203.0.2/16 2010:100:200::2/60" || len(mp.Routed) != 0 {
		t.Errorf("management port %+v", mp)
	}
}

func TestPlanLeavesOutWhatIsNotReady(t *testing.T) {
	st := topologytest.Layer3()
	st.Node("node1").Subnets["cluster_udn_blue"] = nil
	st.Node("node3").PrimaryIfAddrs = nil
	p, errs := PlanFor(st, "node1", "br-int")
	if len(p.ManagementPorts) != 1 || p.ManagementPorts[0].Network != "default" {
		t.Errorf("management ports %+v: want the default network's only", p.ManagementPorts)
	}
	if len(p.Chassis) != 1 || p.Chassis[0].Hostname != "node2" {
		t.Errorf("chassis %+v: want node2's only", p.Chassis)
	}
	joined := errors.Join(append(errs, p.ChassisErrors...)...).Error()
	for _, want := range []string{"node3 publishes no primary interface address", "no subnet of network cluster_udn_blue"} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors %q lack %q", joined, want)
		}
	}
	if _, errs := PlanFor(st, "nodeX", "br-int"); len(errs) != 1 || !errors.Is(errs[0], topology.ErrNodeNotReady) {
		t.Errorf("unknown node: %v", errs)
	}
}

func TestFactsAnnotations(t *testing.T) {
	f := Facts{
		ChassisID: "4c3b8f0e-6d2a-4f1e-9b7c-2a1d3e4f5a6b",
		Bridge:    "br-ex",
		MAC:       "02:42:ac:12:00:02",
		Addresses: []netip.Prefix{netip.MustParsePrefix("172.18.0.2/16"), netip.MustParsePrefix("fc00:f853:ccd:e793::2/64")},
		NextHops:  []netip.Addr{netip.MustParseAddr("172.18.0.1")},
		HostCIDRs: []netip.Prefix{netip.MustParsePrefix("172.18.0.2/16")},
	}
	a, err := f.Annotations("node1")
	if err != nil {
		t.Fatal(err)
	}
	// What the compiler reads back must be what was read from the node.
	gw, err := cluster.L3GatewayConfigCodec.Parse(cluster.ObjectRef{Kind: "Node", Name: "node1"}, a[cluster.AnnotationL3GatewayConfig])
	if err != nil {
		t.Fatal(err)
	}
	if gw.Mode != cluster.GatewayModeShared || gw.InterfaceID != "br-ex_node1" || gw.MAC != f.MAC ||
		fmtPrefixes(gw.IPs) != "172.18.0.2/16 fc00:f853:ccd:e793::2/64" || len(gw.NextHops) != 1 {
		t.Errorf("gateway %+v", gw)
	}
	if a[cluster.AnnotationNodeChassisID] != f.ChassisID {
		t.Errorf("chassis annotation %q", a[cluster.AnnotationNodeChassisID])
	}
	if got := a[cluster.AnnotationNodePrimaryIfAddr]; got != `{"ipv4":"172.18.0.2/16","ipv6":"fc00:f853:ccd:e793::2/64"}` {
		t.Errorf("primary ifaddr %s", got)
	}
	if _, err := (Facts{Bridge: "br-ex", ChassisID: "x"}).Annotations("node1"); err == nil || !strings.Contains(err.Error(), "br-ex has no global address") {
		t.Errorf("no address: %v", err)
	}
	if _, err := (Facts{Bridge: "br-ex"}).Annotations("node1"); err == nil || !strings.Contains(err.Error(), "system-id") {
		t.Errorf("no chassis: %v", err)
	}
}

func fmtPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}
