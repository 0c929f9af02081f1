package connectcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// disconnectOptions are the flags and dependencies of `disconnect`.
type disconnectOptions struct {
	f      *cmdutil.Factory
	cmd    *cobra.Command
	dryRun string
	// args name the connect, or the networks it connects.
	args []string
}

func newDisconnectCmd(f *cmdutil.Factory) *cobra.Command {
	o := &disconnectOptions{f: f}
	cmd := &cobra.Command{
		Use:   "disconnect NAME | NETWORK NETWORK [NETWORK…]",
		Short: "Delete a connect, named or found by the networks it connects",
		Long: `Delete a ClusterNetworkConnect: the networks it connects stop reaching each other
through it (connects of their own keep working). Name the connect, or name the
networks it connects, all of them, as connect takes them (NAME for a
ClusterUserDefinedNetwork, NAMESPACE/NAME for a UserDefinedNetwork): the connect that
selects exactly those networks is deleted, and when none or several do, nothing is,
and the error names the candidates.

The ` + NetworkNameLabel + ` labels connect put on ClusterUserDefinedNetworks stay: they
only name the networks.`,
		Example: `  # By name
  kubectl ovnk disconnect blue-green

  # By the networks it connects
  kubectl ovnk disconnect blue green

  # Say what would be deleted, and delete nothing
  kubectl ovnk disconnect blue tenant-a/web --dry-run`,
		ValidArgsFunction: completeDisconnectArgs(f),
		RunE:              cmdutil.RunE(f, o),
	}
	o.cmd = cmd
	cmd.Flags().StringVar(&o.dryRun, "dry-run", dryRunNone, "say what would be deleted and delete nothing: client (no change is requested) or server (the API server checks the delete)")
	cmd.Flags().Lookup("dry-run").NoOptDefVal = dryRunClient
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{dryRunNone, dryRunClient, dryRunServer}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete takes the factory and the connect, or its networks.
func (o *disconnectOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks the arguments and --dry-run before anything is contacted.
func (o *disconnectOptions) Validate() error {
	args := o.args
	if len(args) == 0 {
		return fmt.Errorf("%s takes a connect's NAME or the networks it connects, e.g. kubectl ovnk disconnect blue-green or kubectl ovnk disconnect blue green (`kubectl ovnk connections` lists the connects)", o.cmd.CommandPath())
	}
	switch o.dryRun {
	case dryRunNone, dryRunClient, dryRunServer:
	default:
		return fmt.Errorf("--dry-run=%s: use --dry-run (or =client) to say what would be deleted, or --dry-run=server to have the API server check the delete", o.dryRun)
	}
	for _, arg := range args {
		if err := checkRef(arg); err != nil {
			if len(args) == 1 {
				return fmt.Errorf("connect %q: not a connect name; `kubectl ovnk connections` lists the connects", arg)
			}
			return err
		}
	}
	return nil
}

// Run finds the connect and deletes it.
func (o *disconnectOptions) Run(ctx context.Context) error {
	args := o.args
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	s, snap, err := openSnapshot(ctx, o.f)
	if err != nil {
		return err
	}
	target, err := findConnect(snap, args)
	if err != nil {
		return err
	}
	suffix := ""
	opts := []client.DeleteOption{client.Preconditions{UID: &target.UID}}
	switch o.dryRun {
	case dryRunClient:
		_, err := fmt.Fprintf(o.f.Out, "clusternetworkconnect.%s/%s deleted (dry run)\n", ovnkv1.GroupName, target.Name)
		return err
	case dryRunServer:
		opts, suffix = append(opts, client.DryRunAll), " (server dry run)"
	}
	err = s.Client.Delete(ctx, target, opts...)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("connect %s was deleted by someone else meanwhile", target.Name)
	}
	if err != nil {
		return s.Failed(err, "delete ClusterNetworkConnect "+target.Name)
	}
	_, err = fmt.Fprintf(o.f.Out, "clusternetworkconnect.%s/%s deleted%s\n", ovnkv1.GroupName, target.Name, suffix)
	return err
}

// findConnect finds the connect args name: one argument is a connect's name, several
// are the networks a connect selects exactly.
func findConnect(snap *snapshot, args []string) (*ovnkv1.ClusterNetworkConnect, error) {
	if len(args) == 1 {
		if c := snap.connect(args[0]); c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("no connect named %s: `kubectl ovnk connections` lists the connects; to name a connect by its networks, give all of them", args[0])
	}
	var nets []netview.Network
	for _, arg := range args {
		n, err := resolve(snap.networks, arg)
		if err != nil {
			return nil, err
		}
		nets = append(nets, n)
	}
	var exact []*ovnkv1.ClusterNetworkConnect
	var near []string
	for i := range snap.connects {
		c := &snap.connects[i]
		theirs := snap.selected(c).all()
		switch {
		case sameNetworks(theirs, nets):
			exact = append(exact, c)
		case len(shared(nets, theirs)) > 0:
			near = append(near, fmt.Sprintf("%s (%s)", c.Name, strings.Join(refs(theirs), ", ")))
		}
	}
	switch len(exact) {
	case 1:
		return exact[0], nil
	case 0:
		if len(near) == 0 {
			return nil, fmt.Errorf("no connect connects %s: none of them is connected (`kubectl ovnk connections` lists the connects)", describeNetworks(nets))
		}
		return nil, fmt.Errorf("no connect connects exactly %s; connects of some of them: %s: name the connect to delete, or all of its networks", describeNetworks(nets), strings.Join(near, "; "))
	}
	names := make([]string, len(exact))
	for i, c := range exact {
		names[i] = c.Name
	}
	return nil, fmt.Errorf("several connects connect exactly %s: %s: name the one to delete, e.g. kubectl ovnk disconnect %s", describeNetworks(nets), andList(names), names[0])
}
