// Package statuscmd implements `kubectl ovnk status`: every node's agent (from its
// heartbeat Lease and its pod) and every network's readiness on every node, on one
// screen; with --wait, until all of them are ready.
package statuscmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/zonereport"
)

// Defaults of the flags and of the polling of --wait.
const (
	DefaultTimeout = 5 * time.Minute
	// pollInterval is the wait between two looks of --wait; about the agents' own
	// heartbeat pace, so each look can see something new.
	pollInterval = 2 * time.Second
)

// Options are the flags and dependencies of `status`.
type Options struct {
	Wait    bool
	Timeout time.Duration
	Output  *cmdutil.Output

	f *cmdutil.Factory
	// Now is the clock ages and heartbeat freshness are measured with.
	Now func() time.Time
	// Interval is the wait between two looks of --wait.
	Interval time.Duration
}

// New returns the `status` command.
func New(f *cmdutil.Factory) *cobra.Command {
	return newCommand(&Options{f: f, Now: time.Now, Interval: pollInterval})
}

// newCommand returns the command around o, whose clock and interval tests set.
func newCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every node's agent and every network's readiness on each node",
		Long: `Show, on one screen, every node's ovnk agent — ready or not, whether it is the
leader, when it last reconciled its zone, and the reason it is not ready and its last
error — and every user-defined network, by the name network describe takes, with
its status (Ready, Pending, or why the leader refused it, e.g. SubnetOverlap), the
nodes that have programmed it and why the others have not. -o wide adds each
agent's version and each network's OVN name.

An agent is ready when its heartbeat Lease (ovnk-agent-<node> in the agent namespace)
was renewed within its lease duration, it is connected to its node's OVN northbound
database, it reaches its node's Open vSwitch database (when it programs the node
itself), it has reconciled its zone at least once, and its pod, if it runs as the
DaemonSet, is Ready. A node without a heartbeat Lease has no agent.

The first line says which OVN-Kubernetes runs the cluster (as version does) when
its DaemonSet is found. On a
cluster run by upstream OVN-Kubernetes a node's agent is its ovnkube-node pod,
ready when the pod is Ready (else the containers that are not, and why); no node
reports on its zone, so a network's status comes from the conditions upstream's
cluster manager sets (NetworkCreated, NetworkAllocationSucceeded) and READY is "-".

With --wait, look again every few seconds until every agent and every network on every
node is ready, showing progress on standard error; at the timeout, exit non-zero
naming what is still not ready.`,
		Example: `  # Agents and networks at a glance
  kubectl ovnk status

  # With the agents' versions and the networks' OVN names
  kubectl ovnk status -o wide

  # After an install or an upgrade: wait until everything is ready (at most 10 minutes)
  kubectl ovnk status --wait --timeout 10m

  # For scripts: the same as JSON, e.g. the nodes whose agent is not ready
  kubectl ovnk status -o jsonpath='{.nodes[?(@.ready==false)].node}'`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(o.f, o),
	}
	cmd.Flags().BoolVar(&o.Wait, "wait", false, "wait until every agent and every network on every node is ready")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", DefaultTimeout, "with --wait, how long to wait before giving up")
	o.Output = cmdutil.AddDataOutputFlag(cmd, "wide")
	return cmd
}

// Complete takes the factory; status has no arguments.
func (o *Options) Complete(f *cmdutil.Factory, _ []string) error {
	o.f = f
	return nil
}

// Validate checks the flags before anything is contacted.
func (o *Options) Validate() error {
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout %s is not positive: give a duration such as 5m", o.Timeout)
	}
	return o.Output.Validate()
}

// Run shows the status once, or with --wait until all is ready or the timeout.
func (o *Options) Run(ctx context.Context) error {
	conn, err := o.f.Connect()
	if err != nil {
		return err
	}
	namespace := o.f.Settings.AgentNamespace
	// Which OVN-Kubernetes runs the cluster does not change between looks.
	var cl *clusterkind.Cluster
	if got, err := clusterkind.Detect(ctx, conn.Clientset, namespace); err != nil {
		fmt.Fprintf(o.f.ErrOut, "Warning: which OVN-Kubernetes runs the cluster is unknown, so ovnk's agents are looked for: %v\n", conn.Explain(err))
	} else {
		cl = &got
	}
	zones := zonereport.NewReader(o.f)
	look := func(ctx context.Context) (Report, error) {
		in, err := gather(ctx, conn.Client, namespace, cl)
		if err != nil {
			return Report{}, conn.Explain(err)
		}
		in.reports = zones.Read(ctx, in.nodes, nil)
		return build(in, o.Now()), nil
	}
	if !o.Wait {
		r, err := look(ctx)
		if err != nil {
			return err
		}
		return o.print(r)
	}
	r, waitErr := o.wait(ctx, look)
	if r.Nodes == nil { // not even one look succeeded: nothing to show
		return waitErr
	}
	if err := o.print(r); err != nil {
		return err
	}
	return waitErr
}

// print writes the report in the -o format, or as tables.
func (o *Options) print(r Report) error {
	if !o.Output.Human() {
		return o.Output.PrintData(r, o.f.Out)
	}
	return newView(o.f.Renderer(o.f.Out), o.f.TableWidth(), o.f.Colour(), o.Output.Format() == "wide", o.Now()).render(o.f.Out, r)
}

// maxPendingNamed bounds how many things a timeout's message names.
const maxPendingNamed = 5

// wait looks until the report is ready or the timeout passes, showing progress on
// standard error. It returns the last report it got, and at the timeout an error naming
// what is still not ready. A look that fails ends the wait: the error (the cluster
// unreachable, the CRDs missing, access denied) would not go away by waiting.
func (o *Options) wait(ctx context.Context, look func(context.Context) (Report, error)) (Report, error) {
	deadline := time.NewTimer(o.Timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(o.Interval)
	defer ticker.Stop()
	p := newWaitProgress(o.f)
	defer p.finish()
	var last Report
	for {
		r, err := look(ctx)
		if err != nil {
			return last, err
		}
		last = r
		if r.Ready {
			return r, nil
		}
		p.show(r)
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-deadline.C:
			return last, timeoutError(o.Timeout, last)
		case <-ticker.C:
		}
	}
}

// timeoutError names what is still not ready when --wait gives up.
func timeoutError(timeout time.Duration, r Report) error {
	pending := r.Pending()
	named := pending[:min(len(pending), maxPendingNamed)]
	msg := fmt.Sprintf("timed out after %s; not ready: %s", timeout, strings.Join(named, "; "))
	if len(pending) > len(named) {
		msg += fmt.Sprintf("; and %d more", len(pending)-len(named))
	}
	return errors.New(msg)
}
