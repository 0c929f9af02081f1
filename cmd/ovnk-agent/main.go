// Command ovnk-agent is the ovnk node agent, run as a DaemonSet with one replica per node.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ovnk/ovnk/pkg/agent"
	"github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/version"
)

func main() {
	root := &cobra.Command{
		Use:           "ovnk-agent",
		Short:         "The ovnk node agent: turns cluster intent into this node's OVN zone",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCommand(), dumpCommand(), versionCommand())
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func runCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the agent: reconcile this node's zone, and the cluster-wide work while elected",
		Example: `  # As the DaemonSet runs it
  ovnk-agent run --config /etc/ovnk/agent.conf

  # Outside a cluster, for one node
  ovnk-agent run --kubeconfig ~/.kube/config --node-name worker1 --nb-address unix:/var/run/ovn/ovnnb_db.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(cmd.Flags(), os.Getenv)
			if err != nil {
				return err
			}
			ctrl.SetLogger(zap.New())
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return agent.Run(ctx, cfg)
		},
	}
	config.AddFlags(cmd.Flags())
	return cmd
}

func dumpCommand() *cobra.Command {
	var nbAddress, node string
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Print this zone's NB contents as JSON (format " + ovn.DumpSchemaVersion + ")",
		Long: `dump prints every row of the NB tables ovnk programs or inspects — switches, routers,
their ports, static routes, policies, NAT, gateway chassis, address sets, port groups and
ACLs — ovnk's own and every other controller's, as one JSON document. kubectl ovnk reads
nodes this way, through exec into the agent's pod.`,
		Example: `  ovnk-agent dump --nb-address unix:/var/run/ovn/ovnnb_db.sock | jq '.tables.Logical_Router[].name'`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: strings.Split(nbAddress, ",")})
			if err != nil {
				return err
			}
			defer c.Close()
			d, err := ovn.TakeDump(ctx, c, node)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(d)
		},
	}
	cmd.Flags().StringVar(&nbAddress, "nb-address", ovn.DefaultNBEndpoint, "the NB endpoints, comma-separated (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT)")
	cmd.Flags().StringVar(&node, "node-name", os.Getenv("NODE_NAME"), "the node whose zone this is, recorded in the dump")
	return cmd
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the agent's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), version.String())
			return err
		},
	}
}
