package live

import (
	"context"
	"errors"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/ovn"
)

// ExecSource reads a zone by running `ovnk-agent dump` in the node's agent pod.
type ExecSource struct {
	Factory *cmdutil.Factory
}

// Dump is being written (issue 5): find the agent pod on node, exec the dump, decode it.
func (s *ExecSource) Dump(ctx context.Context, node string) (*ovn.Dump, error) {
	return nil, errors.New("reading a zone through the agent pod is not built yet")
}
