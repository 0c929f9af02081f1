package packets_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// rigWatch runs a monitor (a command that prints a line for each change it sees) on a
// node until stopped, and keeps the lines it printed once it was watching.
type rigWatch struct {
	what string
	cmd  *exec.Cmd
	// marker is a part of the lines the watch's own readiness check causes, left out.
	marker string
	done   chan struct{}

	mu    sync.Mutex
	lines []string
}

// rigMarkerTable is a routing table no one uses: the route the kernel watch adds
// there to see that it watches.
const rigMarkerTable = "4242"

// rigMarkerRoute is that route's destination, a documentation prefix (RFC 5737).
const rigMarkerRoute = "198.51.100.0/24"

// watchFlows watches the OpenFlow table of a node's bridge: `ovs-ofctl monitor BRIDGE
// watch:!initial` prints every flow added, modified or deleted, by anyone. It watches
// once the switch has acknowledged the monitor request.
func (r *rig) watchFlows(ctx context.Context, node, bridge string) *rigWatch {
	r.tb.Helper()
	w := r.startWatch(ctx, "flows of "+bridge+" on "+node, node, "", "ovs-ofctl", "monitor", bridge, "watch:!initial")
	r.untilWatching(ctx, w, func(line string) bool { return strings.HasPrefix(line, "NXST_FLOW_MONITOR reply") }, nil)
	return w
}

// watchKernel watches a node's addresses, routes, rules and links: `ip monitor` prints
// every change. It watches once it has printed a marker route added for the purpose.
func (r *rig) watchKernel(ctx context.Context, node string) *rigWatch {
	r.tb.Helper()
	w := r.startWatch(ctx, "addresses, routes, rules and links of "+node, node, "table "+rigMarkerTable, "ip", "monitor", "address", "route", "rule", "link")
	mark := func(verb string) error {
		_, err := r.exec(ctx, sandbox.Target{Node: node}, "ip", "route", verb, rigMarkerRoute, "dev", "lo", "table", rigMarkerTable)
		return err
	}
	r.untilWatching(ctx, w, func(line string) bool { return strings.Contains(line, w.marker) }, func() error {
		_ = mark("del") // an earlier try's
		return mark("add")
	})
	if err := mark("del"); err != nil {
		r.fatalf("%v", err)
	}
	return w
}

// startWatch starts argv on node; lines with marker are left out.
func (r *rig) startWatch(ctx context.Context, what, node, marker string, argv ...string) *rigWatch {
	r.tb.Helper()
	cmd, err := r.s.Command(ctx, sandbox.Target{Node: node}, argv...)
	if err != nil {
		r.fatalf("%v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.fatalf("watch %s: %v", what, err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		r.fatalf("watch %s: %v", what, err)
	}
	w := &rigWatch{what: what, cmd: cmd, marker: marker, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
		}
	}()
	r.tb.Cleanup(func() { w.kill() })
	return w
}

// untilWatching waits until the watch has printed a line ready accepts, doing poke
// (when not nil) at every look, and forgets what it printed until then.
func (r *rig) untilWatching(ctx context.Context, w *rigWatch, ready func(string) bool, poke func() error) {
	r.tb.Helper()
	err := testenv.Eventually(ctx, 30*time.Second, "the watch of "+w.what+" to start", func(context.Context) error {
		if w.startWatching(ready) {
			return nil
		}
		select {
		case <-w.done:
			return fmt.Errorf("the watch ended: %s", strings.Join(w.changes(), "\n"))
		default:
		}
		if poke != nil {
			if err := poke(); err != nil {
				return err
			}
		}
		return errors.New("it has not shown that it watches yet")
	})
	if err != nil {
		r.fatalf("%v", err)
	}
}

// startWatching reports whether the watch printed a line ready accepts; if so, what
// it printed until then is forgotten.
func (w *rigWatch) startWatching(ready func(string) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range w.lines {
		if ready(line) {
			w.lines = nil
			return true
		}
	}
	return false
}

// changes returns the changes the watch has seen so far.
func (w *rigWatch) changes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, line := range w.lines {
		if strings.TrimSpace(line) == "" || w.marker != "" && strings.Contains(line, w.marker) {
			continue
		}
		out = append(out, line)
	}
	return out
}

// stop returns the changes the watch saw and ends it (what it prints as it ends is
// no change).
func (w *rigWatch) stop() []string {
	changes := w.changes()
	w.kill()
	return changes
}

func (w *rigWatch) kill() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	<-w.done
	_ = w.cmd.Wait()
}
