package packets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/pkg/trace"
	"github.com/ovnk/ovnk/test/testenv"
)

// How long a packet that must pass may take to pass (ports are bound, flows installed
// and servers started asynchronously), and the port every TCP server listens on: the
// outside who-am-i server's.
const (
	traceMatrixDeadline = 15 * time.Second
	traceTCPPort        = 8080
)

// traceMasquerade is the masquerade subnet: a packet the trace sees leave the cluster
// from one of these addresses (a user-defined network's gateway router) is translated
// to the node's address by br-ex, which the trace does not follow.
var traceMasquerade = netip.MustParsePrefix("169.254.0.0/17")

// traceEnd is one end of a pair: a pod, a node's host, or the outside host.
type traceEnd struct {
	// Pod is "namespace/name", and Iface the pod's interface whose address a packet to
	// the pod is sent to: eth0, or ovn-udn1 for a primary user-defined network.
	Pod, Iface string
	// Node is a node's name: as a source its host (through a management port), as a
	// destination its own address.
	Node string
	// Network is, for a node as the source, the network whose management port the trace
	// starts from (--network); the host sends through that port only what its routes
	// send there.
	Network string
	// Outside is the outside host running the who-am-i server.
	Outside bool
}

func tracePod(ref, iface string) traceEnd       { return traceEnd{Pod: ref, Iface: iface} }
func traceNode(name string) traceEnd            { return traceEnd{Node: name} }
func traceNodeOn(name, network string) traceEnd { return traceEnd{Node: name, Network: network} }
func traceOutside() traceEnd                    { return traceEnd{Outside: true} }
func (e traceEnd) target() sandbox.Target {
	return sandbox.Target{Pod: e.Pod, Node: e.Node, Outside: e.Outside}
}

func (e traceEnd) String() string {
	switch {
	case e.Pod != "" && e.Iface != "":
		return e.Pod + " (" + e.Iface + ")"
	case e.Pod != "":
		return e.Pod
	case e.Node != "" && e.Network != "":
		return "node " + e.Node + " on " + e.Network
	case e.Node != "":
		return "node " + e.Node
	default:
		return "the outside host"
	}
}

// traceArg is how `kubectl ovnk trace` names the end (docs/trace.md).
func (e traceEnd) traceArg(l *lab) (string, error) {
	switch {
	case e.Pod != "":
		return e.Pod, nil
	case e.Node != "":
		return "node/" + e.Node, nil
	default:
		return traceOutsideAddr(l)
	}
}

// tracePair is one row of the matrix: a packet from src to dst that must pass (Want)
// or must not. A pair that must not pass names a Witness, a source that reaches dst,
// to show the destination answers at all before its silence counts.
type tracePair struct {
	Src, Dst traceEnd
	Want     bool
	Witness  *traceEnd
	// Note is what a failure should also say: why the pair is known to disagree.
	Note string
}

func (p tracePair) String() string { return p.Src.String() + " → " + p.Dst.String() }

// traceProtos are the protocols every pair is sent with.
var traceProtos = []string{"icmp", "tcp"}

// traceMatrix runs pairs on one sandbox and counts how many agreed.
type traceMatrix struct {
	t       *testing.T
	l       *lab
	serving map[sandbox.Target]bool
	pairs   int
	agreed  int
}

func newTraceMatrix(t *testing.T, l *lab) *traceMatrix {
	return &traceMatrix{t: t, l: l, serving: map[sandbox.Target]bool{}}
}

// report logs the tally; every pair counts once per protocol.
func (m *traceMatrix) report() {
	m.t.Logf("trace vs packets: %d pairs, %d agree", m.pairs, m.agreed)
}

// check runs each pair with every protocol: a real packet (or connection), then the
// trace, and compares what they did.
func (m *traceMatrix) check(ctx context.Context, step string, pairs ...tracePair) {
	m.t.Helper()
	for _, p := range pairs {
		for _, proto := range traceProtos {
			m.pairs++
			if m.checkOne(ctx, step, p, proto) {
				m.agreed++
			}
		}
	}
}

