package topology

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn/nbctl"
	"github.com/ovnk/ovnk/pkg/ovn/rows"
)

func compileAll(t *testing.T, st *cluster.State) map[string]*rows.Index {
	t.Helper()
	zones := map[string]*rows.Index{}
	for _, n := range st.Nodes {
		res, err := Compile(st, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NotCompiled) > 0 {
			t.Fatalf("zone %s: %v", n.Name, res.NotCompiled)
		}
		zones[n.Name] = rows.NewIndex(res.Rows)
	}
	return zones
}

// TestZonesAgreeOnTransitSwitch checks what OVN interconnect needs of a Layer3 network:
// every zone gives the transit switch the same key, and node X's transit port has, in
// every other zone, the key, chassis and addresses it has in X's own zone.
func TestZonesAgreeOnTransitSwitch(t *testing.T) {
	st := topologytest.Layer3()
	zones := compileAll(t, st)
	for _, n := range st.Networks {
		nm := namesOf(n)
		key := ""
		for zone, ix := range zones {
			ts := ix.Switch(nm.TransitSwitch())
			if ts == nil {
				t.Fatalf("zone %s has no %s", zone, nm.TransitSwitch())
			}
			if key == "" {
				key = ts.OtherConfig["requested-tnl-key"]
			}
			if got := ts.OtherConfig["requested-tnl-key"]; got != key || got == "" {
				t.Errorf("zone %s: %s key %q, other zones %q", zone, ts.Name, got, key)
			}
		}
		for _, owner := range st.Nodes {
			port := nm.TransitSwitchPort(owner.Name)
			own := zones[owner.Name].SwitchPorts["LSP:"+port]
			rtots := zones[owner.Name].RouterPorts["LRP:"+nm.TransitSwitchRouterPort(owner.Name)]
			if own == nil || rtots == nil || own.Type != "router" {
				t.Fatalf("zone %s lacks its own transit port %s", owner.Name, port)
			}
			wantAddr := rtots.MAC + " " + strings.Join(rtots.Networks, " ")
			for zone, ix := range zones {
				if zone == owner.Name {
					continue
				}
				remote := ix.SwitchPorts["LSP:"+port]
				switch {
				case remote == nil:
					t.Errorf("zone %s has no remote port %s", zone, port)
				case remote.Type != "remote" || remote.Options["requested-tnl-key"] != own.Options["requested-tnl-key"] ||
					remote.Options["requested-chassis"] != owner.ChassisID || remote.Addresses[0] != wantAddr:
					t.Errorf("zone %s: remote port %s = %s %v %v, want key %s chassis %s addresses %q",
						zone, port, remote.Type, remote.Options, remote.Addresses, own.Options["requested-tnl-key"], owner.ChassisID, wantAddr)
				}
			}
		}
	}
}

