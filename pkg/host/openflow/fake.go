package openflow

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Fake is an in-memory Bridges for tests of code that programs flows. It holds the
// flows of each bridge by cookie in the normalised text OFCtl reads from a real bridge,
// validates like ovs-ofctl for the fields and actions it knows (see fakematch.go and
// fakeactions.go) and refuses everything else, and applies a Sync entirely or not at
// all. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	bridges map[string]map[uint64][]string // bridge → cookie → sorted normalised flows
	writes  int
}

var _ Bridges = (*Fake)(nil)

// NewFake returns a Fake holding the named bridges, each without flows.
func NewFake(bridges ...string) *Fake {
	f := &Fake{bridges: map[string]map[uint64][]string{}}
	for _, b := range bridges {
		f.AddBridge(b)
	}
	return f
}

// AddBridge adds a bridge without flows; adding one that exists does nothing. Sync and
// Flows refuse bridges that were never added, as ovs-ofctl refuses unknown bridges.
func (f *Fake) AddBridge(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bridges[name] == nil {
		f.bridges[name] = map[uint64][]string{}
	}
}

// Sync implements Bridges.
func (f *Fake) Sync(ctx context.Context, bridge string, cookie uint64, flows []Flow) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := checkArgs(bridge, cookie, flows); err != nil {
		return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: %w", cookie, bridge, err)
	}
	want := make([]string, 0, len(flows))
	for _, fl := range flows {
		n, err := fakeNormalise(fl)
		if err != nil {
			return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: flow %q: %w", cookie, bridge, fl.String(), err)
		}
		want = append(want, n)
	}
	if err := checkUnique(want); err != nil {
		return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: %w", cookie, bridge, err)
	}
	sortFlows(want)
	f.mu.Lock()
	defer f.mu.Unlock()
	cookies, ok := f.bridges[bridge]
	if !ok {
		return false, fmt.Errorf("sync flows of cookie %#x on bridge %s: %s is not a bridge", cookie, bridge, bridge)
	}
	if slices.Equal(cookies[cookie], want) {
		return false, nil
	}
	if len(want) == 0 {
		delete(cookies, cookie)
	} else {
		cookies[cookie] = want
	}
	f.writes++
	return true, nil
}

// Flows implements Bridges.
func (f *Fake) Flows(ctx context.Context, bridge string, cookie uint64) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cookies, ok := f.bridges[bridge]
	if !ok {
		return nil, fmt.Errorf("dump flows of cookie %#x on bridge %s: %s is not a bridge", cookie, bridge, bridge)
	}
	return slices.Clone(cookies[cookie]), nil
}

// Dump returns every flow of the bridge with its cookie, one a line, as
// `ovs-ofctl dump-flows --no-stats --no-names` would list them, ordered by cookie and
// then as Flows orders them; a bridge that was never added dumps as "".
func (f *Fake) Dump(bridge string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	cookies := f.bridges[bridge]
	keys := make([]uint64, 0, len(cookies))
	for c := range cookies {
		keys = append(keys, c)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var b strings.Builder
	for _, c := range keys {
		for _, fl := range cookies[c] {
			fmt.Fprintf(&b, " cookie=%#x, %s\n", c, fl)
		}
	}
	return b.String()
}

// Writes counts the Syncs that changed a bridge: a Sync that finds nothing to do does
// not count, which is how tests see that a repeated Sync wrote nothing.
func (f *Fake) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// fakeNormalise returns a flow in the text ovs-ofctl dumps it in (Flow.String's form),
// or why ovs-ofctl would refuse it or the Fake does not know it.
func fakeNormalise(fl Flow) (string, error) {
	if err := fl.validate(); err != nil {
		return "", err
	}
	m, err := normaliseMatch(fl.Match)
	if err != nil {
		return "", err
	}
	actions, err := normaliseActions(fl.Actions, m)
	if err != nil {
		return "", err
	}
	return Flow{Table: fl.Table, Priority: fl.Priority, Match: m.text, Actions: actions}.String(), nil
}
