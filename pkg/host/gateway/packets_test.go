package gateway

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/host/openflow"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/test/testenv"
)

const (
	nodeIP     = "172.18.0.2"
	outsideIP  = "172.18.0.1"
	nodeIP6    = "fd00:18::2"
	outsideIP6 = "fd00:18::1"
	nodeMAC    = "0a:58:ac:12:00:02" // br-ex's, and the GR's
	outsideMAC = "02:00:ac:12:00:01"
	nicPort    = 1 // the underlay veth on br-ex
	grPort     = 2 // the veth standing in for the default network's patch port
	// Source port ranges of the two clients. The host and the GR share one IP, so one
	// port picked by both would be one connection to conntrack in CTZone; the ranges
	// keep the test clear of that (in a cluster the GR's SNAT picks its ports).
	grPorts   = "41000-41099"
	hostPorts = "42000-42099"
	// The connections made alone use ports of their own, so that the pair's never
	// reuse a 4-tuple the server and conntrack still remember.
	grAlonePorts   = "41100-41199"
	hostAlonePorts = "42100-42199"
)

// server answers HTTP on outside: "/pair" is held until a second "/pair" arrives, then
// each is told the other's source port, which shows both connections were open at once;
// anything else is answered at once with the client's port. It listens on both
// families (IPv4 arrives as mapped addresses). A connection the client's
// side reset (as the host does to replies meant for the GR) is dropped, not fatal.
const server = `import socket
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 8080))
s.listen(8)
def answer(c, body):
    try:
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    except OSError:
        pass
    c.close()
waiting = None
while True:
    c, a = s.accept()
    try:
        req = c.recv(4096)
    except OSError:
        c.close()
        continue
    if b" /pair " not in req:
        answer(c, b"hello port %d\n" % a[1])
    elif waiting is None:
        waiting = (c, a)
    else:
        w, wa = waiting
        waiting = None
        answer(w, b"paired with port %d\n" % a[1])
        answer(c, b"paired with port %d\n" % wa[1])
`

// lab is a node with br-ex, the outside world on its NIC, and a GR stand-in.
type lab struct {
	node, outside, gr *testenv.Netns
	grIf              string // the GR's interface, in gr
	ovs               *testenv.OVS
	srv               *testenv.Process
}

// newLab builds the shared-gateway situation: in node, br-ex (netdev) holds nodeIP,
// nodeIP6 and nodeMAC on LOCAL, the NIC (a veth to outside) is port 1, and port 2 is a
// veth to gr, which holds the same IPs and MAC: a GR behind a patch port, without OVN.
// Both kernels would find the shared IPv6 address a duplicate; testenv's namespaces
// skip duplicate address detection (a real GR lives in OVN and runs none).
func newLab(ctx context.Context, t *testing.T) *lab {
	t.Helper()
	testenv.NeedRoot(t, "network namespaces and OVS")
	testenv.NeedBinaries(t, "ip", "ping", "python3", "curl")
	testenv.NeedOVN(t)
	l := &lab{node: testenv.NewNetns(t), outside: testenv.NewNetns(t), gr: testenv.NewNetns(t)}
	nic := testenv.Connect(t, l.node, netip.Prefix{}, l.outside, netip.MustParsePrefix(outsideIP+"/16"))
	grLink := testenv.Connect(t, l.node, netip.Prefix{}, l.gr, netip.Prefix{})
	l.grIf = grLink.BName
	// TSO before vswitchd starts, or TCP through the userspace datapath fails on
	// checksums (docs/testing.md).
	l.ovs = testenv.StartOVSInNetns(t, l.node, map[string]string{"userspace-tso-enable": "true"})
	if _, err := l.ovs.VSCtl(ctx,
		"add-br", "br-ex", "--", "set", "Bridge", "br-ex", "datapath_type=netdev", "other_config:hwaddr="+nodeMAC,
		"--", "add-port", "br-ex", nic.AName, "--", "set", "Interface", nic.AName, fmt.Sprintf("ofport_request=%d", nicPort),
		"--", "add-port", "br-ex", grLink.AName, "--", "set", "Interface", grLink.AName, fmt.Sprintf("ofport_request=%d", grPort),
	); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ns   *testenv.Netns
		args []string
	}{
		// arp off: the node's kernel must not answer ARP for nodeIP on the veths with
		// their own MACs (DATAPLANE.md); they are only OVS's ports.
		{l.node, []string{"link", "set", nic.AName, "arp", "off"}},
		{l.node, []string{"link", "set", grLink.AName, "arp", "off"}},
		{l.node, []string{"link", "set", "br-ex", "address", nodeMAC}},
		{l.node, []string{"addr", "add", nodeIP + "/16", "dev", "br-ex"}},
		{l.node, []string{"addr", "add", nodeIP6 + "/64", "dev", "br-ex"}},
		{l.node, []string{"link", "set", "br-ex", "up"}},
		{l.outside, []string{"link", "set", nic.BName, "address", outsideMAC}},
		{l.outside, []string{"addr", "add", outsideIP6 + "/64", "dev", nic.BName}},
		{l.gr, []string{"link", "set", grLink.BName, "address", nodeMAC}},
		{l.gr, []string{"addr", "add", nodeIP + "/16", "dev", grLink.BName}},
		{l.gr, []string{"addr", "add", nodeIP6 + "/64", "dev", grLink.BName}},
	} {
		if _, err := c.ns.IP(ctx, c.args...); err != nil {
			t.Fatal(err)
		}
	}
	l.srv = testenv.StartProcess(t, t.TempDir(), "tcp-server", nil, "ip", "netns", "exec", l.outside.Name, "python3", "-c", server)
	t.Cleanup(func() {
		if t.Failed() {
			c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := l.ovs.Bridge("br-ex").OFCtl(c, "dump-flows", "--no-names")
			t.Logf("br-ex flows (%v):\n%s", err, out)
			out, err = l.ovs.AppCtl(c, "dpctl/dump-flows")
			t.Logf("datapath flows (%v):\n%s", err, out)
		}
	})
	return l
}

