package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/sandbox"
)

func execCommand(dir *string) *cobra.Command {
	var target sandbox.Target
	cmd := &cobra.Command{
		Use:   "exec (NAMESPACE/POD | --node NODE | --outside | --underlay) -- COMMAND [ARG...]",
		Short: "Run a command in a pod's, a node's or the outside world's network namespace",
		Long: `exec runs COMMAND inside the network namespace of a running pod, of a
node, of the outside world (192.0.2.10, where the who-am-i server listens on port 8080)
or of the underlay. The command sees this machine's files and processes; only its
network is the namespace's. Its exit status is exec's.

On a node, the OVS and OVN tools of the OVN root come first on PATH and find the
node's servers without options: ovs-vsctl show, ovn-nbctl show, ovn-sbctl show,
ovs-appctl -t ovs-vswitchd, ovn-appctl -t ovn-controller.`,
		Example: `  ovnk-sandbox exec blue/blue-a -- ip addr
  ovnk-sandbox exec --node ovnk-node-1 -- ovs-vsctl show
  ovnk-sandbox exec --node ovnk-node-2 -- curl -s http://192.0.2.10:8080/
  ovnk-sandbox exec --outside -- ip route`,
		Args: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 || dash == len(args) {
				return errors.New("put the command after --, e.g. ovnk-sandbox exec --node ovnk-node-1 -- ip addr")
			}
			if dash > 1 {
				return fmt.Errorf("name at most one pod before --, got %v", args[:dash])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash == 1 {
				target.Pod = args[0]
			}
			s, err := sandbox.Load(*dir)
			if err != nil {
				return err
			}
			c, err := s.Command(cmd.Context(), target, args[dash:]...)
			if err != nil {
				return err
			}
			// Replace this process, so the command owns the terminal and its exit
			// status is ours.
			if err := syscall.Exec(c.Path, c.Args, c.Env); err != nil {
				return fmt.Errorf("run %s: %w", c.Path, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&target.Node, "node", "", "run on this node (ovnk-node-1, …)")
	cmd.Flags().BoolVar(&target.Outside, "outside", false, "run in the outside world")
	cmd.Flags().BoolVar(&target.Underlay, "underlay", false, "run in the underlay that joins the nodes")
	cmd.MarkFlagsMutuallyExclusive("node", "outside", "underlay")
	return cmd
}

// daemonCommands are the sandbox's own daemons, which Up starts: hidden, as nobody
// runs them by hand. Each takes --dir (inherited) so its command line names the
// sandbox.
func daemonCommands(dir *string) []*cobra.Command {
	var listen, config string
	whoami := &cobra.Command{
		Use:    "whoami",
		Short:  "Answer every HTTP request with the address it came from (the outside world's server)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sandbox.ServeWhoAmI(cmd.Context(), listen, os.Stderr)
		},
	}
	whoami.Flags().StringVar(&listen, "listen", "", "host:port to listen on")
	forward := &cobra.Command{
		Use:    "forward",
		Short:  "Forward TCP between the host's loopback and the nodes' namespaces",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sandbox.RunForwarder(cmd.Context(), config, os.Stderr)
		},
	}
	forward.Flags().StringVar(&config, "config", "", "the forwarder's configuration (JSON)")
	return []*cobra.Command{whoami, forward}
}
