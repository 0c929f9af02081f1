// Package upgradecmd implements `kubectl ovnk upgrade-status`: where the Layer2 topology
// upgrade of OKEP-5094 stands on every node and every primary Layer2 network, what
// blocks it and what the operator does next; with --watch, until it is complete.
//
// The assessment is pkg/l2upgrade's (Assess): this package gathers its inputs — the
// cluster state from the API server, each node's zone read live, each agent's phase
// from its heartbeat Lease — and draws the result.
package upgradecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
)

// Defaults of the flags and of the polling of --watch.
const (
	DefaultTimeout = 30 * time.Minute
	// pollInterval is the wait between two looks of --watch. Each look reads every
	// node's zone, so it is slower than status's: a node converts in about one
	// reconcile, and a drain takes longer than that.
	pollInterval = 5 * time.Second
	// zoneReaders bounds how many zones are read at once.
	zoneReaders = 8
)

// Options are the flags and dependencies of `upgrade-status`.
type Options struct {
	Watch   bool
	Timeout time.Duration
	// NB is --nb: read the zone of a one-node cluster from this NB endpoint.
	NB     string
	Output *cmdutil.Output

	f *cmdutil.Factory
	// Interval is the wait between two looks of --watch.
	Interval time.Duration
	// source reads the zones; nil means livezone.For(f, NB).
	source livezone.Source
	// flags tell whether --timeout was given.
	flags *pflag.FlagSet
}

// New returns the `upgrade-status` command.
func New(f *cmdutil.Factory) *cobra.Command {
	return newCommand(&Options{f: f, Interval: pollInterval})
}

// newCommand returns the command around o, whose interval and zone source tests set.
func newCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgrade-status",
		Short: "Show where the Layer2 topology upgrade stands on every node and network, and what to do next",
		Long: `Show where the Layer2 topology upgrade of OKEP-5094 stands: the move of every
primary Layer2 network from the legacy topology (each node's gateway router on the
network's switch) to the transit router.

A node converts only when no pod of a Layer2 network runs on it, and then says so
with the annotation k8s.ovn.org/layer2-topology-version: "2.0". Until every node has,
the upgraded zones keep temporary upgrade ports, named
trtos-<network>_ovn_layer2_switch-upgrade, to reach the nodes still on the legacy
topology.

For each node: its version annotation ("-" when unset), its phase — upgraded,
converting (its zone is being rebuilt; new Layer2 pods wait), blocked (Layer2 pods
still run on it), or legacy (not converted yet, or its agent runs
--layer2-topology=v1) — the pods that block it, and the networks whose upgrade ports
its zone still holds. For each primary Layer2 network: the nodes on each topology,
the zones still holding its upgrade ports, and its transit subnets when the defaults
overlapped its subnets and others were chosen. Then how many nodes are upgraded, and
what to do next, most pressing first. The upgrade is complete when every node is
upgraded and no zone holds an upgrade port.

The nodes, pods and networks come from the API server; a network's id comes from
its object, or, on a cluster run by upstream OVN-Kubernetes, from its
NetworkAttachmentDefinitions. Each node's zone is read live through its agent with
pods/exec, 8 nodes at a time (ovnk's agent, or upstream's ovnkube-node pod, or its
ovnkube-db pod once for every node when one central NB serves them all, found with
no configuration), or straight from each node's NB listed under the settings'
nb-endpoints (or, on a one-node cluster, --nb); each ovnk agent's phase comes from
its heartbeat Lease in the agent namespace (upstream has none: its nodes are judged
by their annotation, pods and zone). Only running pods block a node: a pending one holds no connection yet. A zone that cannot be read is reported, and
the node is judged by its annotation and pods alone.

With --watch, look again every few seconds until the upgrade is complete, redrawing
the view in place on a terminal (elsewhere, printing each state that differs from
the last); at the timeout, exit non-zero naming what still blocks the upgrade. Ctrl-C
stops watching.`,
		Example: `  # Where the upgrade stands, and what to do next
  kubectl ovnk upgrade-status

  # A node is blocked by Layer2 pods: drain it, then follow the upgrade until it is done
  kubectl drain worker2 --ignore-daemonsets --delete-emptydir-data
  kubectl ovnk upgrade-status --watch --timeout 1h

  # For scripts: the report as JSON, or the nodes still blocked by pods
  kubectl ovnk upgrade-status -o json
  kubectl ovnk upgrade-status -o jsonpath='{.nodes[?(@.phase=="blocked")].node}'

  # Wait in CI until the upgrade is complete (non-zero exit at the timeout)
  kubectl ovnk upgrade-status --watch --timeout 30m -o jsonpath='{.complete}'`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cmdutil.RunE(o.f, o),
	}
	o.flags = cmd.Flags()
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "look again every few seconds until the upgrade is complete")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", DefaultTimeout, "with --watch, how long to wait for the upgrade to complete before giving up")
	cmd.Flags().StringVar(&o.NB, "nb", "", "read the zone of a one-node cluster from this NB endpoint (unix:PATH, tcp:HOST:PORT, ssl:HOST:PORT) instead of through its agent; for more nodes, list each node's NB under nb-endpoints in the settings file")
	o.Output = cmdutil.AddDataOutputFlag(cmd)
	cmd.Flag("output").Usage = "output format: json, yaml, jsonpath=…, go-template=… (default: tables)"
	return cmd
}

