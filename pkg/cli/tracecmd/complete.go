package tracecmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// completeEndpoint completes SRC and DST: the pods of the namespace (of -n or the
// kubeconfig), node/NAME, and once a word has a slash, the pods of the namespace
// before it as NAMESPACE/POD.
func completeEndpoint(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= 2 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list := func(ctx context.Context, c client.Client) ([]string, error) {
			if ns, _, ok := strings.Cut(toComplete, "/"); ok && ns+"/" != nodePrefix {
				pods, err := cmdutil.ListPodNames(ns)(ctx, c)
				for i := range pods {
					pods[i] = ns + "/" + pods[i]
				}
				return pods, err
			}
			nodes, err := cmdutil.ListNodeNames(ctx, c)
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(nodes))
			for _, n := range nodes {
				out = append(out, nodePrefix+n)
			}
			ns, _, err := f.Namespace()
			if err != nil {
				return out, nil
			}
			pods, err := cmdutil.ListPodNames(ns)(ctx, c)
			if err != nil { // nodes are still worth offering
				return out, nil
			}
			return append(pods, out...), nil
		}
		return f.CompleteNames(list)(cmd, args, toComplete)
	}
}
