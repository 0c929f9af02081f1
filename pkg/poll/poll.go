// Package poll waits for a condition by checking it again and again, a little less often
// each time, until it holds or a deadline passes. It is how the sandbox and the tests
// wait for servers and objects: never by sleeping for a fixed time.
package poll

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

// Delays between two checks: the first is short, so what is nearly ready is seen at
// once; they double up to the longest, so a long wait does not busy the machine.
const (
	firstDelay   = 10 * time.Millisecond
	longestDelay = 250 * time.Millisecond
)

// Until calls check until it returns nil or timeout passes, and then returns the last
// error with what was awaited. A check that returns Stop(err) ends the wait at once.
func Until(ctx context.Context, timeout time.Duration, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := firstDelay
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		var stop *stopError
		if errors.As(err, &stop) {
			return fmt.Errorf("waiting for %s: %w", what, stop.err)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("interrupted while waiting for %s: %w", what, ctx.Err())
			}
			return fmt.Errorf("waited %s for %s: %w", timeout, what, err)
		case <-time.After(delay):
		}
		if delay < longestDelay {
			delay *= 2
		}
	}
}

// Stop marks the error of a check after which no later check can succeed (the server
// being waited for has exited, say), so that Until returns it at once.
func Stop(err error) error { return &stopError{err} }

type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

// Dials is a check that succeeds once something accepts a connection on address, of
// network "tcp" or "unix". A unix socket's file appears when its server binds, a
// moment before it listens, so only a connection proves that it serves.
func Dials(network, address string) func(context.Context) error {
	return func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}

// HTTPOK is a check that succeeds once url answers 200; otherwise its error holds the
// status and the start of the body, which for /readyz says what is not ready.
func HTTPOK(url string) func(context.Context) error {
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