// checkOne reports whether the trace and the packet agreed; every disagreement, and a
// pair whose packet does not do what the test wants, is an error naming the pair.
func (m *traceMatrix) checkOne(ctx context.Context, step string, p tracePair, proto string) bool {
	m.t.Helper()
	name := fmt.Sprintf("%s: %s %s", step, proto, p)
	start := time.Now()
	dst, err := m.address(ctx, p.Dst)
	if err != nil {
		m.t.Errorf("%s: %v", name, err)
		return false
	}
	if proto == "tcp" {
		if err := m.serve(ctx, p.Dst); err != nil {
			m.t.Errorf("%s: %v", name, err)
			return false
		}
	}
	var got packetOutcome
	if p.Want {
		got = m.sendUntilAnswered(ctx, p.Src, dst, proto)
	} else {
		if p.Witness == nil {
			m.t.Fatalf("%s: a pair that must be dropped needs a witness that reaches %s", name, p.Dst)
		}
		if w := m.sendUntilAnswered(ctx, *p.Witness, dst, proto); !w.answered {
			m.t.Errorf("%s: the witness %s does not reach %s either, so silence proves nothing: %s", name, p.Witness, dst, w.detail)
			return false
		}
		got = m.sendFew(ctx, p.Src, dst, proto)
	}
	res, err := m.trace(ctx, p, proto)
	if err != nil {
		m.t.Errorf("%s: %v", name, err)
		return false
	}
	if res.Forward.Packet.IPDst != dst.String() {
		m.t.Errorf("%s: the trace sent its packet to %s, the test to %s", name, res.Forward.Packet.IPDst, dst)
		return false
	}
	want := reduceTrace(res)
	agree := want.answered == got.answered
	if !agree {
		m.t.Errorf("%s: the trace and the packet disagree: trace %s; the packet was %s%s",
			name, want, got, noteOf(p))
	} else if got.answered != p.Want {
		m.t.Errorf("%s: the trace and the packet agree, but the packet was %s, want it %s", name, got, answeredWord(p.Want))
	}
	if agree && got.answered && proto == "tcp" {
		if msg := m.compareSource(ctx, res, got.seen); msg != "" {
			m.t.Errorf("%s: %s", name, msg)
			agree = false
		}
	}
	m.t.Logf("%s: trace %s, packet %s (%.1fs)", name, want.kind, answeredWord(got.answered), time.Since(start).Seconds())
	return agree
}

// compareSource holds the source address the TCP server saw to the trace's: a
// delivered packet arrives with the trace's final source address. A packet that left
// the cluster is not followed beyond its gateway router: the trace names the node and
// the source it leaves the router with. The default network's gateway router SNATs to
// the node's address itself, which is what the far end must see; a user-defined
// network's gateway router leaves with its masquerade address, which br-ex translates
// to the node's, so there the far end must see the address of the node the trace left.
func (m *traceMatrix) compareSource(ctx context.Context, res *trace.Result, seen string) string {
	v := res.Forward.Verdict
	want := v.Packet.IPSrc
	if v.Kind == trace.LeftCluster {
		src, err := netip.ParseAddr(v.Packet.IPSrc)
		if err != nil {
			return fmt.Sprintf("the trace left the cluster from %q, which is no address", v.Packet.IPSrc)
		}
		if traceMasquerade.Contains(src) {
			node, err := m.nodeAddress(v.Zone)
			if err != nil {
				return err.Error()
			}
			want = node.String()
		}
	}
	if seen != want {
		return fmt.Sprintf("the server saw the connection come from %s, the trace says %s (verdict: %s from %s)", seen, want, v.Reason, v.Packet.IPSrc)
	}
	return ""
}

// traceOutcome is a trace reduced to what a packet can show.
type traceOutcome struct {
	// kind is "delivered", "left the cluster" or "dropped"; answered says whether a
	// packet's sender gets an answer.
	kind     string
	answered bool
	detail   string
}

func (o traceOutcome) String() string { return o.kind + " (" + o.detail + ")" }

// reduceTrace reduces a result: a packet delivered whose reply comes back to the port
// it left from is delivered; one that left the cluster is answered by whatever is
// there (the trace follows nothing beyond the gateway); everything else, a reply lost
// or delivered elsewhere included, is dropped.
func reduceTrace(res *trace.Result) traceOutcome {
	f := res.Forward
	switch f.Verdict.Kind {
	case trace.LeftCluster:
		return traceOutcome{"left the cluster", true, describePath(f)}
	case trace.Delivered, trace.ToRouter:
		if res.Reply == nil {
			// Every trace here asks for the reply: one missing is the trace's failure.
			return traceOutcome{"dropped", false, describePath(f) + "; but no reply was traced"}
		}
		r := res.Reply.Verdict
		if r.Kind == trace.Delivered && r.Port == f.Packet.InPort && r.Zone == firstZone(f) {
			return traceOutcome{"delivered", true, describePath(f) + "; reply " + describePath(res.Reply)}
		}
		return traceOutcome{"dropped", false, "forward " + describePath(f) + "; but the reply " + describePath(res.Reply) +
			", not back to " + f.Packet.InPort + " on " + firstZone(f)}
	default:
		return traceOutcome{"dropped", false, describePath(f)}
	}
}

func noteOf(p tracePair) string {
	if p.Note == "" {
		return ""
	}
	return "\n  known: " + p.Note
}