// TestZonesAgreeOnTransitRouter checks OKEP-5094's requirement: the transit router and
// each of its node ports have the same key, MAC and networks in every zone; the port is
// peered with the gateway router only in its node's zone and bound to that node's
// chassis everywhere else; the gateway port is identical everywhere.
func TestZonesAgreeOnTransitRouter(t *testing.T) {
	st := topologytest.OKEP5094()
	zones := compileAll(t, st)
	nm := namesOf(st.Networks[0])
	ref := zones["ovn-control-plane"]
	for zone, ix := range zones {
		tr := ix.Router(nm.TransitRouter())
		if tr.Options["requested-tnl-key"] != ref.Router(nm.TransitRouter()).Options["requested-tnl-key"] {
			t.Errorf("zone %s: transit router key %v", zone, tr.Options)
		}
		gw, refGW := ix.RouterPorts["LRP:trtos-"+nm.Layer2Switch()], ref.RouterPorts["LRP:trtos-"+nm.Layer2Switch()]
		if gw.MAC != refGW.MAC || strings.Join(gw.Networks, ",") != strings.Join(refGW.Networks, ",") {
			t.Errorf("zone %s: gateway port %s %v differs from %s %v", zone, gw.MAC, gw.Networks, refGW.MAC, refGW.Networks)
		}
		for _, owner := range st.Nodes {
			name := transitRouterToRouter + nm.GatewayRouter(owner.Name)
			p, want := ix.RouterPorts["LRP:"+name], zones[owner.Name].RouterPorts["LRP:"+name]
			if p == nil {
				t.Fatalf("zone %s lacks %s", zone, name)
			}
			if p.MAC != want.MAC || strings.Join(p.Networks, ",") != strings.Join(want.Networks, ",") ||
				p.Options["requested-tnl-key"] != fmt.Sprint(transitRouterPeerKeyBase+owner.ID) {
				t.Errorf("zone %s: %s = %s %v %v; in its own zone %s %v %v", zone, name, p.MAC, p.Networks, p.Options, want.MAC, want.Networks, want.Options)
			}
			if zone == owner.Name {
				if p.Peer == nil || *p.Peer != routerToTransitRouter+nm.GatewayRouter(owner.Name) || p.Options["requested-chassis"] != "" {
					t.Errorf("zone %s: own port %s must be peered and unbound: peer %v options %v", zone, name, p.Peer, p.Options)
				}
			} else if p.Peer != nil || p.Options["requested-chassis"] != owner.ChassisID {
				t.Errorf("zone %s: remote port %s must be bound to %s and unpeered: peer %v options %v", zone, name, owner.ChassisID, p.Peer, p.Options)
			}
		}
	}
}

func TestCompileIsDeterministic(t *testing.T) {
	for _, st := range []*cluster.State{topologytest.Layer3(), topologytest.OKEP5094(), topologytest.OKEP5224(), topologytest.MixedConnect()} {
		for _, n := range st.Nodes {
			var first string
			for i := 0; i < 5; i++ {
				res, err := Compile(st, n.Name)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := nbctl.New(res.Rows).Dump(&b); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = b.String()
				} else if b.String() != first {
					t.Fatalf("zone %s compiled differently on run %d", n.Name, i)
				}
			}
		}
	}
}

// TestEveryRowIsOursAndIdentified checks what the reconciler relies on: every row has
// our owner key and a unique identity equal to its key, and every reference resolves.
func TestEveryRowIsOursAndIdentified(t *testing.T) {
	res, err := Compile(topologytest.Layer3(), "node2")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	check := func(key string, ids map[string]string) {
		if ids[rows.OwnerControllerKey] != rows.OwnerController || ids[rows.IDKey] != key || ids[rows.NetworkKey] == "" || ids[rows.TopologyKey] == "" {
			t.Errorf("row %s has external_ids %v", key, ids)
		}
		if seen[key] {
			t.Errorf("identity %s is used twice", key)
		}
		seen[key] = true
	}
	s := res.Rows
	for _, r := range s.Switches {
		check(r.UUID, r.ExternalIDs)
	}
	for _, r := range s.SwitchPorts {
		check(r.UUID, r.ExternalIDs)
	}
	for _, r := range s.Routers {
		check(r.UUID, r.ExternalIDs)
	}
	for _, r := range s.RouterPorts {
		check(r.UUID, r.ExternalIDs)
	}
	for _, r := range s.Routes {
		check(r.UUID, r.ExternalIDs)
	}
	for _, r := range s.Policies {
		check(r.UUID, r.ExternalIDs)
	}
	for _, r := range s.NATs {
		check(r.UUID, r.ExternalIDs)
	}
	for _, r := range s.GatewayChassis {
		check(r.UUID, r.ExternalIDs)
	}
	refs := 0
	for _, r := range s.Switches {
		for _, p := range r.Ports {
			refs++
			if !seen[p] {
				t.Errorf("switch %s refers to missing port %s", r.Name, p)
			}
		}
	}
	for _, r := range s.Routers {
		for _, list := range [][]string{r.Ports, r.StaticRoutes, r.Policies, r.Nat} {
			for _, k := range list {
				refs++
				if !seen[k] {
					t.Errorf("router %s refers to missing row %s", r.Name, k)
				}
			}
		}
	}
	if refs == 0 {
		t.Fatal("no references checked")
	}
}

