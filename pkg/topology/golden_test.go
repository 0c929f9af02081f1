package topology

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/golden"
)

// compileDump compiles a zone and prints it as ovn-nbctl would.
func compileDump(t *testing.T, st *cluster.State, node string) (string, *Result) {
	t.Helper()
	res, err := Compile(st, node)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := nbctl.New(res.Rows).Dump(&b); err != nil {
		t.Fatal(err)
	}
	for name, err := range res.NotCompiled {
		t.Errorf("network %s not compiled: %v", name, err)
	}
	return b.String(), res
}

// goldenZone holds a compiled zone to two golden files: name.golden, the zone as
// ovn-nbctl shows it (what the OKEP listings are compared with), and name.rows.golden,
// every row whole, each column ovnk manages (options, other_config, external_ids, ACLs,
// port groups and meters, which the show output leaves out).
func goldenZone(t *testing.T, name, dump string, res *Result) {
	t.Helper()
	goldenText(t, name, dump)
	var b bytes.Buffer
	if err := ovn.WriteRows(&b, res.Rows); err != nil {
		t.Fatal(err)
	}
	goldenText(t, name+".rows", b.String())
}

// goldenText compares got with testdata/name.golden.
func goldenText(t *testing.T, name, got string) {
	t.Helper()
	golden.File(t, filepath.Join("testdata", name+".golden"), got)
}

// requireLines checks that each expected line, with runs of spaces collapsed, appears in
// the dump: the listings OKEP-5094 prints must be in our output as it prints them.
func requireLines(t *testing.T, dump string, lines ...string) {
	t.Helper()
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	have := map[string]bool{}
	for _, l := range strings.Split(dump, "\n") {
		have[norm(l)] = true
	}
	for _, l := range lines {
		if !have[norm(l)] {
			t.Errorf("dump lacks the line %q", l)
		}
	}
}

func TestGoldenOKEP5094Layer2(t *testing.T) {
	for _, node := range []string{"ovn-control-plane", "ovn-worker", "ovn-worker2"} {
		t.Run(node, func(t *testing.T) {
			dump, res := compileDump(t, topologytest.OKEP5094(), node)
			goldenZone(t, "okep5094-"+node, dump, res)
		})
	}
}

func TestOKEP5094ListingsAppear(t *testing.T) {
	dump, _ := compileDump(t, topologytest.OKEP5094(), "ovn-control-plane")
	const tr = "test12_namespace.scoped_transit_router"
	requireLines(t, dump,
		// The gateway port: .1 of each subnet, MAC from 203.203.0.1, LLA from the MAC.
		"port trtos-test12_namespace.scoped_ovn_layer2_switch",
		`mac: "0a:58:cb:cb:00:01"`,
		`ipv6-lla: "fe80::858:cbff:fecb:1"`,
		`networks: ["2010:100:200::1/60", "203.203.0.1/16"]`,
		// The peer pair of ovn-control-plane (node id 4), as in the OKEP's port listing.
		"port trtor-GR_test12_namespace.scoped_ovn-control-plane",
		`networks: ["100.88.0.8/31", "fd97::8/127"]`,
		"peer: rtotr-GR_test12_namespace.scoped_ovn-control-plane",
		// The OKEP's listing shows key 4 (the node id); upstream ships 10 + node id.
		"requested-tnl-key: 14",
		"port rtotr-GR_test12_namespace.scoped_ovn-control-plane",
		`mac: "0a:58:64:41:00:04"`,
		`networks: ["100.65.0.4/16", "100.88.0.9/31", "fd97::9/127", "fd99::4/64"]`,
		"peer: trtor-GR_test12_namespace.scoped_ovn-control-plane",
		// Transit router routes: services via the management port, every join IP via
		// its node's GR peer, the network's egress via the local GR.
		"# ovn-nbctl lr-route-list "+tr,
		"10.96.0.1 203.203.0.2 dst-ip",
		"10.96.0.10 203.203.0.2 dst-ip",
		"100.65.0.2 100.88.0.5 dst-ip",
		"100.65.0.3 100.88.0.7 dst-ip",
		"100.65.0.4 100.88.0.9 dst-ip",
		"203.203.0.0/16 100.88.0.9 src-ip",
		// Its policies.
		`1004 inport == "trtos-test12_namespace.scoped_ovn_layer2_switch" && ip4.dst == 172.18.0.3 /* test12_namespace.scoped_ovn_layer2_switch */ reroute 203.203.0.2`,
		`1004 inport == "trtos-test12_namespace.scoped_ovn_layer2_switch" && ip6.dst == fc00:f853:ccd:e793::3 /* test12_namespace.scoped_ovn_layer2_switch */ reroute 2010:100:200::2`,
		"102 ip4.src == 203.203.0.0/16 && ip4.dst == 100.64.0.0/16 allow",
		"102 ip4.src == 203.203.0.0/16 && ip4.dst == 203.203.0.0/16 allow",
		"102 ip6.src == 2010:100:200::/60 && ip6.dst == 2010:100:200::/60 allow",
		"102 ip6.src == 2010:100:200::/60 && ip6.dst == fd98::/64 allow",
		"102 pkt.mark == 42 allow",
		// The management-port SNAT moved to the transit router.
		// (ovn-nbctl prints a NAT's logical port only beside an external MAC; show names it.)
		// (upstream's SNATs now carry external_port_range, which the OKEP predates.)
		"snat eth.dst == 0a:58:c 169.254.0.12 32768-60999 203.203.0.0/16",
		`logical port: "trtos-test12_namespace.scoped_ovn_layer2_switch"`,
		// Gateway router routes.
		"# ovn-nbctl lr-route-list GR_test12_namespace.scoped_ovn-control-plane",
		"169.254.0.0/17 169.254.0.4 dst-ip rtoe-GR_test12_namespace.scoped_ovn-control-plane",
		"203.203.0.0/16 100.88.0.8 dst-ip rtotr-GR_test12_namespace.scoped_ovn-control-plane",
		"0.0.0.0/0 172.18.0.1 dst-ip rtoe-GR_test12_namespace.scoped_ovn-control-plane",
	)
}

func TestGoldenLayer3(t *testing.T) {
	for _, node := range []string{"node1", "node2"} {
		t.Run(node, func(t *testing.T) {
			dump, res := compileDump(t, topologytest.Layer3(), node)
			goldenZone(t, "layer3-"+node, dump, res)
		})
	}
}