// get fetches path from the server at host (outsideIP or [outsideIP6]) from ns, from
// a source port in ports.
func (l *lab) get(ctx context.Context, ns *testenv.Netns, host, ports, path string) (string, error) {
	if exited, err := l.srv.Exited(); exited {
		return "", poll.Stop(fmt.Errorf("the server in outside exited: %v\n%s", err, l.srv.LogTail(10)))
	}
	return ns.Exec(ctx, "curl", "-sS", "--max-time", "3", "--local-port", ports, "http://"+host+":8080"+path)
}

// snmp reads one counter of /proc/net/snmp in ns, such as Tcp OutRsts (TCP's counters
// count both families).
func snmp(ctx context.Context, t *testing.T, ns *testenv.Netns, group, counter string) int {
	t.Helper()
	out, err := ns.Exec(ctx, "cat", "/proc/net/snmp", "/proc/net/snmp6")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if group == "" {
		// /proc/net/snmp6 has a counter a line: "Icmp6InEchos 3".
		for _, line := range lines {
			if f := strings.Fields(line); len(f) == 2 && f[0] == counter {
				n, err := strconv.Atoi(f[1])
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	for i := 0; i+1 < len(lines); i++ {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != group+":" || len(values) != len(names) {
			continue
		}
		if j := slices.Index(names, counter); j > 0 {
			n, err := strconv.Atoi(values[j])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s %s in /proc/net/snmp of %s", group, counter, ns.Name)
	return 0
}

// family is one address family of the lab, as the checks need it.
type family struct {
	name      string
	node      string // the node's (and the GR's) address
	server    string // the server's address as curl's URL has it
	ping      []string
	echoGroup string // /proc/net/snmp group ("" for /proc/net/snmp6)
	echoCount string
}

var families4and6 = []family{
	{name: "IPv4", node: nodeIP, server: outsideIP, ping: []string{"ping", "-4"}, echoGroup: "Icmp", echoCount: "InEchos"},
	{name: "IPv6", node: nodeIP6, server: "[" + outsideIP6 + "]", ping: []string{"ping", "-6"}, echoCount: "Icmp6InEchos"},
}

// TestSharedGatewayPackets shows with real packets that the flows let the host and a
// GR share one IP and MAC: (d) without them a GR's TCP replies go to the host, which
// resets the connection; with them, in each family, (a) the host answers pings from
// outside, (b) a GR's TCP connection and (c) the host's run at the same time and each
// gets its replies. The GR resolves the server's address itself each time (ARP, and
// IPv6 neighbour discovery), which needs the flows' flooding from the NIC.
func TestSharedGatewayPackets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	l := newLab(ctx, t)
	t.Logf("lab up in %v", time.Since(start))

	// (d) Only the bridge's NORMAL flow. Its MAC table learns nodeMAC from whoever sent
	// last, which would make the outcome a race; pin it to LOCAL, as on a node whose
	// host talks all the time, so the server's SYN-ACK to the GR reaches the host.
	if _, err := l.ovs.AppCtl(ctx, "fdb/add", "br-ex", "br-ex", "0", nodeMAC); err != nil {
		t.Fatal(err)
	}
	var body string
	if err := testenv.Eventually(ctx, 15*time.Second, "the host to reach the server through NORMAL", func(ctx context.Context) error {
		var err error
		body, err = l.get(ctx, l.node, outsideIP, hostAlonePorts, "/")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("host, NORMAL only: %q", body)
	// The GR's ARP reply would also go to the host; give it the neighbour, so that what
	// fails below is the TCP reply and nothing else.
	if _, err := l.gr.IP(ctx, "neigh", "replace", outsideIP, "lladdr", outsideMAC, "dev", l.grIf, "nud", "permanent"); err != nil {
		t.Fatal(err)
	}
	rsts := snmp(ctx, t, l.node, "Tcp", "OutRsts")
	if out, err := l.get(ctx, l.gr, outsideIP, grAlonePorts, "/"); err == nil {
		t.Errorf("(d) the GR reached the server with only NORMAL on br-ex (%q): the test cannot show the flows matter", out)
	}
	if n := snmp(ctx, t, l.node, "Tcp", "OutRsts"); n <= rsts {
		t.Errorf("(d) the host sent no TCP reset (OutRsts %d, was %d): the GR's connection failed for another reason", n, rsts)
	} else {
		t.Logf("(d) NORMAL only: the GR's connection failed, the host reset it %d times", n-rsts)
	}
	if _, err := l.gr.IP(ctx, "neigh", "del", outsideIP, "dev", l.grIf); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ovs.AppCtl(ctx, "fdb/del", "br-ex", "0", nodeMAC); err != nil {
		t.Fatal(err)
	}

	// Our flows.
	flows, err := SharedFlows(Config{NIC: nicPort, IPv4: true, IPv6: true,
		Patches: []Patch{{Network: "default", OFPort: grPort, CTMark: DefaultNetworkCTMark}}})
	if err != nil {
		t.Fatal(err)
	}
	// The OVN root's ovs-ofctl, whatever the host has on PATH.
	prog, err := testenv.NeedOVN(t).Program("ovs-ofctl")
	if err != nil {
		t.Fatal(err)
	}
	of := &openflow.OFCtl{Program: prog, RunDir: l.ovs.Dir()}
	if changed, err := of.Sync(ctx, "br-ex", Cookie, flows); err != nil || !changed {
		t.Fatalf("Sync: changed=%v err=%v", changed, err)
	}
	if changed, err := of.Sync(ctx, "br-ex", Cookie, flows); err != nil || changed {
		t.Fatalf("repeated Sync: changed=%v err=%v, want no change", changed, err)
	}
	dumped, err := of.Flows(ctx, "br-ex", Cookie)
	if err != nil {
		t.Fatal(err)
	}
	want := render(flows)
	slices.Sort(want)
	slices.Sort(dumped)
	if !slices.Equal(dumped, want) {
		t.Errorf("br-ex dumps our flows as\n%s\nwant (SharedFlows' own text)\n%s", strings.Join(dumped, "\n"), strings.Join(want, "\n"))
	}
	for _, fam := range families4and6 {
		checkFamily(ctx, t, l, fam)
	}
	traceFlows(ctx, t, l)
}

// checkFamily runs (a), (b) and (c) in one address family.
func checkFamily(ctx context.Context, t *testing.T, l *lab, fam family) {
	attempts := 0
	var body string
	// Polled: the first packets after a Sync may still meet datapath flows cached from
	// before it, until the revalidators catch up.
	if err := testenv.Eventually(ctx, 10*time.Second, fam.name+": the GR to reach the server", func(ctx context.Context) error {
		attempts++
		var err error
		body, err = l.get(ctx, l.gr, fam.server, grAlonePorts, "/")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (b) GR alone: %q at attempt %d", fam.name, body, attempts)

	// (a) outside pings the node; the host answers, the GR never sees the requests.
	hostEchos, grEchos := snmp(ctx, t, l.node, fam.echoGroup, fam.echoCount), snmp(ctx, t, l.gr, fam.echoGroup, fam.echoCount)
	if out, err := l.outside.Exec(ctx, append(fam.ping, "-n", "-c", "3", "-i", "0.2", "-w", "5", fam.node)...); err != nil {
		t.Errorf("%s (a) ping %s from outside: %v\n%s", fam.name, fam.node, err, out)
	}
	if n := snmp(ctx, t, l.node, fam.echoGroup, fam.echoCount) - hostEchos; n != 3 {
		t.Errorf("%s (a) the host got %d echo requests, want 3", fam.name, n)
	}
	if n := snmp(ctx, t, l.gr, fam.echoGroup, fam.echoCount) - grEchos; n != 0 {
		t.Errorf("%s (a) the GR got %d echo requests, want 0: new connections from outside are the host's", fam.name, n)
	}

	// (b) and (c) at once: each held by the server until the other arrives.
	rsts := snmp(ctx, t, l.node, "Tcp", "OutRsts")
	var wg sync.WaitGroup
	var grBody, hostBody string
	var grErr, hostErr error
	wg.Go(func() { grBody, grErr = l.get(ctx, l.gr, fam.server, grPorts, "/pair") })
	wg.Go(func() { hostBody, hostErr = l.get(ctx, l.node, fam.server, hostPorts, "/pair") })
	wg.Wait()
	if grErr != nil || !strings.HasPrefix(grBody, "paired with port 420") {
		t.Errorf("%s (b) the GR's connection: %q, %v; want to be paired with the host's (port %s)", fam.name, grBody, grErr, hostPorts)
	}
	if hostErr != nil || !strings.HasPrefix(hostBody, "paired with port 410") {
		t.Errorf("%s (c) the host's connection: %q, %v; want to be paired with the GR's (port %s)", fam.name, hostBody, hostErr, grPorts)
	}
	if n := snmp(ctx, t, l.node, "Tcp", "OutRsts"); n != rsts {
		t.Errorf("%s: the host sent %d TCP resets during (b) and (c): some of the GR's replies reached it", fam.name, n-rsts)
	}
	t.Logf("%s (b) GR: %q; (c) host: %q", fam.name, grBody, hostBody)
}

// traceFlows runs ofproto/trace on a packet of the GR going out and on its reply
// coming in, and checks that our flows took them.
func traceFlows(ctx context.Context, t *testing.T, l *lab) {
	t.Helper()
	for _, c := range []struct {
		what  string
		flow  string
		args  []string
		wants []string
	}{
		{
			what: "the GR's SYN going out",
			flow: fmt.Sprintf("in_port=%d,tcp,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s,tp_src=41000,tp_dst=8080", grPort, nodeMAC, outsideMAC, nodeIP, outsideIP),
			wants: []string{
				"ip,in_port=2, priority 100, cookie 0xdeff105",
				"ct(commit,zone=64000,exec(set_field:0x1->ct_mark))",
				"ct(commit,zone=64000,mark=0x1/0xffffffff)",
			},
		},
		{
			what: "the server's reply coming in, conntrack saying it is the GR's",
			flow: fmt.Sprintf("in_port=%d,ct_mark=1,tcp,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s,tp_src=8080,tp_dst=41000", nicPort, outsideMAC, nodeMAC, outsideIP, nodeIP),
			args: []string{"--ct-next", "trk,est"},
			wants: []string{
				"ip,in_port=1, priority 100, cookie 0xdeff105",
				"ct(table=1,zone=64000,nat)",
				"ct_state=+est+trk,ct_mark=0x1, priority 100, cookie 0xdeff105",
				"output:2",
			},
		},
	} {
		out, err := l.ovs.AppCtl(ctx, append([]string{"ofproto/trace", "br-ex", c.flow}, c.args...)...)
		if err != nil {
			t.Errorf("trace %s: %v", c.what, err)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(out, w) {
				t.Errorf("trace of %s does not show %q:\n%s", c.what, w, out)
			}
		}
		t.Logf("trace of %s:\n%s", c.what, out)
	}
}