func TestBadInputIsContainedToItsNetwork(t *testing.T) {
	t.Run("local node without a subnet of one network", func(t *testing.T) {
		st := topologytest.Layer3()
		delete(st.Nodes[0].Subnets, "cluster_udn_blue")
		res, err := Compile(st, "node1")
		if err != nil {
			t.Fatal(err)
		}
		if err := res.NotCompiled["cluster_udn_blue"]; err == nil || !strings.Contains(err.Error(), "node1 has no subnet of network cluster_udn_blue") {
			t.Errorf("blue: %v", err)
		}
		if _, failed := res.NotCompiled["default"]; failed || rows.NewIndex(res.Rows).Router("ovn_cluster_router") == nil {
			t.Errorf("the default network must still compile: %v", res.NotCompiled)
		}
		for _, r := range res.Rows.Routers {
			if r.ExternalIDs[rows.NetworkKey] == "cluster_udn_blue" {
				t.Errorf("half of blue was emitted: %s", r.Name)
			}
		}
	})
	t.Run("remote node without a subnet", func(t *testing.T) {
		st := topologytest.Layer3()
		delete(st.Nodes[2].Subnets, "cluster_udn_blue")
		res, err := Compile(st, "node1")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NotCompiled) != 0 || !containsText(res.Warnings, "node3 has no subnet yet") {
			t.Errorf("not compiled %v, warnings %v", res.NotCompiled, res.Warnings)
		}
	})
	t.Run("layer2 network without its transit router key", func(t *testing.T) {
		st := topologytest.OKEP5094()
		st.Networks[0].TunnelKeys = st.Networks[0].TunnelKeys[:1]
		res, _ := Compile(st, "ovn-worker")
		if err := res.NotCompiled[st.Networks[0].Name]; err == nil || !strings.Contains(err.Error(), "needs 2 tunnel keys") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("layer2 transit subnet overlapping the network", func(t *testing.T) {
		st := topologytest.OKEP5094()
		st.Networks[0].Subnets = []cluster.Subnet{{CIDR: netip.MustParsePrefix("100.88.0.0/16")}}
		res, _ := Compile(st, "ovn-worker")
		if err := res.NotCompiled[st.Networks[0].Name]; err == nil || !strings.Contains(err.Error(), "overlaps subnet 100.88.0.0/16") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("node without gateway configuration", func(t *testing.T) {
		st := topologytest.Layer3()
		st.Nodes[1].Gateway = cluster.Gateway{}
		res, _ := Compile(st, "node2")
		if len(res.NotCompiled) != 2 || !strings.Contains(res.NotCompiled["default"].Error(), "k8s.ovn.org/l3-gateway-config") {
			t.Errorf("got %v", res.NotCompiled)
		}
	})
	t.Run("pod with a bad MAC", func(t *testing.T) {
		st := topologytest.Layer3()
		iface := st.Pods[0].Networks["default"]
		iface.MAC = "zz"
		st.Pods[0].Networks["default"] = iface
		res, _ := Compile(st, "node1")
		if len(res.NotCompiled) != 0 || !containsText(res.Warnings, `MAC "zz"`) {
			t.Errorf("not compiled %v, warnings %v", res.NotCompiled, res.Warnings)
		}
		if rows.NewIndex(res.Rows).SwitchPorts["LSP:blue.blue_blue_web"] == nil {
			t.Error("the pod's port on its other network must remain")
		}
	})
	t.Run("unknown node", func(t *testing.T) {
		if _, err := Compile(topologytest.Layer3(), "node9"); !errors.Is(err, ErrNodeNotReady) || !strings.Contains(err.Error(), `"node9"`) {
			t.Errorf("got %v", err)
		}
	})
}

func containsText(list []string, s string) bool {
	for _, l := range list {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
