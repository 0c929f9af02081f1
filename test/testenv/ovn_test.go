package testenv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/test/testenv"
)

// lan is a logical switch with one VM port and one port patched to a router port.
type lan struct {
	name    string
	cidr    string // router address with prefix, e.g. 10.0.1.1/24
	routerM string // router port MAC
	vmIP    string
	vmMAC   string
}

func (l lan) vmPort() string     { return l.name + "-vm" }
func (l lan) routerPort() string { return "rtos-" + l.name }

// topology builds, as one list of operations, the switches of lans, each attached to
// the router that owns it, and the routers with their extra ports and routes.
type topology struct {
	c       client.Client
	ops     []ovsdb.Operation
	routers map[string]*nbdb.LogicalRouter
}

func newTopology(c client.Client) *topology {
	return &topology{c: c, routers: map[string]*nbdb.LogicalRouter{}}
}

func (tp *topology) add(models ...model.Model) error {
	for _, m := range models { // Create takes rows of one table at a time
		ops, err := tp.c.Create(m)
		if err != nil {
			return err
		}
		tp.ops = append(tp.ops, ops...)
	}
	return nil
}

func (tp *topology) router(name string) *nbdb.LogicalRouter {
	if r, ok := tp.routers[name]; ok {
		return r
	}
	r := &nbdb.LogicalRouter{UUID: "lr_" + strings.ReplaceAll(name, "-", "_"), Name: name}
	tp.routers[name] = r
	return r
}

func (tp *topology) routerPort(router, name, mac, network, peer string) error {
	uuid := "lrp_" + strings.ReplaceAll(name, "-", "_")
	lrp := &nbdb.LogicalRouterPort{UUID: uuid, Name: name, MAC: mac, Networks: []string{network}}
	if peer != "" {
		lrp.Peer = &peer
	}
	r := tp.router(router)
	r.Ports = append(r.Ports, uuid)
	return tp.add(lrp)
}

func (tp *topology) route(router, prefix, nexthop string) error {
	uuid := fmt.Sprintf("route_%d", len(tp.ops))
	r := tp.router(router)
	r.StaticRoutes = append(r.StaticRoutes, uuid)
	return tp.add(&nbdb.LogicalRouterStaticRoute{UUID: uuid, IPPrefix: prefix, Nexthop: nexthop})
}

func (tp *topology) lan(router string, l lan) error {
	if err := tp.routerPort(router, l.routerPort(), l.routerM, l.cidr, ""); err != nil {
		return err
	}
	vm := &nbdb.LogicalSwitchPort{UUID: "vm_" + l.name, Name: l.vmPort(), Addresses: []string{l.vmMAC + " " + l.vmIP}}
	stor := &nbdb.LogicalSwitchPort{
		UUID: "stor_" + l.name, Name: "stor-" + l.name, Type: "router",
		Addresses: []string{"router"}, Options: map[string]string{"router-port": l.routerPort()},
	}
	ls := &nbdb.LogicalSwitch{Name: l.name, Ports: []string{vm.UUID, stor.UUID}}
	return tp.add(vm, stor, ls)
}

func (tp *topology) commit(ctx context.Context) error {
	for _, r := range tp.routers {
		if err := tp.add(r); err != nil {
			return err
		}
	}
	_, err := ovn.Transact(ctx, tp.c, tp.ops)
	return err
}

var (
	lan1 = lan{name: "ls1", cidr: "10.0.1.1/24", routerM: "0a:58:0a:00:01:01", vmIP: "10.0.1.5", vmMAC: "0a:58:0a:00:01:05"}
	lan2 = lan{name: "ls2", cidr: "10.0.2.1/24", routerM: "0a:58:0a:00:02:01", vmIP: "10.0.2.5", vmMAC: "0a:58:0a:00:02:05"}
)

// ping is the microflow of a packet from a VM of src to dstIP, entering src's switch.
func ping(src lan, dstIP string) string {
	return fmt.Sprintf(`inport == "%s" && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && icmp4.type == 8`,
		src.vmPort(), src.vmMAC, src.routerM, src.vmIP, dstIP)
}

func startOVN(t *testing.T) (*testenv.Northd, client.Client) {
	t.Helper()
	nb := testenv.StartNB(t)
	northd := testenv.StartNorthd(t, nb)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return northd, c
}

func TestOVNTraceDeliversAcrossRouter(t *testing.T) {
	northd, c := startOVN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	tp := newTopology(c)
	for _, l := range []lan{lan1, lan2} {
		if err := tp.lan("lr0", l); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.commit(ctx); err != nil {
		t.Fatal(err)
	}

	res, err := northd.Trace(ctx, "ls1", ping(lan1, lan2.vmIP))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalPort() != lan2.vmPort() {
		t.Fatalf("packet to %s ended at %q, want %s:\n%s", lan2.vmIP, res.FinalPort(), lan2.vmPort(), res.Output)
	}
	res, err = northd.Trace(ctx, "ls1", ping(lan1, "10.0.9.9"))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalPort() == lan2.vmPort() || !res.Dropped {
		t.Errorf("packet to an unrouted address was not dropped (ports %v):\n%s", res.OutputPorts, res.Output)
	}
}

// TestNorthdCompilesPeerConnectedRouters joins two routers directly, port to port with
// `peer`, as transit and connect routers are joined, and traces a packet through both.
func TestNorthdCompilesPeerConnectedRouters(t *testing.T) {
	northd, c := startOVN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	tp := newTopology(c)
	steps := []error{
		tp.lan("lr1", lan1),
		tp.lan("lr2", lan2),
		tp.routerPort("lr1", "lr1-to-lr2", "0a:58:64:40:00:00", "100.64.0.0/31", "lr2-to-lr1"),
		tp.routerPort("lr2", "lr2-to-lr1", "0a:58:64:40:00:01", "100.64.0.1/31", "lr1-to-lr2"),
		tp.route("lr1", "10.0.2.0/24", "100.64.0.1"),
		tp.route("lr2", "10.0.1.0/24", "100.64.0.0"),
		tp.commit(ctx),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}

	res, err := northd.Trace(ctx, "ls1", ping(lan1, lan2.vmIP))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalPort() != lan2.vmPort() {
		t.Fatalf("packet ended at %q, want %s:\n%s", res.FinalPort(), lan2.vmPort(), res.Output)
	}
	for _, hop := range []string{`"lr1-to-lr2"`, `"lr2-to-lr1"`} {
		if !strings.Contains(res.Output, hop) {
			t.Errorf("trace does not cross peer port %s:\n%s", hop, res.Output)
		}
	}
	// The reply comes back the same way.
	res, err = northd.Trace(ctx, "ls2", ping(lan2, lan1.vmIP))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalPort() != lan1.vmPort() {
		t.Errorf("reply ended at %q, want %s:\n%s", res.FinalPort(), lan1.vmPort(), res.Output)
	}
}
