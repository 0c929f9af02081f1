package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// shutdownGrace bounds how long a stop waits for HTTP requests in flight.
const shutdownGrace = 2 * time.Second

// server answers on one TCP and one UDP socket of the same port.
type server struct {
	hostname string
	tcp      net.Listener
	udp      *net.UDPConn
	// pktinfo makes UDP answers leave from the address each datagram was sent to.
	pktinfo pktinfo
	log     *log.Logger
}

// listen opens both sockets: TCP first, so that port 0 picks the port, then UDP on it.
// They listen on every address of both families the pod has.
func listen(port int, hostname string, out io.Writer) (*server, error) {
	tcp, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return nil, fmt.Errorf("listen on tcp port %d: %w", port, err)
	}
	port = tcp.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenUDP("udp", &net.UDPAddr{Port: port})
	if err != nil {
		tcp.Close()
		return nil, fmt.Errorf("listen on udp port %d: %w", port, err)
	}
	info, err := enablePktinfo(udp)
	if err != nil {
		tcp.Close()
		udp.Close()
		return nil, fmt.Errorf("udp port %d: %w", port, err)
	}
	s := &server{hostname: hostname, tcp: tcp, udp: udp, pktinfo: info, log: log.New(out, "", 0)}
	s.log.Printf("ovnk-testapp %s serving on port %d (tcp: http, udp)", hostname, port)
	return s, nil
}

// answer is what the server says to a client at src: who it is and whom it saw.
func (s *server) answer(src netip.Addr) string {
	return fmt.Sprintf("%s %s\n", s.hostname, src)
}

// unmap turns an IPv4 client seen on a dual-stack socket (::ffff:10.0.0.5) back into
// the IPv4 address it is, as the client knows itself.
func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// serve answers until ctx ends, then stops both sockets; it returns nil after a stop
// and the error when a socket fails on its own.
func (s *server) serve(ctx context.Context) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          s.log,
	}
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := srv.Serve(s.tcp); !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("http on %s: %w", s.tcp.Addr(), err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := s.serveUDP(); !errors.Is(err, net.ErrClosed) {
			errs <- fmt.Errorf("udp on %s: %w", s.udp.LocalAddr(), err)
		}
	}()
	var err error
	select {
	case <-ctx.Done():
		s.log.Printf("stopping")
	case err = <-errs:
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if serr := srv.Shutdown(stopCtx); serr != nil {
		srv.Close()
	}
	s.udp.Close()
	wg.Wait()
	return err
}

// ServeHTTP answers GET / and GET /healthz, and logs the request.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	src, err := netip.ParseAddrPort(r.RemoteAddr)
	remote := r.RemoteAddr
	if err == nil {
		src = unmap(src)
		remote = src.String()
	}
	status := http.StatusOK
	switch {
	case err != nil:
		status = http.StatusInternalServerError
		http.Error(w, fmt.Sprintf("remote address %q: %v", r.RemoteAddr, err), status)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		status = http.StatusMethodNotAllowed
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "only GET", status)
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, s.answer(src.Addr()))
	case r.URL.Path == "/healthz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	default:
		status = http.StatusNotFound
		http.NotFound(w, r)
	}
	s.log.Printf("tcp %s %s %s %d", remote, r.Method, r.URL.Path, status)
}

// serveUDP answers every datagram with the line GET / answers, from the address the
// datagram was sent to, until the socket closes.
func (s *server) serveUDP() error {
	buf, oob := make([]byte, 64<<10), make([]byte, 256)
	for {
		n, oobn, _, from, err := s.udp.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			return err
		}
		dst, ifindex := s.pktinfo.destination(oob[:oobn])
		client := unmap(from)
		if _, _, err := s.udp.WriteMsgUDPAddrPort([]byte(s.answer(client.Addr())), s.pktinfo.source(dst, ifindex), from); err != nil {
			s.log.Printf("udp %s %d bytes: answer: %v", client, n, err)
			continue
		}
		s.log.Printf("udp %s %d bytes", client, n)
	}
}
