package livezone

import (
	"context"
	"sync"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/ovn"
)

// autoSource reads zones through whichever OVN-Kubernetes the cluster runs, found on
// the first read: ovnk's agent where its DaemonSet is, else upstream's ovnkube-node
// pods in interconnect mode, else upstream's central NB in its ovnkube-db pods. With
// none found it reads through the agent, whose error says how to install it.
type autoSource struct {
	f *cmdutil.Factory

	// mu guards src, which is kept once found: a failed look (one node's deadline
	// passing, the API server busy) is not kept, so the next read looks again.
	mu  sync.Mutex
	src Source
}

func (a *autoSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	src, err := a.source(ctx)
	if err != nil {
		return nil, err
	}
	return src.Dump(ctx, node)
}

func (a *autoSource) source(ctx context.Context) (Source, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.src == nil {
		src, err := a.pick(ctx)
		if err != nil {
			return nil, err
		}
		a.src = src
	}
	return a.src, nil
}

func (a *autoSource) pick(ctx context.Context) (Source, error) {
	conn, err := a.f.Connect()
	if err != nil {
		return nil, err
	}
	cl, err := clusterkind.Detect(ctx, conn.Clientset, a.f.Settings.AgentNamespace)
	if err != nil {
		return nil, conn.Explain(err)
	}
	switch {
	case cl.Kind == clusterkind.Upstream && cl.Interconnect:
		return &UpstreamSource{Factory: a.f, Cluster: cl}, nil
	case cl.Kind == clusterkind.Upstream:
		return &CentralSource{Factory: a.f, Cluster: cl}, nil
	}
	return &ExecSource{Factory: a.f}, nil
}