func firstZone(p *trace.Path) string {
	if len(p.Hops) == 0 {
		return p.Verdict.Zone
	}
	return p.Hops[0].Zone
}

// describePath is a verdict with its last hop, for messages.
func describePath(p *trace.Path) string {
	s := fmt.Sprintf("%s: %s", p.Verdict.Kind, p.Verdict.Reason)
	if n := len(p.Hops); n > 0 {
		h := p.Hops[n-1]
		s += fmt.Sprintf("; last hop %d: %s %s %s [%s] %s→%s: %s", n, h.Zone, h.Kind, h.Datapath, h.Stage, h.InPort, h.OutPort, h.Note)
	}
	return s
}

// trace runs `kubectl ovnk trace` for the pair and decodes its JSON.
func (m *traceMatrix) trace(ctx context.Context, p tracePair, proto string) (*trace.Result, error) {
	src, err := p.Src.traceArg(m.l)
	if err != nil {
		return nil, err
	}
	dst, err := p.Dst.traceArg(m.l)
	if err != nil {
		return nil, err
	}
	args := []string{"ovnk", "trace", src, dst, "--proto", proto, "-o", "json"}
	if proto != "icmp" {
		args = append(args, "--port", fmt.Sprint(traceTCPPort))
	}
	if p.Src.Network != "" {
		args = append(args, "--network", p.Src.Network)
	}
	out, err := m.l.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	var res trace.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Forward == nil {
		return nil, fmt.Errorf("kubectl %s: no trace result (%v):\n%s", strings.Join(args, " "), err, out)
	}
	return &res, nil
}

// packetOutcome is what a real packet did: answered or not, and for a TCP
// connection the source address the server saw.
type packetOutcome struct {
	answered bool
	seen     string
	detail   string
}

func (o packetOutcome) String() string { return answeredWord(o.answered) + " (" + o.detail + ")" }

func answeredWord(answered bool) string {
	if answered {
		return "answered"
	}
	return "not answered"
}

// sendUntilAnswered sends one packet (a ping, or a connection to the destination's
// server) again and again until it is answered or the deadline passes.
func (m *traceMatrix) sendUntilAnswered(ctx context.Context, src traceEnd, dst netip.Addr, proto string) packetOutcome {
	var last packetOutcome
	err := testenv.Eventually(ctx, traceMatrixDeadline, fmt.Sprintf("%s from %s to %s answered", proto, src, dst), func(ctx context.Context) error {
		last = m.send(ctx, src, dst, proto, 1)
		if !last.answered {
			return fmt.Errorf("%s", last.detail)
		}
		return nil
	})
	if err != nil {
		last.detail = err.Error()
	}
	return last
}

// sendFew sends a few packets once: three pings, or a connection whose SYN is sent
// twice within curl's two seconds.
func (m *traceMatrix) sendFew(ctx context.Context, src traceEnd, dst netip.Addr, proto string) packetOutcome {
	return m.send(ctx, src, dst, proto, 3)
}

func (m *traceMatrix) send(ctx context.Context, src traceEnd, dst netip.Addr, proto string, pings int) packetOutcome {
	var argv []string
	switch proto {
	case "icmp":
		argv = []string{"ping", "-n", "-q", "-c", fmt.Sprint(pings), "-i", "0.2", "-W", "1", dst.String()}
	default:
		argv = []string{"curl", "-sS", "--max-time", "2", "http://" + netip.AddrPortFrom(dst, traceTCPPort).String() + "/"}
	}
	if src.Node != "" && src.Network != "" {
		// A node's packet on a user-defined network is what a socket bound to the
		// network's VRF sends upstream; here the VRF's table is selected by an oif rule
		// of its management port, so the socket is bound to that port.
		link, err := m.managementLink(ctx, src.Network)
		if err != nil {
			return packetOutcome{detail: err.Error()}
		}
		if proto == "icmp" {
			argv = append(argv, "-I", link)
		} else {
			argv = append(argv, "--interface", link)
		}
	}
	out, err := m.l.exec(ctx, src.target(), argv...)
	if err != nil {
		return packetOutcome{detail: lastLine(err.Error())}
	}
	if proto == "icmp" {
		return packetOutcome{answered: true, detail: lastLine(out)}
	}
	// The test application answers "<pod> <source>", the nodes' server and the
	// outside host the source alone.
	var seen string
	if f := strings.Fields(out); len(f) > 0 {
		seen = f[len(f)-1]
	}
	return packetOutcome{answered: seen != "", seen: seen, detail: "the server saw " + seen}
}

