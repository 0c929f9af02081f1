package tracecmd

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn"
)

// gatedSource is a zone source whose reads all wait for release, and that reports
// every read as it starts: a read that starts while another waits runs beside it.
type gatedSource struct {
	started chan string
	release chan struct{}

	mu    sync.Mutex
	reads map[string]int
}

func (s *gatedSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	s.mu.Lock()
	s.reads[node]++
	s.mu.Unlock()
	s.started <- node
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if node == "broken" {
		return nil, errors.New("no ovnk agent pod on node broken")
	}
	return &ovn.Dump{SchemaVersion: ovn.DumpSchemaVersion, Node: node, Tables: map[string][]map[string]any{}}, nil
}

// TestZoneCacheReadsInParallelOnce: prefetching the two ends reads both zones at the
// same time, a zone asked for twice is read once, and what was read — or why not — is
// what --save writes.
func TestZoneCacheReadsInParallelOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src := &gatedSource{started: make(chan string, 8), release: make(chan struct{}), reads: map[string]int{}}
	c := newZoneCache(src)
	done := make(chan error, 1)
	go func() { done <- c.prefetch(ctx, "node1", "node2", "node1") }()
	started := map[string]bool{}
	for len(started) < 2 {
		select {
		case n := <-src.started:
			started[n] = true
		case <-ctx.Done():
			t.Fatalf("only %v started before any read finished: the zones are not read in parallel", started)
		}
	}
	close(src.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if z, err := c.Zone(ctx, "node2"); err != nil || z.Node != "node2" {
				t.Errorf("zone of node2: %v, %v", z, err)
			}
		})
	}
	wg.Wait()
	if _, err := c.Zone(ctx, "broken"); err == nil || err.Error() != "no ovnk agent pod on node broken" {
		t.Errorf("zone of broken: %v", err)
	}
	if err := c.prefetch(ctx, "node1", "broken"); err == nil {
		t.Errorf("prefetch of an unreadable zone succeeded")
	}
	for node, n := range src.reads {
		if n != 1 {
			t.Errorf("node %s's zone read %d times", node, n)
		}
	}
	dumps, errs := c.used()
	if len(dumps) != 2 || dumps["node1"] == nil || dumps["node2"] == nil || errs["broken"] != "no ovnk agent pod on node broken" {
		t.Errorf("used: dumps %v, errors %v", dumps, errs)
	}
}
