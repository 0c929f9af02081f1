// Command ovnk-agent is the ovnk node agent, run as a DaemonSet with one replica per node.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/version"
)

func main() {
	root := &cobra.Command{
		Use:           "ovnk-agent",
		Short:         "The ovnk node agent: turns cluster intent into this node's OVN zone",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the agent's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), version.String())
			return err
		},
	})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
