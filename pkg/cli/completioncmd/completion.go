// Package completioncmd implements `kubectl ovnk completion SHELL`: shell completion
// scripts for kubectl-ovnk itself. Completion through `kubectl ovnk <TAB>` goes another
// way: kubectl runs completions/kubectl_complete-ovnk, which asks kubectl-ovnk directly.
package completioncmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// shells maps each supported shell to the cobra generator of its script.
var shells = map[string]func(root *cobra.Command, w io.Writer) error{
	"bash":       func(root *cobra.Command, w io.Writer) error { return root.GenBashCompletionV2(w, true) },
	"zsh":        func(root *cobra.Command, w io.Writer) error { return root.GenZshCompletion(w) },
	"fish":       func(root *cobra.Command, w io.Writer) error { return root.GenFishCompletion(w, true) },
	"powershell": func(root *cobra.Command, w io.Writer) error { return root.GenPowerShellCompletionWithDesc(w) },
}

// Options are the arguments and dependencies of `completion`.
type Options struct {
	shell string
	// cmd is the completion command: the script completes its root, on its output.
	cmd *cobra.Command
}

// New returns the `completion` command.
func New(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	o.cmd = &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script for kubectl-ovnk",
		Long: `completion prints a script that completes kubectl-ovnk's commands, flags, and the
names of networks, nodes and pods in the cluster.

For completion of "kubectl ovnk <TAB>" (through kubectl, version 1.26 or later), put
completions/kubectl_complete-ovnk from the release on your PATH instead: kubectl runs it
to complete a plugin's arguments.`,
		Example: `  # bash, for this shell
  source <(kubectl-ovnk completion bash)

  # bash, for every new shell
  kubectl-ovnk completion bash > ~/.local/share/bash-completion/completions/kubectl-ovnk

  # zsh
  kubectl-ovnk completion zsh > "${fpath[1]}/_kubectl-ovnk"

  # fish
  kubectl-ovnk completion fish > ~/.config/fish/completions/kubectl-ovnk.fish`,
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		Args:                  cobra.ExactArgs(1),
		DisableFlagsInUseLine: true,
		RunE:                  cmdutil.RunE(f, o),
	}
	return o.cmd
}

// Complete takes the shell.
func (o *Options) Complete(_ *cmdutil.Factory, args []string) error {
	o.shell = args[0]
	return nil
}

// Validate checks that there is a script for the shell.
func (o *Options) Validate() error {
	if _, ok := shells[o.shell]; !ok {
		return fmt.Errorf("no completion for shell %q: use bash, zsh, fish or powershell", o.shell)
	}
	return nil
}

// Run prints the script.
func (o *Options) Run(context.Context) error {
	return shells[o.shell](o.cmd.Root(), o.cmd.OutOrStdout())
}
