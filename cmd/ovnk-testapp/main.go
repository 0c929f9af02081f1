// Command ovnk-testapp is the server of the test pods: it tells whoever asks who it is
// and whom it saw, so a test learns from one answer which pod served it (a Service's
// backend, say) and which source address arrived there (after SNAT, or not).
//
// On TCP it serves HTTP: GET / answers one line "<hostname> <source-ip>", GET /healthz
// answers "ok" (for probes). On UDP, on the same port, it answers every datagram with
// the same line as GET /, from the address the datagram was sent to (so a client of a
// pod with several addresses gets its answer from the one it asked). It logs a line per request to stdout and exits 0 on SIGTERM
// or SIGINT. It uses the standard library only, so it builds static and its image
// needs no C library.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "ovnk-testapp:", err)
		os.Exit(1)
	}
}

// run parses the flags and serves until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("ovnk-testapp", flag.ContinueOnError)
	flags.SetOutput(stderr)
	port := flags.Int("port", 8080, "the TCP (HTTP) and UDP port to serve on; 0 picks a free one")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("port %d is out of range", *port)
	}
	hostname, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	s, err := listen(*port, hostname, stdout)
	if err != nil {
		return err
	}
	return s.serve(ctx)
}
