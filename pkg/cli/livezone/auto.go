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
// pods. With neither found it reads through the agent, whose error says how to install
// it.
type autoSource struct {
	f *cmdutil.Factory

	once sync.Once
	src  Source
	err  error
}

func (a *autoSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	a.once.Do(func() { a.src, a.err = a.pick(ctx) })
	if a.err != nil {
		return nil, a.err
	}
	return a.src.Dump(ctx, node)
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
	if cl.Kind == clusterkind.Upstream {
		return &UpstreamSource{Factory: a.f, Cluster: cl}, nil
	}
	return &ExecSource{Factory: a.f}, nil
}