// managementLink names the host interface of a network's management port,
// ovn-k8s-mp<network id>, from the id the leader annotated the network with; network is
// "namespace/name" of a UserDefinedNetwork or the name of a ClusterUserDefinedNetwork.
func (m *traceMatrix) managementLink(ctx context.Context, network string) (string, error) {
	args := []string{"get", "clusteruserdefinednetworks.k8s.ovn.org", network}
	if ns, name, ok := strings.Cut(network, "/"); ok {
		args = []string{"get", "userdefinednetworks.k8s.ovn.org", name, "-n", ns}
	}
	id, err := m.l.run(ctx, append(args, "-o", `jsonpath={.metadata.annotations.k8s\.ovn\.org/network-id}`)...)
	if err != nil || strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("network id of %s: %q %v", network, id, err)
	}
	return "ovn-k8s-mp" + strings.TrimSpace(id), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// address is where packets to the end go: the pod's address on its interface (read
// inside the pod, once the sandbox has wired it), the node's address, the outside
// host's.
func (m *traceMatrix) address(ctx context.Context, e traceEnd) (netip.Addr, error) {
	switch {
	case e.Node != "":
		return m.nodeAddress(e.Node)
	case e.Outside:
		s, err := traceOutsideAddr(m.l)
		if err != nil {
			return netip.Addr{}, err
		}
		return netip.ParseAddr(s)
	}
	var addr netip.Addr
	err := testenv.Eventually(ctx, time.Minute, fmt.Sprintf("pod %s wired with an IPv4 address on %s", e.Pod, e.Iface), func(ctx context.Context) error {
		out, err := m.l.exec(ctx, e.target(), "ip", "-4", "-o", "addr", "show", "dev", e.Iface)
		if err != nil {
			return err
		}
		f := strings.Fields(out) // "3: eth0    inet 10.244.0.5/24 brd … scope global eth0 …"
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "inet" {
				p, err := netip.ParsePrefix(f[i+1])
				if err != nil {
					return poll.Stop(fmt.Errorf("pod %s: address %q on %s: %w", e.Pod, f[i+1], e.Iface, err))
				}
				addr = p.Addr()
				return nil
			}
		}
		return fmt.Errorf("pod %s has no IPv4 address on %s yet", e.Pod, e.Iface)
	})
	return addr, err
}

func (m *traceMatrix) nodeAddress(name string) (netip.Addr, error) {
	for _, n := range m.l.s.Nodes {
		if n.Name == name {
			p, err := netip.ParsePrefix(n.Address)
			if err != nil {
				return netip.Addr{}, fmt.Errorf("node %s: address %q: %w", name, n.Address, err)
			}
			return p.Addr(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("no node %s in the sandbox", name)
}

func traceOutsideAddr(l *lab) (string, error) {
	u, err := url.Parse(l.s.WhoAmIURL)
	if err != nil {
		return "", fmt.Errorf("who-am-i url %q: %w", l.s.WhoAmIURL, err)
	}
	return u.Hostname(), nil
}

// traceServer answers every HTTP request on port 8080, on every address of a node, with
// the address the connection came from, as the pods' test application does: what the destination saw is what the test compares.
// A few lines of python3, not `python3 -m http.server`, which resolves its own name
// (socket.getfqdn) and hangs for 10 s in a namespace without DNS.
const traceServer = `import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080))
s.listen()
while True:
    c, peer = s.accept()
    try:
        c.recv(4096)
        body = (peer[0] + "\n").encode()
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    c.close()
`

// serve makes sure something answers on the end's port 8080, and waits until it answers
// there: a pod's own test application does; a node gets traceServer, once; the outside
// host has the sandbox's who-am-i server already.
func (m *traceMatrix) serve(ctx context.Context, e traceEnd) error {
	tg := e.target()
	if e.Outside || m.serving[tg] {
		return nil
	}
	var srv *testenv.Process
	if tg.Pod == "" {
		cmd, err := m.l.s.Command(ctx, tg, "python3", "-c", traceServer)
		if err != nil {
			return err
		}
		name := "server-" + strings.NewReplacer("/", "-", " ", "-").Replace(tg.String())
		srv = testenv.StartProcess(m.t, m.t.TempDir(), name, nil, cmd.Args...)
	}
	err := testenv.Eventually(ctx, traceMatrixDeadline, "the TCP server in "+tg.String(), func(ctx context.Context) error {
		if srv != nil {
			if exited, err := srv.Exited(); exited {
				return poll.Stop(fmt.Errorf("the TCP server in %s exited: %v\n%s", tg, err, srv.LogTail(10)))
			}
		}
		_, err := m.l.exec(ctx, tg, "curl", "-sS", "--max-time", "1", fmt.Sprintf("http://127.0.0.1:%d/", traceTCPPort))
		return err
	})
	if err != nil {
		return err
	}
	m.serving[tg] = true
	return nil
}
