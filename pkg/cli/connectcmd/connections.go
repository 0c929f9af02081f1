package connectcmd

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// connectionsOptions are the flags and dependencies of `connections`.
type connectionsOptions struct {
	f      *cmdutil.Factory
	cmd    *cobra.Command
	output *cmdutil.Output
	now    func() time.Time
	// args should be none: one connect is for describe.
	args []string
}

func newConnectionsCmd(f *cmdutil.Factory, now func() time.Time) *cobra.Command {
	o := &connectionsOptions{f: f, now: now}
	cmd := &cobra.Command{
		Use:     "connections",
		Aliases: []string{"connection", "cnc"},
		Short:   "List the connects between networks: their networks, subnets, status and progress on the nodes",
		Long: `List the ClusterNetworkConnects: the networks each connects (those it selects that
can be connected), its connect subnets, what it connects (pod, service), its status,
and on how many nodes it is programmed (NODES: the nodes whose agent reports the
connect router in its ovnk.io/zone-status annotation).

STATUS is the reason of the first condition that is False (Accepted, then Ready),
else Ready; Pending until the leader has written conditions.
` + "`kubectl ovnk connections describe NAME`" + ` says what reaches what through one connect.`,
		Example: `  # Every connect
  kubectl ovnk connections

  # What one connect makes reachable, and how far it is programmed
  kubectl ovnk connections describe blue-green

  # For scripts: a List of the ClusterNetworkConnects, or their names
  kubectl ovnk connections -o json
  kubectl ovnk connections -o name
  kubectl ovnk connections -o jsonpath='{.items[*].metadata.name}'`,
		RunE: cmdutil.RunE(f, o),
	}
	o.cmd = cmd
	o.output = cmdutil.AddOutputFlag(cmd, "wide")
	cmd.AddCommand(newDescribeCmd(f, now))
	return cmd
}

// Complete takes the factory and the arguments, which should be none.
func (o *connectionsOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks that no connect is named, and -o, before anything is contacted.
func (o *connectionsOptions) Validate() error {
	if len(o.args) > 0 {
		return fmt.Errorf("%s takes no arguments (got %q): to see one connect, run kubectl ovnk connections describe %s", o.cmd.CommandPath(), o.args[0], o.args[0])
	}
	return o.output.Validate()
}

// Run lists the connects.
func (o *connectionsOptions) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	_, snap, err := openSnapshot(ctx, o.f)
	if err != nil {
		return err
	}
	if !o.output.Human() {
		return o.printObjects(snap.connects)
	}
	if len(snap.connects) == 0 {
		_, err := fmt.Fprintln(o.f.ErrOut, "No connections found: `kubectl ovnk connect A B` connects two networks.")
		return err
	}
	p := humanview.NewPalette(o.f, o.f.Out)
	t := p.Table(
		humanview.Column{Header: "NAME", MinWidth: 10},
		humanview.Column{Header: "NETWORKS", Stack: true, MinWidth: 10, Fold: foldList("/")},
		// Wide enough for an IPv4 subnet on one line; an IPv6 one may wrap after a colon.
		humanview.Column{Header: "SUBNETS", Stack: true, MinWidth: len("192.168.0.0/16"), Fold: foldList(":"), Optional: 2},
		humanview.Column{Header: "CONNECTIVITY", Stack: true, Fold: foldList(""), Optional: 3},
		humanview.Column{Header: "STATUS"},
		humanview.Column{Header: "NODES"},
		humanview.Column{Header: "AGE", Optional: 1},
	)
	reports := cluster.ReadZoneReports(snap.nodes)
	for i := range snap.connects {
		c := &snap.connects[i]
		var subnets []string
		for _, s := range c.Spec.ConnectSubnets {
			subnets = append(subnets, string(s.CIDR))
		}
		status, h := statusOf(c)
		rs := humanview.Readiness(reports, cluster.ConnectZoneStatusKey(c.Name), "connect")
		ready := humanview.CountReady(rs)
		t.Add(
			humanview.Text(c.Name),
			humanview.List(refs(snap.selected(c).connected), p.Faint),
			humanview.List(subnets, p.Faint),
			humanview.List(connectivityWordsOf(c), p.Faint),
			humanview.Styled(status, healthStyle(p, h)),
			humanview.Styled(strconv.Itoa(ready)+"/"+strconv.Itoa(len(rs)), p.Ratio(ready, len(rs))),
			humanview.Text(humanview.Age(c.CreationTimestamp, o.now())),
		)
	}
	t.Wide = o.output.Format() == "wide"
	return t.Render(o.f.Out, o.f.TableWidth())
}

// printObjects prints the connects as a kubectl List.
func (o *connectionsOptions) printObjects(cncs []ovnkv1.ClusterNetworkConnect) error {
	objs := make([]client.Object, len(cncs))
	for i := range cncs {
		objs[i] = &cncs[i]
	}
	return o.output.PrintList(objs, o.f.Out)
}
