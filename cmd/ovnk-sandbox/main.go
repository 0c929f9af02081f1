// Command ovnk-sandbox runs the local cluster of `make demo`: etcd, kube-apiserver and
// three simulated nodes, each an ovnk-agent with its own OVN Northbound database, left
// running in the background (docs/demo.md).
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
		Long: `ovnk-sandbox starts, checks and removes a cluster on this machine: etcd,
kube-apiserver, and three nodes, each an ovnk-agent with its own OVN Northbound
ovsdb-server. Its processes keep running after the command returns; their pid files and
logs are in the sandbox directory. There is no kubelet: pods stay Pending, but the
agents allocate their addresses and program them into every node's NB.`,
		Example: `  # What make demo and make demo-down run
  ovnk-sandbox up
  eval "$(ovnk-sandbox env)"
  kubectl ovnk status
  ovnk-sandbox down`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&dir, "dir", ".sandbox", "the sandbox directory (unix socket paths in it must stay under 108 bytes)")
	root.AddCommand(upCommand(&dir), downCommand(&dir), statusCommand(&dir), envCommand(&dir))
	return root
}

func upCommand(dir *string) *cobra.Command {
	opts := sandbox.Options{KubeBinDir: os.Getenv("OVNK_KUBE_BIN"), AgentPath: agentBesideExecutable()}
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
	cmd.Flags().StringVar(&opts.KubeBinDir, "kube-bin", opts.KubeBinDir, "directory holding etcd and kube-apiserver (default $OVNK_KUBE_BIN)")
	cmd.Flags().StringVar(&opts.AgentPath, "agent", opts.AgentPath, "the ovnk-agent binary")
	return cmd
}

// agentBesideExecutable is where make puts ovnk-agent: next to ovnk-sandbox in bin/.
func agentBesideExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return "ovnk-agent"
	}
	return filepath.Join(filepath.Dir(exe), "ovnk-agent")
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
