package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

// ServeWhoAmI answers every HTTP request on addr with the source address the
// connection came from, one line, until ctx ends. It stands in for a server on the
// internet in the sandbox's outside world: what a pod's traffic looks like once it has
// left the cluster (the node's address, after the gateway's SNAT).
func ServeWhoAmI(ctx context.Context, addr string, logw io.Writer) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("who-am-i server: %w", err)
	}
	return serveWhoAmI(ctx, l, log.New(logw, "", log.LstdFlags))
}

func serveWhoAmI(ctx context.Context, l net.Listener, logger *log.Logger) error {
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				host = r.RemoteAddr
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintln(w, host)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          logger,
	}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	logger.Printf("who-am-i server on %s", l.Addr())
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("who-am-i server on %s: %w", l.Addr(), err)
	}
	return nil
}
