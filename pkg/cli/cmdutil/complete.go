package cmdutil

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// completionTimeout bounds the API calls of a shell completion: a TAB must not hang.
const completionTimeout = 3 * time.Second

// CompleteNames returns a cobra completion function listing the names list yields,
// filtered by the word being typed. A failing list completes nothing (a TAB never
// prints errors into the user's command line).
func (f *Factory) CompleteNames(list func(ctx context.Context, c client.Client) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		names, err := list(ctx, c)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// ListNodeNames lists the cluster's node names, for completion of --node.
func ListNodeNames(ctx context.Context, c client.Client) ([]string, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	return names, nil
}

// ListPodNames returns a lister of the names of namespace's pods, for completion of
// the commands that take a pod.
func ListPodNames(namespace string) func(ctx context.Context, c client.Client) ([]string, error) {
	return func(ctx context.Context, c client.Client) ([]string, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		names := make([]string, 0, len(pods.Items))
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		return names, nil
	}
}
