// Package dataplane runs real packets through the rows ovnk compiles: every simulated
// node is a network namespace with its own OVS (userspace datapath), NB, SB, northd and
// ovn-controller, one OVN zone per node as OVN-Kubernetes runs them, joined by Geneve
// over a veth underlay. docs/testing.md has the recipe and what each step is for.
package dataplane_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/agent/host"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/host/openflow"
	"github.com/ovnk/ovnk/pkg/host/sbchassis"
	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/test/testenv"
)

// node is one simulated Kubernetes node: its own OVN zone and OVS.
type node struct {
	name    string
	ns      *testenv.Netns
	ovs     *testenv.OVS
	nb      *testenv.NB
	northd  *testenv.Northd
	ctl     *testenv.Process
	ctlSock string
	agent   *host.Node // the agent's own part, run here as a library
	gw      cluster.Gateway
	outside *testenv.Netns // the outside world's host, beyond the underlay's router
}

func nodeOf(st *cluster.State, name string) *cluster.Node {
	for _, n := range st.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// gatewayBridge is the fixtures' external bridge (kind's name for br-ex).
const gatewayBridge = "breth0"

// startNode brings up node name of st inside ns, whose underlay veth is uplink. The
// test does what a node's installer does (br-ex with the NIC, the node's addresses and
// default routes, OVS's system-id) and starts the node's daemons; everything else is
// the agent's own code (package agent/host): it reads the node's facts, which must be
// what st says the node publishes, points ovn-controller at the zone, writes the remote
// chassis, and — once the zone is in the NB — plugs the management ports and programs
// br-ex.
func startNode(ctx context.Context, t *testing.T, st *cluster.State, name string, ns *testenv.Netns, uplink string) *node {
	t.Helper()
	cn := nodeOf(st, name)
	n := &node{name: name, ns: ns, gw: cn.Gateway}

	// The zone's databases and northd. Unix sockets do not care about network namespaces.
	n.nb = testenv.StartNB(t)
	n.northd = testenv.StartNorthd(t, n.nb)

	// The installer's part. TSO must be on before vswitchd starts, or TCP across zones
	// fails on checksums.
	n.ovs = testenv.StartOVSInNetns(t, ns, map[string]string{"userspace-tso-enable": "true"})
	// br-ex holds the node address and the underlay port: userspace tunnelling needs the
	// tunnel endpoint address on an OVS bridge.
	if _, err := n.ovs.VSCtl(ctx,
		"add-br", gatewayBridge, "--", "set", "Bridge", gatewayBridge, "datapath_type=netdev", "other_config:hwaddr="+n.gw.MAC,
		"--", "add-port", gatewayBridge, uplink,
		"--", "set", "Open_vSwitch", ".", "external_ids:system-id="+cn.ChassisID,
	); err != nil {
		t.Fatalf("%s bridges: %v", name, err)
	}
	// arp off: the kernel must not answer ARP for the node address on the veth with the
	// veth's MAC, or Geneve packets could miss br-ex.
	cmds := [][]string{
		{"link", "set", uplink, "arp", "off"},
		{"link", "set", gatewayBridge, "address", n.gw.MAC},
	}
	for _, a := range n.gw.IPs {
		cmds = append(cmds, []string{"addr", "add", a.String(), "dev", gatewayBridge})
	}
	cmds = append(cmds, []string{"link", "set", gatewayBridge, "up"})
	for _, nh := range n.gw.NextHops {
		cmds = append(cmds, []string{"route", "add", "default", "via", nh.String(), "dev", gatewayBridge})
	}
	for _, args := range cmds {
		if _, err := ns.IP(ctx, args...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// The first packet to a tunnel peer is lost while OVS resolves its MAC: seed it.
	// (The agent does not do this yet.)
	for _, o := range st.Nodes {
		if o.Name == name {
			continue
		}
		if _, err := n.ovs.AppCtl(ctx, "tnl/neigh/set", gatewayBridge, o.Gateway.IPs[0].Addr().String(), o.Gateway.MAC); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// The agent's part.
	root := testenv.NeedOVN(t)
	ofctl, err := root.Program("ovs-ofctl")
	if err != nil {
		t.Fatal(err)
	}
	n.agent = &host.Node{
		Name: name, GatewayBridge: gatewayBridge, IntegrationBridge: "br-int", DatapathType: "netdev",
		SBEndpoints: []string{n.northd.SB.Endpoint},
		Open: func(ctx context.Context) (*host.Clients, error) {
			links, err := netconf.Open(ns.Name)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { links.Close() })
			ovs, err := vswitch.Connect(ctx, n.ovs.DB.Endpoint)
			if err != nil {
				return nil, err
			}
			t.Cleanup(ovs.Close)
			sb, err := sbchassis.Connect(ctx, []string{n.northd.SB.Endpoint})
			if err != nil {
				return nil, err
			}
			t.Cleanup(sb.Close)
			return &host.Clients{OVS: ovs, SB: sb, Links: links, Flows: &openflow.OFCtl{Program: ofctl, RunDir: n.ovs.Dir()}}, nil
		},
	}
	published, err := n.agent.Publish(ctx)
	if err != nil {
		t.Fatalf("%s: the agent reads the node: %v", name, err)
	}
	requirePublishes(t, cn, published)
	// Remote chassis before any remote port names them.
	if err := n.agent.BeforeZone(ctx, st); err != nil {
		t.Fatalf("%s: remote chassis: %v", name, err)
	}
	res, err := topology.Compile(st, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCompiled) > 0 {
		t.Fatalf("%s: not compiled: %v", name, res.NotCompiled)
	}
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{n.nb.Endpoint}, LeaderOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if _, err := (&ovn.Reconciler{Client: c}).Reconcile(ctx, res.Rows, nil); err != nil {
		t.Fatalf("write %s's zone: %v", name, err)
	}

	prog, err := root.Program("ovn-controller")
	if err != nil {
		t.Fatal(err)
	}
	dir := n.ovs.Dir()
	n.ctlSock = filepath.Join(dir, "ovn-controller.ctl")
	n.ctl = testenv.StartProcess(t, dir, "ovn-controller", n.ovs.Env(),
		"ip", "netns", "exec", ns.Name, prog, n.ovs.DB.Endpoint,
		"--unixctl="+n.ctlSock,
		"--pidfile="+filepath.Join(dir, "ovn-controller.pid"),
		"--log-file="+filepath.Join(dir, "ovn-controller.vlog"),
	)
	// Management ports and br-ex's flows; the flows wait for the gateway routers'
	// patch ports, which ovn-controller makes from the zone.
	// (Longer than the agent's own patience with ovn-controller, 30 s.)
	err = testenv.Eventually(ctx, 40*time.Second, name+"'s management ports and gateway flows", func(ctx context.Context) error {
		retry, err := n.agent.AfterZone(ctx, st, func(string) bool { return false })
		if err == nil && retry {
			err = errors.New("a gateway router's patch port is not there yet")
		}
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// requirePublishes checks that what the agent read from the node is what st says the
// node publishes: the compiled zones rest on it.
func requirePublishes(t *testing.T, cn *cluster.Node, published map[string]string) {
	t.Helper()
	ref := cluster.ObjectRef{Kind: "Node", Name: cn.Name}
	gw, err := cluster.L3GatewayConfigCodec.Parse(ref, published[cluster.AnnotationL3GatewayConfig])
	if err != nil {
		t.Fatal(err)
	}
	want := cn.Gateway
	if gw.Mode != want.Mode || gw.InterfaceID != want.InterfaceID || gw.MAC != want.MAC ||
		fmt.Sprint(gw.IPs) != fmt.Sprint(want.IPs) || fmt.Sprint(gw.NextHops) != fmt.Sprint(want.NextHops) {
		t.Errorf("%s publishes gateway %+v, want %+v", cn.Name, gw, want)
	}
	if got := published[cluster.AnnotationNodeChassisID]; got != cn.ChassisID {
		t.Errorf("%s publishes chassis %q, want %q", cn.Name, got, cn.ChassisID)
	}
	primary, err := cluster.PrimaryIfAddrCodec.Parse(ref, published[cluster.AnnotationNodePrimaryIfAddr])
	if err != nil || fmt.Sprint(primary) != fmt.Sprint(cn.PrimaryIfAddrs) {
		t.Errorf("%s publishes primary addresses %v (%v), want %v", cn.Name, primary, err, cn.PrimaryIfAddrs)
	}
}

// tool runs a program of the OVN root against this node's run directory.
func (n *node) tool(ctx context.Context, t *testing.T, name string, args ...string) (string, error) {
	p, err := testenv.NeedOVN(t).Program(name)
	if err != nil {
		return "", err
	}
	return n.ns.Exec(ctx, append([]string{"env", "OVS_RUNDIR=" + n.ovs.Dir(), "OVN_RUNDIR=" + n.ovs.Dir(), p}, args...)...)
}

// pod is a namespace wired to br-int as kubelet + CNI would do it.
type pod struct {
	ns  *testenv.Netns
	ip  netip.Prefix
	mac string
}

func (n *node) addPod(ctx context.Context, t *testing.T, lsp string, ifaceIDVer string, ip netip.Prefix, mac string, gw netip.Addr) *pod {
	t.Helper()
	p := &pod{ns: testenv.NewNetns(t), ip: ip, mac: mac}
	v := testenv.Connect(t, n.ns, netip.Prefix{}, p.ns, ip)
	for _, args := range [][]string{
		{"link", "set", v.BName, "address", mac},
		{"link", "set", v.BName, "mtu", "1400"},
		{"route", "add", "default", "via", gw.String(), "dev", v.BName},
	} {
		if _, err := p.ns.IP(ctx, args...); err != nil {
			t.Fatalf("pod %s: %v", lsp, err)
		}
	}
	// The host end is a br-int port only. On the userspace datapath the node's kernel
	// still sees its packets, and would answer the pod's ARP for the node's addresses (a
	// management port's) with the veth's MAC: no ARP there.
	if _, err := n.ns.IP(ctx, "link", "set", v.AName, "arp", "off"); err != nil {
		t.Fatalf("pod %s: %v", lsp, err)
	}
	args := []string{"add-port", "br-int", v.AName, "--", "set", "Interface", v.AName, "external_ids:iface-id=" + lsp}
	if ifaceIDVer != "" {
		args = append(args, "external_ids:iface-id-ver="+ifaceIDVer)
	}
	if _, err := n.ovs.VSCtl(ctx, args...); err != nil {
		t.Fatalf("pod %s: %v", lsp, err)
	}
	return p
}

// ping sends count echo requests and fails unless every one is answered (with both -c
// and -w, ping exits 1 when fewer than count replies arrive by the deadline).
func (p *pod) ping(ctx context.Context, dst netip.Addr, count int) (string, error) {
	return p.ns.Exec(ctx, "ping", "-n", "-c", fmt.Sprint(count), "-w", "5", "-i", "0.2", dst.String())
}

// pingUntil polls single pings until one is answered, and returns how long it took.
func (p *pod) pingUntil(ctx context.Context, t *testing.T, dst netip.Addr, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	attempts := 0
	err := testenv.Eventually(ctx, timeout, fmt.Sprintf("ping %s from %s", dst, p.ip), func(ctx context.Context) error {
		attempts++
		out, err := p.ns.Exec(ctx, "ping", "-n", "-c", "1", "-W", "0.2", dst.String())
		last = out
		return err
	})
	t.Logf("ping %s: answered at attempt %d", dst, attempts)
	if err != nil {
		t.Fatalf("%v\nlast output:\n%s", err, last)
	}
	return time.Since(start)
}

func (n *node) diagnostics(ctx context.Context, t *testing.T) string {
	var b strings.Builder
	for _, c := range [][]string{
		{"ovs-vsctl", "--db=" + n.ovs.DB.Endpoint, "show"},
		{"ovn-sbctl", "--db=" + n.northd.SB.Endpoint, "show"},
		{"ovn-sbctl", "--db=" + n.northd.SB.Endpoint, "list", "MAC_Binding"},
		{"ovs-appctl", "-t", filepath.Join(n.ovs.Dir(), "ovs-vswitchd.ctl"), "tnl/neigh/show"},
		{"ovs-appctl", "-t", filepath.Join(n.ovs.Dir(), "ovs-vswitchd.ctl"), "ovs/route/show"},
	} {
		out, err := n.tool(ctx, t, c[0], c[1:]...)
		fmt.Fprintf(&b, "== %s %s: %s %v\n", n.name, c[0], out, err)
	}
	return b.String()
}

// outsideAddr is the outside world's host: TEST-NET-1, beyond the underlay's router.
var outsideAddr = netip.MustParseAddr("192.0.2.10")

// underlay makes the named namespaces of two nodes and joins them over a bridge in a
// third namespace, which is also the nodes' default router (172.18.0.1 and
// fc00:f853:ccd:e793::1, as the fixtures' next hops) towards an outside host at
// 192.0.2.10. Each node's end is its eth0, with no address: the addresses live on
// br-ex. It returns the nodes' namespaces and the outside host's.
func underlay(ctx context.Context, t *testing.T) (a, b, outside *testenv.Netns) {
	router := testenv.NewNetns(t)
	a, b, outside = testenv.NewNetns(t), testenv.NewNetns(t), testenv.NewNetns(t)
	out := testenv.Connect(t, router, netip.MustParsePrefix("192.0.2.1/24"), outside, netip.MustParsePrefix(outsideAddr.String()+"/24"))
	cmds := [][]string{
		{"link", "add", "br0", "type", "bridge"},
		{"addr", "add", "172.18.0.1/16", "dev", "br0"},
		{"addr", "add", "fc00:f853:ccd:e793::1/64", "dev", "br0"},
		{"link", "set", "br0", "up"},
	}
	for _, n := range []*testenv.Netns{a, b} {
		v := testenv.Connect(t, router, netip.Prefix{}, n, netip.Prefix{})
		cmds = append(cmds, []string{"link", "set", v.AName, "master", "br0"})
	}
	for _, args := range cmds {
		if _, err := router.IP(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := router.Sysctl(ctx, "net.ipv4.ip_forward", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := outside.IP(ctx, "route", "add", "default", "via", "192.0.2.1", "dev", out.BName); err != nil {
		t.Fatal(err)
	}
	return a, b, outside
}

func need(t *testing.T) {
	testenv.NeedRoot(t, "network namespaces and OVS")
	testenv.NeedBinaries(t, "ip", "ping", "python3", "curl")
	testenv.NeedOVN(t)
}

// lab starts two nodes of st, each its own zone, joined by an underlay, and logs both
// zones' state should the test fail. It returns the nodes, the test's context and when
// it started.
func lab(t *testing.T, st *cluster.State, a, b string) (*node, *node, context.Context, time.Time) {
	t.Helper()
	need(t)
	start := time.Now()
	t.Cleanup(func() { t.Logf("torn down; whole test %v", time.Since(start)) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	nsA, nsB, outside := underlay(ctx, t)
	na := startNode(ctx, t, st, a, nsA, "eth0")
	nb := startNode(ctx, t, st, b, nsB, "eth0")
	na.outside, nb.outside = outside, outside
	t.Logf("two zones up: %v", time.Since(start))
	t.Cleanup(func() {
		if t.Failed() {
			c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			t.Log(na.diagnostics(c, t))
			t.Log(nb.diagnostics(c, t))
		}
	})
	return na, nb, ctx, start
}

// firstPing waits for both zones to install their pods' ports, then polls from src to
// dst until one ping is answered, and logs how long each step took.
func firstPing(ctx context.Context, t *testing.T, start time.Time, src, dst *pod, zones ...*node) {
	t.Helper()
	wired := time.Now()
	barrier(ctx, t, zones...)
	took := src.pingUntil(ctx, t, dst.ip.Addr(), 30*time.Second)
	t.Logf("first ping %s → %s answered %v after the pods were wired (%v after the barrier), %v after nothing",
		src.ip.Addr(), dst.ip.Addr(), time.Since(wired), took, time.Since(start))
}

// defaultPods wires the Layer3 fixture's default-network pods: default/client on n1
// (node1) and kube-system/dns on n2 (node2).
func defaultPods(ctx context.Context, t *testing.T, n1, n2 *node) (client, dns *pod) {
	t.Helper()
	client = n1.addPod(ctx, t, "default_client", "8d3e6b1c-2f4a-4b5c-8d6e-7f8091a2b3c4",
		netip.MustParsePrefix("10.244.0.6/24"), "0a:58:0a:f4:00:06", netip.MustParseAddr("10.244.0.1"))
	dns = n2.addPod(ctx, t, "kube-system_dns", "",
		netip.MustParsePrefix("10.244.1.7/24"), "0a:58:0a:f4:01:07", netip.MustParseAddr("10.244.1.1"))
	return client, dns
}

func TestLayer3PingAcrossZones(t *testing.T) {
	n1, n2, ctx, start := lab(t, topologytest.Layer3(), "node1", "node2")
	client, dns := defaultPods(ctx, t, n1, n2)
	firstPing(ctx, t, start, client, dns, n1, n2)
	out, err := client.ping(ctx, dns.ip.Addr(), 3)
	if err != nil {
		t.Fatalf("ping -c 3: %v\n%s", err, out)
	}
	t.Logf("ping -c 3 10.244.1.7 from default/client:\n%s", out)

	srv := serveWhoAmI(t, dns.ns, dns.ip.Addr())
	t.Logf("HTTP server starting at %v", time.Since(start))
	body := get(ctx, t, client.ns, srv, "http://10.244.1.7:8080/")
	if body != "10.244.0.6\n" {
		t.Errorf("TCP across zones: dns saw the client as %q, want 10.244.0.6", body)
	}
	t.Logf("TCP: curl from client got %q (%v after nothing)", body, time.Since(start))
}

// whoAmI answers every HTTP request on port 8080 with the address the connection came
// from, one line: what the server sees is what the test asserts. A few lines of
// python3, not `python3 -m http.server --bind`: that resolves its own name
// (socket.getfqdn), which in a namespace without DNS takes 10 s.
const whoAmI = `import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 8080))
s.listen()
while True:
    c, peer = s.accept()
    c.recv(4096)
    body = (peer[0] + "\n").encode()
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    c.close()
`

// serveWhoAmI starts whoAmI at addr in ns.
func serveWhoAmI(t *testing.T, ns *testenv.Netns, addr netip.Addr) *testenv.Process {
	return testenv.StartProcess(t, t.TempDir(), "whoami-"+addr.String(), nil, "ip", "netns", "exec", ns.Name, "python3", "-c", whoAmI, addr.String())
}

// get fetches url from ns, polling until the server answers, and returns the body.
func get(ctx context.Context, t *testing.T, ns *testenv.Netns, srv *testenv.Process, url string) string {
	t.Helper()
	var body string
	err := testenv.Eventually(ctx, 15*time.Second, "HTTP GET "+url, func(ctx context.Context) error {
		if exited, err := srv.Exited(); exited {
			return poll.Stop(fmt.Errorf("the server exited: %v\n%s", err, srv.LogTail(10)))
		}
		b, err := ns.Exec(ctx, "curl", "-sS", "--max-time", "2", url)
		body = b
		return err
	})
	if err != nil {
		t.Errorf("%v", err)
	}
	return body
}

// TestNodePodAndOutside holds the node's own part to packets: the host reaches pods
// through the default network's management port, and a blue pod from a socket bound to
// blue's port (as through blue's VRF upstream); pods reach the nodes (a blue pod
// through blue's port, whose replies go back by a rule to blue's table), and a pod's connection to the outside world
// leaves through its node's gateway router and br-ex with the node's address, which is
// what the outside host sees — while the node itself, sharing that address, still
// talks to the outside host too.
func TestNodePodAndOutside(t *testing.T) {
	n1, n2, ctx, _ := lab(t, topologytest.Layer3(), "node1", "node2")
	client, dns := defaultPods(ctx, t, n1, n2)
	web := n1.addPod(ctx, t, "blue.blue_blue_web", "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f",
		netip.MustParsePrefix("10.10.0.5/24"), "0a:58:0a:0a:00:05", netip.MustParseAddr("10.10.0.1"))
	barrier(ctx, t, n1, n2)

	pings := []struct {
		what string
		from *testenv.Netns
		to   string
		bind string // the link a socket is bound to, as to a VRF; "" none
	}{
		{"node1 → its blue pod, bound to ovn-k8s-mp2 (blue's VRF upstream; here the oif rule of table 100002)", n1.ns, "10.10.0.5", "ovn-k8s-mp2"},
		{"node1 → its pod (ovn-k8s-mp0)", n1.ns, "10.244.0.6", ""},
		{"node1 → a pod on node2 (ovn-k8s-mp0, transit switch)", n1.ns, "10.244.1.7", ""},
		{"pod → its node", client.ns, "172.18.0.2", ""},
		{"pod → the other node", client.ns, "172.18.0.3", ""},
		{"blue pod → its node", web.ns, "172.18.0.2", ""},
		{"pod → the outside world", client.ns, outsideAddr.String(), ""},
		{"blue pod → the outside world", web.ns, outsideAddr.String(), ""},
		{"node2 → the outside world (sharing its address with its gateway routers)", n2.ns, outsideAddr.String(), ""},
	}
	for _, p := range pings {
		err := testenv.Eventually(ctx, 10*time.Second, p.what, func(ctx context.Context) error {
			argv := []string{"ping", "-n", "-c", "1", "-W", "0.5", p.to}
			if p.bind != "" {
				argv = append(argv, "-I", p.bind)
			}
			_, err := p.from.Exec(ctx, argv...)
			return err
		})
		if err != nil {
			t.Errorf("%s: %v\n%s", p.what, err, p.from.Routes(ctx))
		}
	}

	// The host's own traffic never enters blue, as with upstream's VRF: blue's subnet is
	// not in the main table (the port's addresses carry noprefixroute), so an unbound
	// packet to a blue pod follows the default route out of br-ex.
	if out, err := n1.ns.IP(ctx, "route", "get", "10.10.0.5"); err != nil || !strings.Contains(out, "dev "+gatewayBridge) {
		t.Errorf("node1's route to its blue pod: %q %v, want the default route through %s, not ovn-k8s-mp2", out, err, gatewayBridge)
	}

	// The outside host sees pods' connections from their node's address: the gateway
	// router SNATs them, br-ex steers the replies back by conntrack.
	srv := serveWhoAmI(t, n1.outside, outsideAddr)
	url := "http://" + outsideAddr.String() + ":8080/"
	for _, c := range []struct {
		what string
		from *testenv.Netns
		want string
	}{
		{"default-network pod on node1", client.ns, "172.18.0.2"},
		{"blue pod on node1", web.ns, "172.18.0.2"},
		{"a pod on node2", dns.ns, "172.18.0.3"},
		{"node1 itself", n1.ns, "172.18.0.2"},
	} {
		if got := get(ctx, t, c.from, srv, url); got != c.want+"\n" {
			t.Errorf("the outside host saw the %s as %q, want %s", c.what, got, c.want)
		}
	}
}

// sb runs ovn-sbctl on the node's SB.
func (n *node) sb(ctx context.Context, t *testing.T, args ...string) string {
	out, err := n.northd.SBCtl(ctx, args...)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return out
}

// TestLayer2TransitRouter is OKEP-5094's Layer2 primary UDN with the 25.03 transit
// router on two of its nodes: vm-a on ovn-control-plane, vm-b on ovn-worker.
func TestLayer2TransitRouter(t *testing.T) {
	cp, w, ctx, start := lab(t, topologytest.OKEP5094(), "ovn-control-plane", "ovn-worker")
	gw := netip.MustParseAddr("203.203.0.1")
	vmA := cp.addPod(ctx, t, "test12.namespace.scoped_test12_vm-a", "", netip.MustParsePrefix("203.203.0.3/16"), "0a:58:cb:cb:00:03", gw)
	vmB := w.addPod(ctx, t, "test12.namespace.scoped_test12_vm-b", "", netip.MustParsePrefix("203.203.0.4/16"), "0a:58:cb:cb:00:04", gw)
	firstPing(ctx, t, start, vmA, vmB, cp, w)
	out, err := vmA.ping(ctx, vmB.ip.Addr(), 3)
	if err != nil {
		t.Fatalf("ping -c 3 vm-b: %v\n%s", err, out)
	}
	t.Logf("vm-a → vm-b:\n%s", out)
	if out, err := vmA.ping(ctx, gw, 3); err != nil {
		t.Errorf("vm-a → its gateway %s (the transit router's trtos-, the same on every node): %v\n%s", gw, err, out)
	}

	// Through the transit router to a next hop behind a remote trtor- port: the transit
	// router routes 100.65.0.3/32 (GR_ovn-worker's join address) via 100.88.0.7
	// (GR_ovn-worker's rtotr), which is behind trtor-GR_…_ovn-worker, remote here.
	const trtor = "trtor-GR_test12_namespace.scoped_ovn-worker"
	// (The node's own traffic through its management port teaches the gateway router
	// other bindings meanwhile; only the transit router's matter here.)
	if mb := cp.sb(ctx, t, "--bare", "--columns=ip", "find", "MAC_Binding", "logical_port="+trtor); strings.TrimSpace(mb) != "" {
		t.Fatalf("ovn-control-plane has a MAC binding on %s before any packet crossed the transit router: %s", trtor, mb)
	}
	// The very first packet: the next hop's MAC is unknown, and it must not be lost
	// while the transit router asks for it.
	if out, err := vmA.ns.Exec(ctx, "ping", "-n", "-c", "1", "-W", "2", "100.65.0.3"); err != nil {
		t.Errorf("vm-a → 100.65.0.3, first packet (via 100.88.0.7 behind remote %s): %v\n%s", trtor, err, out)
	}
	if out, err := vmA.ping(ctx, netip.MustParseAddr("100.65.0.3"), 3); err != nil {
		t.Errorf("vm-a → 100.65.0.3 (GR_ovn-worker's join address, via 100.88.0.7 behind remote %s): %v\n%s", trtor, err, out)
	}
	// The sending zone resolved the next hop on its own: the transit router's ARP request
	// went out the remote port through the tunnel, and the reply came back because 25.03's
	// transit router floods ARP replies to every remote chassis (lr_in_lookup_neighbor:
	// flood_remote), where that chassis's ovn-controller learns it into its own SB.
	// No Static_MAC_Binding is needed.
	mb := cp.sb(ctx, t, "--bare", "--columns=logical_port,ip,mac", "find", "MAC_Binding", "logical_port="+trtor)
	if f := strings.Fields(mb); len(f) != 3 || f[1] != "100.88.0.7" || f[2] != "0a:58:64:41:00:03" {
		t.Errorf("ovn-control-plane's SB should have learned 100.88.0.7 (GR_ovn-worker's rtotr, MAC 0a:58:64:41:00:03) on %s; MAC_Binding:\n%s", trtor, mb)
	}
	// GR_ovn-worker's own transit address gets no answer: the reply's source is the
	// upper address of its /31 (100.88.0.6/31), which OVN 25.03 takes for the /31's
	// broadcast address, and the worker's transit router drops it in lr_in_ip_input.
	// Pinned, so a change in OVN shows here (and the trace, which does not model the
	// drop, can be held to it).
	if out, err := vmA.ns.Exec(ctx, "ping", "-n", "-c", "2", "-W", "1", "100.88.0.7"); err == nil {
		t.Errorf("vm-a → 100.88.0.7 was answered; OVN 25.03 drops the reply as /31 broadcast:\n%s", out)
	}
	for _, n := range []*node{cp, w} {
		t.Logf("%s MAC_Binding:\n%s", n.name, n.sb(ctx, t, "--columns=logical_port,ip,mac", "list", "MAC_Binding"))
	}
}

// barrier waits until every zone's ovn-controller has installed what its NB holds
// (`ovn-nbctl --wait=hv sync`); without it the first ping after wiring the pods is lost
// while the ports are being claimed.
func barrier(ctx context.Context, t *testing.T, nodes ...*node) {
	t.Helper()
	start := time.Now()
	for _, n := range nodes {
		if exited, err := n.ctl.Exited(); exited {
			t.Fatalf("%s: ovn-controller exited: %v\n%s", n.name, err, n.ctl.LogTail(20))
		}
		timeout := "20"
		if deadline, ok := ctx.Deadline(); ok {
			timeout = fmt.Sprint(max(1, int(time.Until(deadline).Seconds())))
		}
		if out, err := n.nb.NBCtl(ctx, "--wait=hv", "--timeout="+timeout, "sync"); err != nil {
			t.Fatalf("%s: ovn-nbctl --wait=hv sync: %v %s\n%s", n.name, err, out, n.ctl.LogTail(20))
		}
	}
	t.Logf("--wait=hv sync in %d zones took %v", len(nodes), time.Since(start))
}
