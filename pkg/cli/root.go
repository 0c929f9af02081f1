// Package cli assembles the `kubectl ovnk` command tree. Each noun lives in its own
// package under pkg/cli; this one only wires them together.
package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/completioncmd"
	"github.com/ovnk/ovnk/pkg/cli/connectcmd"
	"github.com/ovnk/ovnk/pkg/cli/installcmd"
	"github.com/ovnk/ovnk/pkg/cli/networkcmd"
	"github.com/ovnk/ovnk/pkg/cli/routescmd"
	"github.com/ovnk/ovnk/pkg/cli/statuscmd"
	"github.com/ovnk/ovnk/pkg/cli/topologycmd"
	"github.com/ovnk/ovnk/pkg/cli/tracecmd"
	"github.com/ovnk/ovnk/pkg/cli/upgradecmd"
	"github.com/ovnk/ovnk/pkg/cli/versioncmd"
	"github.com/ovnk/ovnk/pkg/ctrlruntimelog"
)

// NewRootCommand returns `kubectl ovnk` with kubectl's connection flags (--kubeconfig,
// --context, -n, --as, …) and the plugin's settings flags shared by every subcommand.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	f := &cmdutil.Factory{IOStreams: streams, Kube: genericclioptions.NewConfigFlags(true), Getenv: os.Getenv}
	return NewRootCommandWith(f)
}

// NewRootCommandWith builds the tree around a given Factory; tests set its streams,
// environment and terminal.
func NewRootCommandWith(f *cmdutil.Factory) *cobra.Command {
	// The plugin reports through its errors and output, never controller-runtime's log.
	ctrlruntimelog.Discard()
	cmd := &cobra.Command{
		// The binary's name, so completion scripts call it; users read the display name.
		Use:   "kubectl-ovnk",
		Short: "Inspect and manage OVN-Kubernetes networking",
		Long: `kubectl ovnk inspects and manages OVN-Kubernetes networking: user-defined
networks, connections between them, the Layer2 topology upgrade, the live OVN
topology and route tables of every node, and packets traced through them.`,
		Example: `  # Install the agent and CRDs, then create a network for namespace blue
  kubectl ovnk install
  kubectl ovnk network create blue -n blue --topology layer3 --subnet 10.10.0.0/16

  # Is every node's agent ready, and every network programmed?
  kubectl ovnk status

  # What a node's zone holds for the network, and its routes
  kubectl ovnk topology blue/blue --node worker1
  kubectl ovnk routes blue/blue --node worker1 --policies`,
		Annotations: map[string]string{
			// Usage lines read "kubectl ovnk …", as users type it through kubectl.
			cobra.CommandDisplayNameAnnotation: "kubectl ovnk",
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			settings, err := cmdutil.LoadSettings(cmd.Flags(), f.Getenv)
			if err != nil {
				return err
			}
			f.Settings = settings
			return nil
		},
	}
	f.Kube.AddFlags(cmd.PersistentFlags())
	cmdutil.AddSettingsFlags(cmd.PersistentFlags())
	// Our own completion command, with examples and kubectl's plugin completion explained.
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.AddCommand(
		networkcmd.New(f),
		connectcmd.NewConnect(f),
		connectcmd.NewDisconnect(f),
		connectcmd.NewConnections(f),
		statuscmd.New(f),
		upgradecmd.New(f),
		topologycmd.New(f),
		routescmd.New(f),
		tracecmd.New(f),
		installcmd.NewInstall(f),
		installcmd.NewUninstall(f),
		completioncmd.New(f),
		versioncmd.New(f),
	)
	refuseUnknownSubcommands(cmd)
	return cmd
}

// refuseUnknownSubcommands makes every command group below root (a command with
// sub-commands) fail on a word that names none of its sub-commands, with cobra's
// suggestions, as cobra does for the root itself. Left alone, a group with no Run of its
// own prints its help and exits 0 whatever follows it, so `network delet` looked like
// success. The root keeps cobra's own check: a Run there would make `kubectl ovnk`
// alone run it.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasParent() || !c.HasSubCommands() {
		return
	}
	// cobra fills in its default distance only for the root's own check.
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	switch {
	case !c.Runnable():
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownSubcommand(cmd, args[0], subcommandSuggestions(cmd, args[0]))
		}
	case c.Args == nil:
		// A group that runs on its own (connections lists) judges its arguments itself;
		// only a word that cobra would take for a mistyped sub-command is refused here.
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			if s := subcommandSuggestions(cmd, args[0]); len(s) > 0 {
				return unknownSubcommand(cmd, args[0], s)
			}
			return nil
		}
	}
}

// subcommandSuggestions are the sub-commands of group that word may have meant, by
// cobra's rules (edit distance, prefix, SuggestFor), unless the group turned them off.
func subcommandSuggestions(group *cobra.Command, word string) []string {
	if group.DisableSuggestions {
		return nil
	}
	return group.SuggestionsFor(word)
}

// unknownSubcommand is the error cobra gives for an unknown command under the root, in
// its words, so every level of the tree reads the same.
func unknownSubcommand(group *cobra.Command, word string, suggestions []string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, group.CommandPath())
	if len(suggestions) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(suggestions, "\n\t")
	}
	return errors.New(msg)
}