// Complete takes the factory; upgrade-status has no arguments.
func (o *Options) Complete(f *cmdutil.Factory, _ []string) error {
	o.f = f
	return nil
}

// Validate checks the flags before anything is contacted.
func (o *Options) Validate() error {
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout %s is not positive: give a duration such as 30m", o.Timeout)
	}
	if o.flags.Changed("timeout") && !o.Watch {
		return fmt.Errorf("--timeout %s applies only with --watch: add --watch to wait for the upgrade, or drop --timeout", o.Timeout)
	}
	return o.Output.Validate()
}

// Run shows the upgrade once, or with --watch until it is complete, the timeout, or
// the context ends (Ctrl-C).
func (o *Options) Run(ctx context.Context) error {
	if o.Watch {
		// Ctrl-C ends the watch cleanly: the view stays as last drawn.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	}
	conn, err := o.f.Connect()
	if err != nil {
		return err
	}
	look := func(ctx context.Context) (assessment, error) {
		// A source per look: what one read (a central NB's dump, or its failure) is
		// kept for the look alone, so that --watch sees the zones as they become.
		src := o.source
		if src == nil {
			src = livezone.For(o.f, o.NB)
		}
		a, err := assess(ctx, conn.Client, src, o.f.Settings.AgentNamespace)
		if err != nil {
			return assessment{}, conn.Explain(err)
		}
		if o.NB != "" && a.Report.Total > 1 {
			// Every node has a zone of its own: one NB would stand for all of them.
			return assessment{}, fmt.Errorf("--nb %s reads one zone, but the cluster has %d nodes, each with its own: drop --nb to read every zone through its agent, or list each node's NB under nb-endpoints in the settings file",
				o.NB, a.Report.Total)
		}
		return a, nil
	}
	if !o.Watch {
		a, err := look(ctx)
		if err != nil {
			return err
		}
		if !o.Output.Human() {
			warn(o.f, a.Warnings)
			return o.Output.PrintData(a.Report, o.f.Out)
		}
		return o.view().render(o.f.Out, a)
	}
	return o.watch(ctx, look)
}

// view is the human view for the factory's terminal.
func (o *Options) view() *view {
	return newView(o.f.Renderer(o.f.Out), o.f.Width(), o.f.TableWidth(), o.f.Colour())
}

// warn writes what the assessment left out on standard error, for the -o formats,
// whose standard output is the report alone.
func warn(f *cmdutil.Factory, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(f.ErrOut, "Warning: "+w)
	}
}

// watch looks until the upgrade is complete, the timeout, or the context ends. A look
// that fails ends the watch: the error (the cluster unreachable, the CRDs missing,
// access denied) would not go away by waiting. A zone that cannot be read does not
// fail a look.
func (o *Options) watch(ctx context.Context, look func(context.Context) (assessment, error)) error {
	// The timeout bounds the looks too: one look reads every zone, which may be slow.
	// It cancels them rather than setting a deadline: with a deadline client-go's rate
	// limiter refuses early, with an error of its own, a wait that would pass it.
	looks, cancel := context.WithCancel(ctx)
	defer cancel()
	timeout := time.AfterFunc(o.Timeout, cancel)
	defer timeout.Stop()
	ticker := time.NewTicker(o.Interval)
	defer ticker.Stop()
	d := newDisplay(o)
	var last *assessment
	// end finishes the display with the last assessment and returns err.
	end := func(err error) error {
		if last == nil {
			return err
		}
		if perr := d.finish(*last); perr != nil {
			return perr
		}
		return err
	}
	for {
		a, err := look(looks)
		if ctx.Err() != nil {
			// Interrupted (Ctrl-C) while looking: what the look saw is incomplete.
			return end(interrupted(ctx))
		}
		if looks.Err() != nil && (err != nil || !a.Report.Complete) {
			// The timeout fell during the look, whose zones may then have been cut short
			// (a look that found the upgrade complete stands): report the last complete
			// look.
			if last == nil {
				return fmt.Errorf("timed out after %s before the first look at the cluster completed: the zones may be slow to read; raise --timeout", o.Timeout)
			}
			return end(timeoutError(o.Timeout, last.Report))
		}
		if err != nil {
			return end(err)
		}
		last = &a
		if a.Report.Complete {
			return end(nil)
		}
		if err := d.show(a); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return end(interrupted(ctx))
		case <-looks.Done():
			if ctx.Err() != nil {
				return end(interrupted(ctx))
			}
			return end(timeoutError(o.Timeout, a.Report))
		case <-ticker.C:
		}
	}
}

// interrupted is the watch's result when its context ended: nil for a cancellation
// (Ctrl-C: the user stopped watching), else the context's error.
func interrupted(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}

// maxBlockingNamed bounds how many next actions a timeout's message names.
const maxBlockingNamed = 3

// timeoutError names what still blocks the upgrade when --watch gives up.
func timeoutError(timeout time.Duration, r l2upgrade.Report) error {
	msg := fmt.Sprintf("timed out after %s with %d/%d nodes upgraded", timeout, r.Upgraded, r.Total)
	if len(r.Next) == 0 {
		return errors.New(msg)
	}
	named := r.Next[:min(len(r.Next), maxBlockingNamed)]
	msg += "; still to do: " + strings.Join(named, "; ")
	if len(r.Next) > len(named) {
		msg += fmt.Sprintf("; and %d more (kubectl ovnk upgrade-status lists them)", len(r.Next)-len(named))
	}
	return errors.New(msg)
}
