package clitest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/testenv"
)

// runningTimeout bounds how long Await waits for output, and Stop for the end.
const runningTimeout = 30 * time.Second

// Running is a command that runs until it is interrupted, such as a watch (-w),
// started by Harness.Start; its output is read as it comes.
type Running struct {
	Out, ErrOut LockedBuffer
	interrupt   context.CancelFunc
	done        chan error
}

// Start runs `kubectl ovnk PREFIX args…` on term in the background, until Stop or
// the end of the test.
func (h *Harness) Start(term Terminal, args ...string) *Running {
	r := &Running{done: make(chan error, 1)}
	root := h.root(term, &r.Out, &r.ErrOut)
	root.SetArgs(append(append([]string{}, h.Prefix...), args...))
	ctx, cancel := context.WithCancel(context.Background())
	r.interrupt = cancel
	h.T.Cleanup(cancel)
	go func() { r.done <- root.ExecuteContext(ctx) }()
	return r
}

// Await waits until standard output holds want exactly times times, and fails the
// test if it does not in time or the command ends first.
func (r *Running) Await(t *testing.T, want string, times int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*runningTimeout)
	defer cancel()
	err := testenv.Eventually(ctx, runningTimeout, fmt.Sprintf("%d× %q in the output", times, want), func(context.Context) error {
		select {
		case err := <-r.done:
			r.done <- err // for Stop
			return fmt.Errorf("the command ended: %v; stderr %q", err, r.ErrOut.String())
		default:
		}
		if n := strings.Count(r.Out.String(), want); n != times {
			return fmt.Errorf("%d times so far in %q", n, r.Out.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Stop interrupts the command, as Ctrl-C does, and fails the test unless it ends in
// time without an error.
func (r *Running) Stop(t *testing.T) {
	t.Helper()
	r.interrupt()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("the interrupted command failed: %v", err)
		}
	case <-time.After(runningTimeout):
		t.Fatal("the command did not end when interrupted")
	}
}
