package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// StopNode stops every process of node as a machine that fails would lose them:
// kubelet, the pods (its agent among them), containerd and its shims, then OVS and the
// node's zone. Its Node object and pods stay in the API server, as after a crash: a
// test deletes them to remove the node from the cluster. Nothing of it starts again;
// Down still removes what is left (its namespaces, its directory).
func (s *Sandbox) StopNode(ctx context.Context, node string) error {
	i := s.nodeIndex(node)
	if i < 0 {
		return fmt.Errorf("no node %q in the sandbox: its nodes are %s", node, strings.Join(NodeNames(), ", "))
	}
	n := s.Nodes[i]
	// The node's own pid files of a stage of Down's, in the same order.
	own := func(stage []string) []string {
		var out []string
		for _, p := range stage {
			if rest, ok := strings.CutPrefix(p, "n*/"); ok {
				out = append(out, filepath.Join(n.Dir, rest))
			}
		}
		return out
	}
	errs := []error{stopDaemons(ctx, s.Dir, io.Discard, own(kubeletStage))}
	errs = append(errs, removeCgroup(ctx, n.cgroupRoot()))
	errs = append(errs, stopDaemons(ctx, s.Dir, io.Discard, own(containerdStage)))
	errs = append(errs, killNamingDir(ctx, s.nodeDir(n), "containerd-shim"))
	for _, stage := range afterPodsStages {
		if files := own(stage); len(files) > 0 {
			errs = append(errs, stopDaemons(ctx, s.Dir, io.Discard, files))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop node %s: %w", node, err)
	}
	return nil
}
