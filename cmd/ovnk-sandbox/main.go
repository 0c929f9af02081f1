// Command ovnk-sandbox runs the local cluster of `make demo`: a control plane and three
// simulated nodes, each a network namespace with its own OVS and OVN daemons, containerd
// and kubelet, the agent running as the DaemonSet `kubectl ovnk install` applies, joined
// by an underlay that routes to an outside world, left running in the background
// (docs/demo.md).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := rootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func rootCommand() *cobra.Command {
	var dir string
	root := &cobra.Command{
		Use:   "ovnk-sandbox",
		Short: "Run a local three-node ovnk cluster to try kubectl ovnk on",
		Long: `ovnk-sandbox starts, checks and removes a Kubernetes cluster on this machine: etcd,
kube-apiserver, kube-controller-manager, kube-scheduler, and three nodes. Each node is a
network namespace (and a mount namespace of its own) with what an OVN-Kubernetes node
runs: an Open_vSwitch database and ovs-vswitchd (userspace datapath), the node's OVN
zone (NB, SB, ovn-northd), ovn-controller, containerd and kubelet. The agent is
installed with kubectl ovnk install and runs as a DaemonSet pod on every node; pods are
wired by its CNI plugin, ovnk-cni, from locally built images (no registry). The nodes'
uplinks meet in an underlay namespace (172.18.0.0/16) that routes to an outside world
(192.0.2.10, with a server answering each request with the address it came from). The
sandbox plays the nodes' installer: the gateway bridge br-ex with the node's address.
exec runs host commands in pods' and nodes' network namespaces and in the outside world.

Its processes keep running after the command returns; their pid files and logs are in
the sandbox directory. It needs root (network namespaces).`,
		Example: `  # What make demo and make demo-down run
  ovnk-sandbox up
  eval "$(ovnk-sandbox env)"
  kubectl ovnk status
  ovnk-sandbox down

  # The outside world, from a node: it answers with the node's address
  ovnk-sandbox exec --node ovnk-node-1 -- curl -s http://192.0.2.10:8080/`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&dir, "dir", ".sandbox", "the sandbox directory (unix socket paths in it must stay under 108 bytes)")
	root.AddCommand(upCommand(&dir), downCommand(&dir), statusCommand(&dir), envCommand(&dir), execCommand(&dir))
	root.AddCommand(daemonCommands(&dir)...)
	return root
}

func upCommand(dir *string) *cobra.Command {
	// make build puts the other programs next to ovnk-sandbox in bin/.
	opts := sandbox.ProgramOptions(filepath.Dir(executable()), os.Getenv("OVNK_KUBE_BIN"))
	opts.HelperPath = executable()
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the sandbox, or check that the running one is ready",
		Long: `up starts the sandbox and returns once every process is ready. Run again, it only
checks the running sandbox; if a process of it is gone (after a reboot, say), it removes
the sandbox and starts a new one.`,
		Example: `  eval "$(scripts/deps.sh)"   # exports OVNK_KUBE_BIN
  ovnk-sandbox up --dir .sandbox`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Dir, opts.Progress = *dir, cmd.ErrOrStderr()
			s, err := sandbox.Up(cmd.Context(), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "use it with:\n  %s\n", s.Env())
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.KubeBinDir, "kube-bin", opts.KubeBinDir, "directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubelet (default $OVNK_KUBE_BIN)")
	cmd.Flags().StringVar(&opts.AgentPath, "agent", opts.AgentPath, "the ovnk-agent binary")
	return cmd
}

// executable is this program, which also runs the sandbox's own daemons.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return exe
}

func downCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:     "down",
		Short:   "Stop the sandbox's processes and remove its directory",
		Example: `  ovnk-sandbox down --dir .sandbox`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sandbox.Down(cmd.Context(), *dir, cmd.ErrOrStderr())
		},
	}
}

func statusCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether each process of the sandbox runs and is ready",
		Long: `status lists the sandbox's processes with their pid, whether each answers its
readiness check, and its log. It exits non-zero when any is not ready.`,
		Example: `  ovnk-sandbox status`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sandbox.Load(*dir)
			if err != nil {
				return err
			}
			statuses := s.Status(cmd.Context())
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "COMPONENT\tPID\tSTATUS\tLOG")
			bad := 0
			for _, st := range statuses {
				pid, status := "-", "ready"
				if st.PID != 0 {
					pid = fmt.Sprint(st.PID)
				}
				if st.Problem != "" {
					status = st.Problem
					bad++
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", st.Name, pid, status, st.Log)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d processes are not ready: see their logs, or start anew with `ovnk-sandbox down` and `ovnk-sandbox up`", bad, len(statuses))
			}
			return nil
		},
	}
}

func envCommand(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "env",
		Short: "Print the shell line that points kubectl and kubectl ovnk at the sandbox",
		Long: `env prints export KUBECONFIG=… OVNK_PLUGIN_CONFIG=…: the sandbox's admin kubeconfig, and
the kubectl ovnk settings file that maps each node to its NB, so topology and routes
read the NBs directly.`,
		Example: `  eval "$(ovnk-sandbox env)"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sandbox.Load(*dir)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), s.Env())
			return nil
		},
	}
}
