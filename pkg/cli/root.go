// Package cli assembles the `kubectl ovnk` command tree. Each noun lives in its own
// package under pkg/cli; this one only wires them together.
package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/ovnk/ovnk/pkg/cli/versioncmd"
)

// NewRootCommand returns `kubectl ovnk` with kubectl's connection flags (--kubeconfig,
// --context, -n, --as, …) shared by every subcommand.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	kubeFlags := genericclioptions.NewConfigFlags(true)
	cmd := &cobra.Command{
		Use:   "ovnk",
		Short: "Inspect and manage OVN-Kubernetes networking",
		Long: `kubectl ovnk inspects and manages OVN-Kubernetes networking: user-defined
networks, connections between them, EgressIPs, the Layer2 topology upgrade, and the
live OVN topology and route tables of every node.`,
		Annotations: map[string]string{
			// Usage lines read "kubectl ovnk …", as users type it through kubectl.
			cobra.CommandDisplayNameAnnotation: "kubectl ovnk",
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	kubeFlags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(versioncmd.New(kubeFlags, streams))
	return cmd
}
