package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// poll calls check until it returns nil or timeout passes, and then returns the last
// error with what was awaited. Every wait of the sandbox is a poll with a deadline.
func poll(ctx context.Context, timeout time.Duration, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		var final *finalError
		if errors.As(err, &final) {
			return fmt.Errorf("waiting for %s: %w", what, final.err)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("interrupted while waiting for %s: %w", what, ctx.Err())
			}
			return fmt.Errorf("waited %s for %s: %w", timeout, what, err)
		case <-time.After(delay):
		}
		if delay < 250*time.Millisecond {
			delay *= 2
		}
	}
}

// finalError ends a poll at once: no later attempt can succeed.
type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }

// waitStarted polls check for a daemon this invocation just started, and gives up as
// soon as the daemon exits; the error then ends with the daemon's last log lines.
func waitStarted(ctx context.Context, d *daemon, timeout time.Duration, what string, check func(context.Context) error) error {
	err := poll(ctx, timeout, what, func(ctx context.Context) error {
		if err := d.exitedEarly(); err != nil {
			return &finalError{err}
		}
		return check(ctx)
	})
	if err != nil && ctx.Err() == nil { // not when interrupted: the log would not say why
		return fmt.Errorf("%w\nlast lines of %s:\n%s", err, d.logFile, logTail(d.logFile, 30))
	}
	return err
}

// socketAccepts succeeds once a server accepts a connection on the unix socket. The
// socket file appears when the server binds, a moment before it listens, so only a
// connection proves it serves.
func socketAccepts(socket string) func(context.Context) error {
	return func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "unix", socket)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}

// tcpAccepts succeeds once something accepts TCP connections on addr.
func tcpAccepts(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}

// httpOK succeeds once url answers 200; otherwise the error holds the status and the
// start of the body, which for /readyz says what is not ready.
func httpOK(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
}
