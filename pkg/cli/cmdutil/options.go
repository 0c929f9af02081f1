package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
)

// Options is how every command runs, kubectl's pattern: an Options struct per command
// holds its flags, and the command's RunE (RunE below) calls, in order:
//
//   - Complete, which takes the factory and the arguments and fills in what the flags
//     leave to them, without contacting the cluster;
//   - Validate, which checks the flags and the arguments and returns an error naming the
//     value and the fix: nothing is sent to the cluster before it passes;
//   - Run, which does the command's work.
//
// Counting the arguments stays cobra's (Args: cobra.NoArgs, ExactArgs, MaximumNArgs),
// in the words cobra gives every command; any other check of them is Validate's.
type Options interface {
	Complete(f *Factory, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// RunE is the cobra RunE of a command whose options are o.
func RunE(f *Factory, o Options) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(f, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}
