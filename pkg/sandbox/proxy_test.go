package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
)

// startProxy serves a Proxy with routes on a socket in a temporary directory for the
// rest of the test.
func startProxy(t *testing.T, routes ...ProxyRoute) *Proxy {
	t.Helper()
	p := &Proxy{Socket: filepath.Join(t.TempDir(), "proxy.sock"), Routes: routes}
	l, err := p.listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.serve(ctx, l, log.New(io.Discard, "", 0)) }()
	t.Cleanup(func() {
		cancel()
		l.Close()
		if err := <-done; err != nil {
			t.Errorf("proxy: %v", err)
		}
	})
	return p
}

// connect sends one request line through the proxy and returns the connection, the
// status line and the body of a refusal.
func connect(t *testing.T, p *Proxy, request string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial("unix", p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprint(c, request)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

func TestProxyTunnelsToTheRoutedDestination(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	p := startProxy(t, ProxyRoute{Prefix: netip.MustParsePrefix("127.0.0.0/8")})
	c, br, resp := connect(t, p, "CONNECT "+echo.Addr().String()+" HTTP/1.1\r\nHost: "+echo.Addr().String()+"\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT answered %s, want 200", resp.Status)
	}
	fmt.Fprint(c, "through the tunnel\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "through the tunnel\n" {
		t.Fatalf("echo through the tunnel: %q, %v", line, err)
	}
}

func TestProxyRefusals(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	p := startProxy(t, ProxyRoute{Prefix: netip.MustParsePrefix("127.0.0.0/8")})
	for _, tc := range []struct {
		name, request string
		status        int
		says          string
	}{
		{"not CONNECT", "GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", http.StatusMethodNotAllowed, "only CONNECT"},
		{"a host name", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", http.StatusBadRequest, "ip:port"},
		{"no route", "CONNECT 192.0.2.1:10250 HTTP/1.1\r\nHost: 192.0.2.1:10250\r\n\r\n", http.StatusForbidden, "no node or pod"},
		{"nothing listens", "CONNECT " + refused + " HTTP/1.1\r\nHost: " + refused + "\r\n\r\n", http.StatusBadGateway, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, resp := connect(t, p, tc.request)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.says) {
				t.Errorf("answered %s %q, want %d saying %q", resp.Status, body, tc.status, tc.says)
			}
		})
	}
}

func TestProxyLongestPrefixWins(t *testing.T) {
	p := &Proxy{Routes: []ProxyRoute{
		{Prefix: netip.MustParsePrefix("10.244.0.0/16"), Netns: "pods"},
		{Prefix: netip.MustParsePrefix("10.244.1.7/32"), Netns: "node"},
	}}
	for addr, want := range map[string]string{"10.244.1.7": "node", "10.244.1.8": "pods"} {
		if got, ok := p.netnsFor(netip.MustParseAddr(addr)); !ok || got != want {
			t.Errorf("netnsFor(%s) = %q, %v; want %q", addr, got, ok, want)
		}
	}
	if _, ok := p.netnsFor(netip.MustParseAddr("10.245.0.1")); ok {
		t.Error("an address no route holds was routed")
	}
}
