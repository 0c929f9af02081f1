package main

import (
	"context"
	"net"
	"net/netip"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/ovnk/ovnk/test/testenv"
)

var servingLine = regexp.MustCompile(`^ovnk-testapp \S+ serving on port (\d+) \(tcp: http, udp\)$`)

// askUDP sends a datagram from the unconnected socket c to server and returns the
// answer and the address it came from, which a connected client would require to be
// server's.
func askUDP(t *testing.T, c *net.UDPConn, server netip.AddrPort) (string, netip.AddrPort) {
	t.Helper()
	if _, err := c.WriteToUDPAddrPort([]byte("who?"), server); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("answer to %s: %v", server, err)
	}
	return string(buf[:n]), netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
}

// A pod with two addresses answers a UDP client from the address it asked, as a
// connected client needs: 127.0.0.2 is as much this host's as 127.0.0.1, and the
// kernel's own choice for an answer to 127.0.0.1 would be 127.0.0.1.
func TestUDPAnswersFromTheAddressAsked(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, "--port", "0")
	port, _ := strconv.Atoi(p.waitLine(t, servingLine)[1])
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, addr := range []string{"127.0.0.1", "127.0.0.2"} {
		server := netip.AddrPortFrom(netip.MustParseAddr(addr), uint16(port))
		answer, from := askUDP(t, c, server)
		if from != server || answer != hostname+" 127.0.0.1\n" {
			t.Errorf("asked %s: answer %q from %s; want %q from %s", server, answer, from, hostname+" 127.0.0.1\n", server)
		}
	}
}

// The same over IPv6, in a namespace whose loopback has two addresses of its own.
func TestUDPAnswersFromTheAddressAskedIPv6(t *testing.T) {
	testenv.NeedRoot(t, "a network namespace with two IPv6 addresses")
	testenv.NeedBinaries(t, "nsenter")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := testenv.NewNetns(t)
	for _, a := range []string{"fd00::1/128", "fd00::2/128"} {
		if _, err := ns.IP(ctx, "addr", "add", a, "dev", "lo", "nodad"); err != nil {
			t.Fatal(err)
		}
	}
	p := startArgv(t, []string{"nsenter", "--net=/run/netns/" + ns.Name, testenv.Command(t, "ovnk-testapp"), "--port", "0"})
	port, _ := strconv.Atoi(p.waitLine(t, servingLine)[1])
	c := udpIn(t, ns.Name, netip.MustParseAddrPort("[fd00::1]:0"))
	defer c.Close()
	for _, addr := range []string{"fd00::1", "fd00::2"} {
		server := netip.AddrPortFrom(netip.MustParseAddr(addr), uint16(port))
		if _, from := askUDP(t, c, server); from != server {
			t.Errorf("asked %s: answer from %s", server, from)
		}
	}
}

// udpIn opens a UDP socket bound to local inside the named network namespace: a
// socket stays in the namespace it was made in, so only that call runs there, on a
// thread locked for it.
func udpIn(t *testing.T, name string, local netip.AddrPort) *net.UDPConn {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	target, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		t.Fatalf("enter network namespace %s: %v", name, err)
	}
	c, lerr := net.ListenUDP("udp6", net.UDPAddrFromAddrPort(local))
	if err := netns.Set(orig); err != nil {
		panic("cannot return to the test's network namespace: " + err.Error())
	}
	if lerr != nil {
		t.Fatalf("udp socket in network namespace %s: %v", name, lerr)
	}
	return c
}
