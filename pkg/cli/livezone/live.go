// A zone is read straight from its NB endpoint (--nb, or the settings' nb-endpoints, as
// the local sandbox writes them) or, in a real cluster, by exec in a pod: `ovnk-agent
// dump` in the node's ovnk agent pod, or `ovsdb-client query` in the container that
// serves the NB of upstream OVN-Kubernetes' ovnkube-node pod on the node (interconnect)
// or of an ovnkube-db pod (one central NB, every node's).

package livezone

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/ovn"
)

// Source reads zones.
type Source interface {
	// Dump returns the NB contents of node's zone.
	Dump(ctx context.Context, node string) (*ovn.Dump, error)
}

// NBSource reads zones straight from their NB endpoints.
type NBSource struct {
	// Endpoints maps a node to its zone's NB endpoints, comma-separated.
	Endpoints map[string]string
	// Default serves every node Endpoints does not name; "" means no default.
	Default string
	// Timeout bounds connecting and reading; 0 means 10s.
	Timeout time.Duration
}

// Dump connects to node's NB, copies the tables and disconnects.
func (s NBSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	endpoint := s.Endpoints[node]
	if endpoint == "" {
		endpoint = s.Default
	}
	if endpoint == "" {
		return nil, fmt.Errorf("no NB endpoint for node %q: pass --nb ENDPOINT or list it under nb-endpoints in the settings file", node)
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: strings.Split(endpoint, ","), ConnectTimeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("read node %s's zone from %s: %w", node, endpoint, err)
	}
	defer c.Close()
	d, err := ovn.TakeDump(ctx, c, node)
	if err != nil {
		return nil, fmt.Errorf("read node %s's zone from %s: %w", node, endpoint, err)
	}
	return d, nil
}

// For picks the source a command uses: --nb (nbFlag) for any node, else the settings'
// nb-endpoints for the nodes they list, else exec into the pods of whichever
// OVN-Kubernetes runs on the cluster (ovnk's agent, else upstream's ovnkube-node or
// ovnkube-db).
func For(f *cmdutil.Factory, nbFlag string) Source {
	if nbFlag != "" {
		return NBSource{Default: nbFlag}
	}
	exec := &autoSource{f: f}
	if len(f.Settings.NBEndpoints) == 0 {
		return exec
	}
	return routed{nb: NBSource{Endpoints: f.Settings.NBEndpoints}, fallback: exec}
}

// routed reads the nodes with a configured NB endpoint directly and the rest by exec.
type routed struct {
	nb       NBSource
	fallback Source
}

func (r routed) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	if _, ok := r.nb.Endpoints[node]; ok {
		return r.nb.Dump(ctx, node)
	}
	return r.fallback.Dump(ctx, node)
}
