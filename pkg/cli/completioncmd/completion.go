// Package completioncmd implements `kubectl ovnk completion SHELL`: shell completion
// scripts for kubectl-ovnk itself. Completion through `kubectl ovnk <TAB>` goes another
// way: kubectl runs completions/kubectl_complete-ovnk, which asks kubectl-ovnk directly.
package completioncmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// shells maps each supported shell to the cobra generator of its script.
var shells = map[string]func(root *cobra.Command, w io.Writer) error{
	"bash":       func(root *cobra.Command, w io.Writer) error { return root.GenBashCompletionV2(w, true) },
	"zsh":        func(root *cobra.Command, w io.Writer) error { return root.GenZshCompletion(w) },
	"fish":       func(root *cobra.Command, w io.Writer) error { return root.GenFishCompletion(w, true) },
	"powershell": func(root *cobra.Command, w io.Writer) error { return root.GenPowerShellCompletionWithDesc(w) },
}

// New returns the `completion` command.
func New() *cobra.Command {
	return &cobra.Command{
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
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), onlyShells),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return shells[args[0]](cmd.Root(), cmd.OutOrStdout())
		},
	}
}

func onlyShells(_ *cobra.Command, args []string) error {
	if _, ok := shells[args[0]]; !ok {
		return fmt.Errorf("no completion for shell %q: use bash, zsh, fish or powershell", args[0])
	}
	return nil
}
