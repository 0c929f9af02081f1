package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"time"
)

// The forwarder joins the host's loopback and the nodes' namespaces without touching
// the host's network: the agents, inside their nodes, reach the API server on the
// host's loopback through a listener made inside each node, and the host reaches each
// agent's HTTP endpoint through a host port. One process serves every forward of the
// sandbox.

// Forward is one TCP forwarding: each connection accepted on Listen inside the namespace
// ListenNetns is joined to a new connection to Dial made inside DialNetns. An empty
// namespace is the forwarder's own (the host's).
type Forward struct {
	// ListenNetns is the namespace the listener is made in.
	ListenNetns string `json:"listenNetns,omitempty"`
	// Listen is the TCP address listened on, host:port.
	Listen string `json:"listen"`
	// DialNetns is the namespace connections to Dial are made from.
	DialNetns string `json:"dialNetns,omitempty"`
	// Dial is the TCP address each accepted connection is joined to.
	Dial string `json:"dial"`
}

func (f Forward) String() string {
	at := func(ns, addr string) string {
		if ns == "" {
			return addr + " (host)"
		}
		return addr + " in " + ns
	}
	return at(f.ListenNetns, f.Listen) + " -> " + at(f.DialNetns, f.Dial)
}

// forwardFile names the forwarder's configuration in the sandbox directory.
const forwardFile = "forward.json"

// dialTimeout bounds the forwarder's connection to a forward's destination: one that
// does not listen yet (an agent still starting) is refused at once anyway.
const dialTimeout = 5 * time.Second

// ForwarderConfig is what the forwarder serves: TCP forwards and, optionally, the API
// server's CONNECT proxy into the nodes.
type ForwarderConfig struct {
	Forwards []Forward `json:"forwards"`
	Proxy    *Proxy    `json:"proxy,omitempty"`
}

// RunForwarder serves what the file config (ForwarderConfig as JSON) lists until ctx
// ends. It binds every listener before serving any, and fails, naming the forward, if
// one cannot be bound; log receives a line per failed connection.
func RunForwarder(ctx context.Context, config string, logw io.Writer) error {
	data, err := os.ReadFile(config)
	if err != nil {
		return fmt.Errorf("read forwarder configuration: %w", err)
	}
	var cfg ForwarderConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("forwarder configuration %s: %w", config, err)
	}
	return serveForwards(ctx, cfg, log.New(logw, "", log.LstdFlags))
}

// serveForwards binds every forward's listener and the proxy's, then serves them until
// ctx ends.
func serveForwards(ctx context.Context, cfg ForwarderConfig, logger *log.Logger) error {
	forwards := cfg.Forwards
	listeners := make([]net.Listener, 0, len(forwards))
	closeAll := func() {
		for _, l := range listeners {
			l.Close()
		}
	}
	for _, f := range forwards {
		l, err := listenIn(f.ListenNetns, f.Listen)
		if err != nil {
			closeAll()
			return fmt.Errorf("forward %s: %w", f, err)
		}
		listeners = append(listeners, l)
	}
	var proxyListener net.Listener
	if cfg.Proxy != nil {
		l, err := cfg.Proxy.listen()
		if err != nil {
			closeAll()
			return err
		}
		proxyListener = l
		listeners = append(listeners, l)
	}
	logger.Printf("forwarding %d addresses", len(forwards))
	var wg sync.WaitGroup
	errs := make([]error, len(forwards)+1)
	for i, f := range forwards {
		wg.Go(func() { errs[i] = serveForward(ctx, f, listeners[i], logger) })
	}
	if proxyListener != nil {
		wg.Go(func() { errs[len(forwards)] = cfg.Proxy.serve(ctx, proxyListener, logger) })
	}
	<-ctx.Done()
	closeAll()
	wg.Wait()
	return errors.Join(errs...)
}

// acceptBackoff is the first wait after a failed accept; it doubles up to a second.
const acceptBackoff = 5 * time.Millisecond

// serveForward accepts connections on l until it is closed.
func serveForward(ctx context.Context, f Forward, l net.Listener, logger *log.Logger) error {
	return acceptLoop(ctx, l, "forward "+f.String(), logger, func(in net.Conn) {
		defer in.Close()
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		out, err := dialIn(dctx, f.DialNetns, f.Dial)
		cancel()
		if err != nil {
			logger.Printf("forward %s: %v", f, err)
			return
		}
		defer out.Close()
		stop := context.AfterFunc(ctx, func() { in.Close(); out.Close() })
		defer stop()
		splice(in, out)
	})
}

// acceptLoop hands each connection accepted on l to serve, on a goroutine of its own,
// until l is closed or ctx ends, and waits for them. A failed accept (out of
// descriptors, say) is retried after a pause: the listener is still good, and one that
// stopped serving would leave its connections in the backlog unanswered.
func acceptLoop(ctx context.Context, l net.Listener, what string, logger *log.Logger, serve func(net.Conn)) error {
	var conns sync.WaitGroup
	defer conns.Wait()
	backoff := acceptBackoff
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			logger.Printf("%s: accept: %v (retrying in %v)", what, err, backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = acceptBackoff
		conns.Go(func() { serve(c) })
	}
}

// splice copies both ways until both directions are done, passing each end's close on
// as a half-close, so a request-then-response protocol sees its EOFs where it expects.
func splice(a, b net.Conn) {
	var wg sync.WaitGroup
	one := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	wg.Go(func() { one(a, b) })
	wg.Go(func() { one(b, a) })
	wg.Wait()
}
