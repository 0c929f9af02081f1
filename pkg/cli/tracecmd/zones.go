package tracecmd

import (
	"context"
	"sync"

	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/trace"
)

// zoneCache is the trace's ZoneSource: it reads each node's zone at most once, lets
// several readers of one zone wait for the same read, and remembers every read (the
// dump, or why there is none) so that --save can write exactly what the trace used.
type zoneCache struct {
	src livezone.Source

	mu    sync.Mutex
	reads map[string]*zoneRead
}

// zoneRead is one node's zone, being read or read.
type zoneRead struct {
	done chan struct{}
	dump *ovn.Dump
	zone *trace.Zone
	err  error
}

func newZoneCache(src livezone.Source) *zoneCache {
	return &zoneCache{src: src, reads: map[string]*zoneRead{}}
}

// start begins reading node's zone unless a read has begun already. The read runs
// under ctx, the command's: every reader shares it, so one reader giving up does not
// cut a read short for another.
func (c *zoneCache) start(ctx context.Context, node string) *zoneRead {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.reads[node]; ok {
		return r
	}
	r := &zoneRead{done: make(chan struct{})}
	c.reads[node] = r
	go func() {
		defer close(r.done)
		r.dump, r.err = c.src.Dump(ctx, node)
		if r.err == nil {
			r.zone, r.err = trace.NewZone(node, r.dump)
		}
	}()
	return r
}

// Zone returns node's zone, reading it if nobody has yet.
func (c *zoneCache) Zone(ctx context.Context, node string) (*trace.Zone, error) {
	r := c.start(ctx, node)
	select {
	case <-r.done:
		return r.zone, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// prefetch reads the zones of nodes at the same time and waits for them all; the error
// is the first node's, in the order given, that could not be read.
func (c *zoneCache) prefetch(ctx context.Context, nodes ...string) error {
	for _, n := range nodes {
		c.start(ctx, n)
	}
	for _, n := range nodes {
		if _, err := c.Zone(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// used is what the trace read: each node's dump, or the error in its place.
func (c *zoneCache) used() (dumps map[string]*ovn.Dump, errs map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dumps, errs = map[string]*ovn.Dump{}, map[string]string{}
	for node, r := range c.reads {
		<-r.done
		switch {
		case r.dump != nil:
			dumps[node] = r.dump
		case r.err != nil:
			errs[node] = r.err.Error()
		}
	}
	return dumps, errs
}
