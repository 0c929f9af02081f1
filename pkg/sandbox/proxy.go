package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"
)

// The API server lives on the host's loopback, the kubelets and pods inside the nodes'
// namespaces. It reaches them (exec, logs, port-forward, pods/proxy) through an HTTP
// CONNECT proxy the forwarder serves on a unix socket (its egress selector's "cluster"
// connection): each tunnel is dialled from the namespace whose route covers its
// destination, so the host's network is never changed.

// Proxy is the forwarder's HTTP CONNECT proxy.
type Proxy struct {
	// Socket is the unix socket the proxy listens on.
	Socket string `json:"socket"`
	// Routes say which namespace a destination is dialled from: the longest prefix
	// holding the address wins; an address no route holds is refused.
	Routes []ProxyRoute `json:"routes"`
}

// ProxyRoute sends the destinations in Prefix through namespace Netns.
type ProxyRoute struct {
	Prefix netip.Prefix `json:"prefix"`
	Netns  string       `json:"netns"`
}

// netnsFor returns the namespace of the longest route holding addr.
func (p *Proxy) netnsFor(addr netip.Addr) (string, bool) {
	best := -1
	var ns string
	for _, r := range p.Routes {
		if r.Prefix.Contains(addr.Unmap()) && r.Prefix.Bits() > best {
			best, ns = r.Prefix.Bits(), r.Netns
		}
	}
	return ns, best >= 0
}

// listen binds the proxy's socket, replacing a stale one.
func (p *Proxy) listen() (net.Listener, error) {
	if err := os.Remove(p.Socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale proxy socket: %w", err)
	}
	l, err := net.Listen("unix", p.Socket)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	// It reaches every node and pod on any port: the API server (root) alone may use it.
	if err := os.Chmod(p.Socket, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return l, nil
}

// serve answers CONNECT requests on l until it is closed.
func (p *Proxy) serve(ctx context.Context, l net.Listener, logger *log.Logger) error {
	return acceptLoop(ctx, l, "proxy on "+p.Socket, logger, func(c net.Conn) {
		defer c.Close()
		if err := p.tunnel(ctx, c); err != nil {
			logger.Printf("proxy: %v", err)
		}
	})
}

// proxyHandshakeTimeout bounds reading a CONNECT request and dialling its destination.
const proxyHandshakeTimeout = 10 * time.Second

// tunnel reads one CONNECT request from c, dials its destination from the namespace
// routing it, answers 200 and joins the two connections; any failure is answered with a
// status and a line saying why, which the API server shows to its client.
func (p *Proxy) tunnel(ctx context.Context, c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(proxyHandshakeTimeout))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	refuse := func(status int, err error) error {
		fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n%v\n", status, http.StatusText(status), err)
		return err
	}
	if req.Method != http.MethodConnect {
		return refuse(http.StatusMethodNotAllowed, fmt.Errorf("%s %s: only CONNECT is served", req.Method, req.Host))
	}
	dest, err := netip.ParseAddrPort(req.Host)
	if err != nil {
		return refuse(http.StatusBadRequest, fmt.Errorf("CONNECT %s: want an ip:port destination", req.Host))
	}
	ns, ok := p.netnsFor(dest.Addr())
	if !ok {
		return refuse(http.StatusForbidden, fmt.Errorf("CONNECT %s: no node or pod of the sandbox has that address", req.Host))
	}
	dctx, cancel := context.WithTimeout(ctx, proxyHandshakeTimeout)
	out, err := dialIn(dctx, ns, dest.String())
	cancel()
	if err != nil {
		return refuse(http.StatusBadGateway, err)
	}
	defer out.Close()
	if _, err := fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return fmt.Errorf("CONNECT %s: answer: %w", req.Host, err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close(); out.Close() })
	defer stop()
	// The client waits for the answer before sending, so nothing is buffered past the
	// request; the reader still goes first in case a client did not.
	splice(&bufferedConn{Conn: c, r: br}, out)
	return nil
}

// bufferedConn reads through r, which holds what was read of Conn ahead of time.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// CloseWrite passes a half-close on to the connection beneath.
func (b *bufferedConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return b.Conn.Close()
}
