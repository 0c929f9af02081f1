package dataplane_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/topology"
	"github.com/ovnk/ovnk/pkg/topology/topologytest"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/nbtest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestLayer2Migration moves vm-a of OKEP-5094's Layer2 primary network from
// ovn-control-plane to ovn-worker keeping its IP, MAC and UID, as a live migration
// does, while it pings its gateway and vm-b. The gateway is the transit router's trtos-
// port, with the same IP and MAC in every zone, so the VM's neighbour entry stays valid
// and nobody needs to send a gratuitous ARP — and nobody does: every ARP and ND packet
// on both nodes' ports and inside the underlay's Geneve traffic is captured for the
// whole test, and two GARPs sent at the end prove the capture would have seen one.
func TestLayer2Migration(t *testing.T) {
	testenv.NeedBinaries(t, "tcpdump")
	st := topologytest.OKEP5094()
	l2, a, b := st.Networks[0], st.Pods[0], st.Pods[1]
	if a.Name != "vm-a" || b.Name != "vm-b" {
		t.Fatalf("the fixture's pods are %s and %s, want vm-a and vm-b", a.Name, b.Name)
	}
	a.UID = "6c1e2f3a-4b5d-4e6f-8a7b-9c0d1e2f3a4b" // pinned by iface-id-ver on both nodes
	// vm-c stays on ovn-control-plane, so after the move the old node still has a port
	// on the network and a broadcast from ovn-worker still crosses the tunnel.
	c := &cluster.Pod{Namespace: "test12", Name: "vm-c", Node: "ovn-control-plane", Networks: map[string]cluster.PodInterface{
		l2.Name: {IPs: []netip.Prefix{netip.MustParsePrefix("203.203.0.5/16")}, MAC: "0a:58:cb:cb:00:05", Role: "primary", TunnelID: 5},
	}}
	st.Pods = append(st.Pods, c)
	cp, w, ctx, start := lab(t, st, "ovn-control-plane", "ovn-worker")

	// The capture starts before any pod exists and runs until the proof at the end.
	caps := []*capture{startCapture(ctx, t, cp, "any"), startCapture(ctx, t, cp, "eth0"), startCapture(ctx, t, w, "any"), startCapture(ctx, t, w, "eth0")}
	gw := netip.MustParseAddr("203.203.0.1")
	plug := func(n *node, p *cluster.Pod) *pod {
		iface := p.Networks[l2.Name]
		return n.addPod(ctx, t, topology.PodPortName(l2, p), p.UID, iface.IPs[0], iface.MAC, gw)
	}
	vmA, vmB, _ := plug(cp, a), plug(w, b), plug(cp, c)
	// A VM's virtual NIC keeps its link through a live migration. The veth standing in
	// for it loses carrier while its host end changes namespace, and a loss the kernel
	// notices (within about a second) flushes the pod's neighbours: keep them, as a VM.
	for _, key := range []string{"net.ipv4.conf.eth0.arp_evict_nocarrier", "net.ipv6.conf.eth0.ndisc_evict_nocarrier"} {
		if err := vmA.ns.Sysctl(ctx, key, "0"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range caps {
		c.frames(ctx, t) // learns the ports' names, before one leaves
	}
	firstPing(ctx, t, start, vmA, vmB, cp, w)
	vmA.pingUntil(ctx, t, gw, 10*time.Second)

	// The gateway's MAC is one in both zones, and vm-a has learned it.
	mac := func(n *node) string {
		out, err := n.nb.NBCtl(ctx, "get", "Logical_Router_Port", "trtos-test12_namespace.scoped_ovn_layer2_switch", "mac")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Trim(strings.TrimSpace(out), `"`)
	}
	gwMAC := mac(cp)
	if wMAC, before := mac(w), neighMAC(ctx, t, vmA, gw); gwMAC == "" || wMAC != gwMAC || before != gwMAC {
		t.Fatalf("the transit router's trtos- MAC is %q on ovn-control-plane and %q on ovn-worker, vm-a has %s for %s; OKEP-5094 makes them one", gwMAC, wMAC, before, gw)
	}
	pings := []*pinger{startPinger(t, vmA, gw), startPinger(t, vmA, vmB.ip.Addr())}
	for _, p := range pings {
		p.awaitReplies(ctx, t, time.Time{}, 20) // a steady stream before the move
	}

	// The move: the zones learn vm-a's new node, and its port changes br-int.
	moveStart := time.Now()
	a.Node = w.name
	for _, n := range []*node{w, cp} {
		applyZone(ctx, t, st, n)
	}
	lsp := topology.PodPortName(l2, a)
	movePort(ctx, t, cp, w, lsp, a.UID, "vm-a")
	moveDone := time.Now()
	t.Logf("zones rewritten and vm-a's port moved in %v", moveDone.Sub(moveStart))
	for _, p := range pings {
		p.awaitReplies(ctx, t, moveDone, 20) // answered again, and on
	}
	if after := neighMAC(ctx, t, vmA, gw); after != gwMAC {
		t.Errorf("vm-a's gateway MAC changed over the move: %s before, %s after", gwMAC, after)
	}
	for _, p := range pings {
		p.report(t, moveStart, moveDone)
	}
	traceAfterMove(ctx, t, st, []*node{cp, w}, lsp, gw, vmB.ip.Addr())

	// The proof: a GARP for vm-b's own address, which OVN floods (to vm-a and, through
	// the tunnel, to vm-c), and one forging the gateway's, which port security stops.
	proofAt := time.Now()
	for _, ip := range []netip.Addr{vmB.ip.Addr(), gw} {
		if out, err := vmB.ns.Exec(ctx, "python3", "-c", sendGARP, "eth0", vmB.mac, ip.String()); err != nil {
			t.Fatalf("send a GARP for %s from vm-b: %v %s", ip, err, out)
		}
	}
	if err := testenv.Eventually(ctx, 10*time.Second, "the proof GARPs in every capture", func(context.Context) error {
		for i, c := range append(caps, caps[2]) { // vm-b's own GARP everywhere, the forged one at vm-b's port
			ip := []netip.Addr{vmB.ip.Addr(), gw}[i/len(caps)]
			if g := garps(c.frames(ctx, t), ip); len(g) == 0 || g[len(g)-1].at.Before(proofAt) {
				return fmt.Errorf("%s's capture on %s shows no GARP for %s", c.node.name, c.iface, ip)
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	forged := 0
	for _, c := range caps {
		c.proc.Stop()
		frames, where := c.frames(ctx, t), c.node.name+", tcpdump -i "+c.iface
		t.Logf("%s: %s", where, summarize(frames))
		for _, f := range garps(frames, gw) {
			if f.at.Before(proofAt) {
				t.Errorf("%s: a gratuitous ARP for the gateway %s during the test: %s", where, gw, f)
			} else if forged++; c != caps[2] {
				t.Errorf("%s: vm-b's forged GARP for %s passed port security: %s", where, gw, f)
			}
		}
		tunnelled := 0
		for _, f := range frames {
			announced := f.nd == 134 || f.nd == 136 && !f.solicited // an RA, an unsolicited NA
			// vm-a asks by broadcast only without an entry (a stale one is probed by unicast).
			asked := f.op == 1 && f.tpa == gw && f.spa == vmA.ip.Addr() && f.bcast
			if announced && f.at.Before(proofAt) || asked && f.at.After(moveStart) {
				t.Errorf("%s: %s during the test (an announcement, or vm-a lost its gateway's entry)", where, f)
			}
			if strings.HasPrefix(f.link, "vni ") && f.at.Before(moveStart) {
				tunnelled++
			}
		}
		// Trust: the underlay's capture saw vm-a's pings to vm-b cross the tunnel, and
		// the old node's ports' capture saw vm-a learn its gateway, by asking.
		if c.iface == "eth0" && tunnelled < 20 || c == caps[0] && !strings.Contains(summarize(frames), "who-has 203.203.0.1 tell 203.203.0.3") {
			t.Errorf("%s missed traffic before the move: %d Geneve packets while vm-a pinged vm-b across, or vm-a's ARP for its gateway", where, tunnelled)
		}
	}
	if forged != 1 {
		t.Errorf("vm-b's forged GARP for %s was seen %d times, want once: on its own port, before port security", gw, forged)
	}
}

// applyZone compiles st for n's zone and writes it, as the agent's zone controller does.
// The move changes both zones, so it must write something.
func applyZone(ctx context.Context, t *testing.T, st *cluster.State, n *node) {
	t.Helper()
	res, err := topology.Compile(st, n.name)
	if err != nil || len(res.NotCompiled) > 0 {
		t.Fatalf("compile %s's zone: %v %v", n.name, err, res.NotCompiled)
	}
	stats, err := (&ovn.Reconciler{Client: nbtest.Connect(t, n.nb)}).Reconcile(ctx, res.Rows, nil)
	t.Logf("%s's zone: %+v", n.name, stats)
	if err != nil || stats.Operations == 0 {
		t.Fatalf("write %s's zone: %v (%d operations)", n.name, err, stats.Operations)
	}
}

// movePort takes the host end of the pod's veth (the br-int port whose iface-id is lsp)
// off from's br-int, moves it into to's namespace as name and plugs it into to's br-int
// with the same iface-id and iface-id-ver. The pod's own end stays as it is.
func movePort(ctx context.Context, t *testing.T, from, to *node, lsp, uid, name string) {
	t.Helper()
	out, err := from.ovs.VSCtl(ctx, "--bare", "--columns=name", "find", "Interface", "external_ids:iface-id="+lsp)
	old := strings.TrimSpace(out)
	if err == nil {
		_, err = from.ovs.VSCtl(ctx, "del-port", "br-int", old)
	}
	if err == nil { // renamed on the way: the other node's pod ports have the same ethN names
		_, err = from.ns.IP(ctx, "link", "set", old, "netns", to.ns.Name, "name", name)
	}
	if err == nil {
		_, err = to.ns.IP(ctx, "link", "set", name, "up")
	}
	if err == nil {
		_, err = to.ovs.VSCtl(ctx, "add-port", "br-int", name, "--", "set", "Interface", name,
			"external_ids:iface-id="+lsp, "external_ids:iface-id-ver="+uid)
	}
	if err != nil {
		t.Fatalf("move %s's port %s from %s to %s: %v", lsp, old, from.name, to.name, err)
	}
}

// neighMAC is the MAC of ip in the pod's neighbour table (`ip neigh show`).
func neighMAC(ctx context.Context, t *testing.T, p *pod, ip netip.Addr) string {
	t.Helper()
	out, err := p.ns.IP(ctx, "neigh", "show", ip.String())
	if f := strings.Fields(out); err == nil && len(f) > 4 && f[3] == "lladdr" {
		t.Logf("%s's neighbour: %s", p.ip.Addr(), strings.TrimSpace(out))
		return f[4]
	}
	t.Fatalf("%s has no neighbour entry for %s: %q %v", p.ip.Addr(), ip, out, err)
	return ""
}

// traceAfterMove snapshots both zones' NBs and traces vm-a to vm-b and to its gateway
// in-process (pkg/trace): both must stay inside ovn-worker's zone now.
func traceAfterMove(ctx context.Context, t *testing.T, st *cluster.State, nodes []*node, lsp string, gw, dst netip.Addr) {
	t.Helper()
	zones := trace.Zones{}
	for _, n := range nodes {
		var err error
		if zones[n.name], err = trace.NewZone(n.name, nbtest.Dump(t, n.nb, n.name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, to := range []netip.Addr{dst, gw} {
		res, err := trace.Trace(ctx, trace.ClusterOf(st, zones), trace.Request{Node: "ovn-worker", Port: lsp, Dst: to, Reply: to == dst})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_ = trace.WriteText(&b, res)
		v := res.Forward.Verdict
		ok := to == dst && v.Kind == trace.Delivered && v.Pod == "test12/vm-b" && res.Reply.Verdict.Port == lsp ||
			to == gw && v.Kind == trace.ToRouter && v.Datapath == "test12_namespace.scoped_transit_router"
		for _, h := range append(res.Forward.Hops, trace.Hop{Zone: v.Zone}) {
			ok = ok && h.Zone == "ovn-worker"
		}
		t.Logf("trace vm-a → %s after the move:\n%s", to, b.String())
		if !ok {
			t.Errorf("trace vm-a → %s after the move: %+v, want it answered within ovn-worker's zone", to, v)
		}
	}
}

// pinger is `ping -i 0.05` in a pod until the test stops it, every reply timestamped
// (-D) so the test can tell answers before, during and after a move.
type pinger struct {
	dst  netip.Addr
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startPinger(t *testing.T, from *pod, dst netip.Addr) *pinger {
	p := &pinger{dst: dst, log: filepath.Join(t.TempDir(), "ping.log"), done: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	// ip netns exec execs ping in place: the process is ping, and gets the SIGINT.
	p.cmd = exec.Command("ip", "netns", "exec", from.ns.Name, "ping", "-n", "-D", "-O", "-i", "0.05", dst.String())
	p.cmd.Stdout, p.cmd.Stderr, p.cmd.SysProcAttr = out, out, &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("ping %s: %v", dst, err)
	}
	go func() { _ = p.cmd.Wait(); out.Close(); close(p.done) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

func (p *pinger) text() string { b, _ := os.ReadFile(p.log); return string(b) }

var replyLine = regexp.MustCompile(`(?m)^\[(\d+\.\d+)\] \d+ bytes from .*icmp_seq=(\d+)`)

// replies maps the icmp_seq of every answered echo request to when it was answered.
func (p *pinger) replies() map[int]time.Time {
	out := map[int]time.Time{}
	for _, m := range replyLine.FindAllStringSubmatch(p.text(), -1) {
		sec, _ := strconv.ParseFloat(m[1], 64)
		seq, _ := strconv.Atoi(m[2])
		out[seq] = time.Unix(0, int64(sec*1e9))
	}
	return out
}

// awaitReplies waits for n answers after since.
func (p *pinger) awaitReplies(ctx context.Context, t *testing.T, since time.Time, n int) {
	t.Helper()
	if err := testenv.Eventually(ctx, 20*time.Second, fmt.Sprintf("%d answers from %s", n, p.dst), func(context.Context) error {
		got := 0
		for _, at := range p.replies() {
			if at.After(since) {
				got++
			}
		}
		select {
		case <-p.done:
			return poll.Stop(errors.New("ping exited"))
		default:
		}
		if got < n {
			return fmt.Errorf("%d so far", got)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, p.text())
	}
}

// report stops the ping, logs its summary and the requests lost in the move, and fails
// on any other loss (but the last request's, which may be in flight when ping stops).
func (p *pinger) report(t *testing.T, moveStart, moveDone time.Time) {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt)
	<-p.done
	m := regexp.MustCompile(`(\d+) packets transmitted, \d+ received.*`).FindStringSubmatch(p.text())
	if m == nil {
		t.Fatalf("ping %s printed no summary:\n%s", p.dst, p.text())
	}
	sent, _ := strconv.Atoi(m[1])
	replies := p.replies()
	lastBefore, firstAfter := 0, sent+1
	for seq, at := range replies {
		if at.Before(moveStart) {
			lastBefore = max(lastBefore, seq)
		} else if at.After(moveDone) {
			firstAfter = min(firstAfter, seq)
		}
	}
	lost := map[bool][]int{} // in the move, or not
	for seq := 1; seq < sent; seq++ {
		if _, ok := replies[seq]; !ok {
			inMove := seq > lastBefore && seq < firstAfter
			lost[inMove] = append(lost[inMove], seq)
		}
	}
	t.Logf("ping -i 0.05 %s: %s; lost in the move: %d (icmp_seq %v; %v between the answers to %d and %d)",
		p.dst, m[0], len(lost[true]), lost[true], replies[firstAfter].Sub(replies[lastBefore]).Round(time.Millisecond), lastBefore, firstAfter)
	if len(lost[false]) > 0 {
		t.Errorf("ping %s lost icmp_seq %v outside the move", p.dst, lost[false])
	}
	// A live migration's gap: measured 1-2 requests (20 a second) here, 3-6 under -race;
	// the traffic must come back within a second, not merely eventually.
	if gap := replies[firstAfter].Sub(replies[lastBefore]); gap > maxMoveGap {
		t.Errorf("ping %s: %v between the last answer before the move and the first after, want at most %v", p.dst, gap.Round(time.Millisecond), maxMoveGap)
	}
}

// maxMoveGap bounds the time without answers while a pod moves between nodes.
const maxMoveGap = 2 * time.Second

// sendGARP sends a gratuitous ARP (a request whose sender IP is its target IP, as
// `arping -U` sends) from MAC out of an interface: iputils-arping is not installed.
const sendGARP = `import socket, sys
mac, ip = bytes.fromhex(sys.argv[2].replace(":", "")), socket.inet_aton(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send((b"\xff" * 6 + mac + b"\x08\x06\x00\x01\x08\x00\x06\x04\x00\x01" + mac + ip + b"\x00" * 6 + ip).ljust(60, b"\x00"))
`

// capture is tcpdump writing a pcap file in a node's namespace: on "any" (the br-int
// ports and every other interface) each ARP and ND packet with its interface
// (LINUX_SLL2, so it follows a port that moves in or out); on the uplink every Geneve
// packet, whose inner ARP or ND packet the test decodes.
type capture struct {
	node  *node
	iface string
	file  string
	proc  *testenv.Process
	links map[uint32]string // interface index → name, as seen during the test
}

func startCapture(ctx context.Context, t *testing.T, n *node, iface string) *capture {
	t.Helper()
	dir := t.TempDir()
	c := &capture{node: n, iface: iface, file: filepath.Join(dir, "capture.pcap"), links: map[uint32]string{}}
	filter := map[bool][]string{true: {"-y", "LINUX_SLL2", "arp or (icmp6 and ip6[40] >= 133 and ip6[40] <= 137)"}, false: {"udp port 6081"}}
	c.proc = testenv.StartProcess(t, dir, "tcpdump", nil, append([]string{"ip", "netns", "exec", n.ns.Name,
		"tcpdump", "-i", iface, "-nn", "-U", "-Z", "root", "-w", c.file}, filter[iface == "any"]...)...)
	if err := testenv.Eventually(ctx, 10*time.Second, "tcpdump on "+n.name+" "+iface, func(context.Context) error {
		if exited, err := c.proc.Exited(); exited {
			return poll.Stop(fmt.Errorf("tcpdump exited: %v\n%s", err, c.proc.LogTail(5)))
		} else if !strings.Contains(c.proc.LogTail(5), "listening on") {
			return errors.New("not listening yet")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// frame is a captured packet: an ARP or ND packet on an interface, or a Geneve packet
// (link "vni N") and the ARP or ND packet inside, if any.
type frame struct {
	at        time.Time
	link      string // "eth1 in-bcast", "vm-a out", "vni 16711684"
	bcast     bool   // to the broadcast address
	op        uint16 // ARP: 1 request, 2 reply; 0 if not ARP
	sha       net.HardwareAddr
	spa, tpa  netip.Addr
	nd        byte // ND: the ICMPv6 type (133–137); 0 if not ND
	src       netip.Addr
	solicited bool // an advertisement's S flag
}

func (f frame) String() string {
	switch {
	case f.op == 1:
		return fmt.Sprintf("%s ARP who-has %s tell %s (%s)", f.link, f.tpa, f.spa, f.sha)
	case f.op != 0:
		return fmt.Sprintf("%s ARP reply %s is-at %s to %s", f.link, f.spa, f.sha, f.tpa)
	case f.nd != 0:
		return fmt.Sprintf("%s %s from %s", f.link, map[byte]string{133: "RS", 134: "RA", 135: "NS", 136: "NA", 137: "redirect"}[f.nd], f.src)
	}
	return f.link
}

// garps are the gratuitous ARPs for ip among frames: announcements (sender IP = target
// IP, request or reply) and replies from ip that answer no request seen before them.
func garps(frames []frame, ip netip.Addr) []frame {
	asked := map[netip.Addr]bool{} // who asked for ip
	var out []frame
	for _, f := range frames {
		switch {
		case f.op == 0:
		case f.spa == ip && f.tpa == ip, f.op == 2 && f.spa == ip && !asked[f.tpa]:
			out = append(out, f)
		case f.op == 1 && f.tpa == ip:
			asked[f.spa] = true
		}
	}
	return out
}

// summarize counts the ARP and ND packets by what they are, in order of first sight.
func summarize(frames []frame) string {
	var order []string
	count := map[string]int{}
	for _, f := range frames {
		if s := f.String(); f.op != 0 || f.nd != 0 {
			if count[s]++; count[s] == 1 {
				order = append(order, s)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d packets, %d distinct ARP/ND", len(frames), len(order))
	for _, s := range order {
		fmt.Fprintf(&b, "\n  %3d× %s", count[s], s)
	}
	return b.String()
}

// frames reads the pcap file as far as tcpdump has written it (-U: packet by packet; a
// record still being written is left for the next read), and learns the names of the
// namespace's interfaces by index meanwhile.
func (c *capture) frames(ctx context.Context, t *testing.T) []frame {
	t.Helper()
	links, _ := c.node.ns.IP(ctx, "-o", "link")
	for _, m := range regexp.MustCompile(`(?m)^(\d+): ([^:@]+)`).FindAllStringSubmatch(links, -1) {
		i, _ := strconv.Atoi(m[1])
		c.links[uint32(i)] = m[2]
	}
	b, err := os.ReadFile(c.file)
	le, be := binary.LittleEndian, binary.BigEndian
	if err != nil || len(b) < 24 || le.Uint32(b) != 0xa1b2c3d4 {
		t.Fatalf("%s: no little-endian pcap in %s: %v", c.node.name, c.file, err)
	}
	sll2 := le.Uint32(b[20:]) == 276
	var out []frame
	for off := 24; off+16 <= len(b) && off+16+int(le.Uint32(b[off+8:])) <= len(b); {
		f := frame{at: time.Unix(int64(le.Uint32(b[off:])), int64(le.Uint32(b[off+4:]))*1000)}
		data := b[off+16 : off+16+int(le.Uint32(b[off+8:]))]
		off += 16 + len(data)
		var l3 []byte
		if sll2 && len(data) >= 20 { // protocol, reserved, ifindex, hatype, pkttype, …
			f.bcast = data[10] == 1
			f.link = c.links[be.Uint32(data[4:])] + " " + [...]string{"in", "in-bcast", "in-mcast", "in-other", "out"}[min(data[10], 4)]
			data, l3 = data[:2], data[20:]
		} else if len(data) > 90 && be.Uint16(data[12:]) == 0x0800 { // Geneve over UDP over IPv4, on the uplink
			g := data[14+int(data[14]&0xf)*4+8:]
			inner := g[min(len(g), 8+int(g[0]&0x3f)*4):]
			if be.Uint16(g[2:]) != 0x6558 || len(inner) < 14 { // not Ethernet inside
				continue
			}
			f.link, f.bcast = fmt.Sprintf("vni %d", be.Uint32(g[4:])>>8), bytes.Equal(inner[:6], []byte{255, 255, 255, 255, 255, 255})
			data, l3 = inner[12:14], inner[14:]
		} else {
			continue
		}
		if typ := be.Uint16(data); typ == 0x0806 && len(l3) >= 28 && l3[4] == 6 && l3[5] == 4 {
			f.op, f.sha, f.spa, f.tpa = be.Uint16(l3[6:]), net.HardwareAddr(l3[8:14]), netip.AddrFrom4([4]byte(l3[14:18])), netip.AddrFrom4([4]byte(l3[24:28]))
		} else if typ == 0x86dd && len(l3) >= 48 && l3[6] == 58 && l3[40] >= 133 && l3[40] <= 137 {
			f.nd, f.src, f.solicited = l3[40], netip.AddrFrom16([16]byte(l3[8:24])), l3[44]&0x40 != 0
		}
		out = append(out, f)
	}
	return out
}
