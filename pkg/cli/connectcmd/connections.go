package connectcmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/watch"
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
	list   *cmdutil.ListFlags
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
` + "`kubectl ovnk connections describe NAME`" + ` says what reaches what through one connect.

As with kubectl get: -l selects connects by their labels (the API server matches
them); --sort-by orders the table or the List by a field of the
ClusterNetworkConnects; -o custom-columns shows the fields you choose; -w, after the
list, prints a connect again each time its object changes (a deleted one with
STATUS Deleted), until Ctrl-C. Connects belong to no namespace: -n and -A change
nothing.`,
		Example: `  # Every connect
  kubectl ovnk connections

  # What one connect makes reachable, and how far it is programmed
  kubectl ovnk connections describe blue-green

  # The connects labelled team=payments, the newest last
  kubectl ovnk connections -l team=payments --sort-by .metadata.creationTimestamp

  # Fields of your choice
  kubectl ovnk connections -o custom-columns=NAME:.metadata.name,SUBNETS:.spec.connectSubnets[*].cidr

  # Follow the connects as the leader and the nodes program them, until Ctrl-C
  kubectl ovnk connections -w

  # For scripts: a List of the ClusterNetworkConnects, or their names
  kubectl ovnk connections -o json
  kubectl ovnk connections -o name
  kubectl ovnk connections -o jsonpath='{.items[*].metadata.name}'`,
		RunE: cmdutil.RunE(f, o),
	}
	o.cmd = cmd
	o.output = cmdutil.AddOutputFlag(cmd, "wide")
	o.list = cmdutil.AddListFlags(cmd, "connects", false)
	cmd.AddCommand(newDescribeCmd(f, now))
	return cmd
}

// Complete takes the factory and the arguments, which should be none.
func (o *connectionsOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.f, o.args = f, args
	return nil
}

// Validate checks that no connect is named, and the flags, before anything is
// contacted.
func (o *connectionsOptions) Validate() error {
	if len(o.args) > 0 {
		return fmt.Errorf("%s takes no arguments (got %q): to see one connect, run kubectl ovnk connections describe %s", o.cmd.CommandPath(), o.args[0], o.args[0])
	}
	if err := o.output.Validate(); err != nil {
		return err
	}
	return o.list.Validate()
}

// Run lists the connects; with -w, then follows them.
func (o *connectionsOptions) Run(ctx context.Context) error {
	look, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
	defer cancel()
	s, snap, err := openSnapshot(look, o.f)
	if err != nil {
		return err
	}
	// The connects -l selects, and the version of their list for -w.
	var list ovnkv1.ClusterNetworkConnectList
	if err := s.Client.List(look, &list, o.list.ListOptions()...); err != nil {
		return s.Failed(err, "list ClusterNetworkConnects")
	}
	cncs, err := o.sorted(list.Items)
	if err != nil {
		return err
	}
	if o.output.Human() {
		snap = s.withReports(look, snap)
	}
	v := &connectionsView{o: o, p: humanview.NewPalette(o.f, o.f.Out), snap: snap}
	v.feed = cmdutil.NewTableFeed(o.f.Out, v.render)
	if err := v.start(snap, cncs); err != nil || !o.list.Watch {
		return err
	}
	watched := []cmdutil.Watched{{List: &ovnkv1.ClusterNetworkConnectList{}, ResourceVersion: list.ResourceVersion, Options: o.list.ListOptions()}}
	return s.Watch(ctx, watched, func(ctx context.Context, t watch.EventType, obj client.Object) error {
		if !o.output.Human() {
			return o.output.PrintWatched(obj, o.f.Out)
		}
		look, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
		defer cancel()
		c := obj.(*ovnkv1.ClusterNetworkConnect)
		snap, err := s.snapshot(look)
		if err == nil {
			snap = s.withReports(look, snap)
		}
		if ctx.Err() != nil {
			return nil // Ctrl-C while reading: the table stays as last printed
		}
		if err != nil {
			// Only the watch failing ends -w, as with kubectl get -w: a failed look
			// beside it is said, and the row shows what was read before.
			fmt.Fprintf(o.f.ErrOut, "Warning: %v; %s's row shows the networks and nodes read before\n", err, c.Name)
		} else {
			v.snap = snap
		}
		deleted := t == watch.Deleted
		return v.feed.Changed(c.Name, v.row(v.snap, c, deleted), deleted)
	})
}

// sorted orders the connects by name, or by --sort-by.
func (o *connectionsOptions) sorted(items []ovnkv1.ClusterNetworkConnect) ([]ovnkv1.ClusterNetworkConnect, error) {
	slices.SortFunc(items, func(a, b ovnkv1.ClusterNetworkConnect) int { return strings.Compare(a.Name, b.Name) })
	objs := make([]client.Object, len(items))
	for i := range items {
		objs[i] = &items[i]
	}
	if err := o.list.Sort(objs); err != nil {
		return nil, err
	}
	out := make([]ovnkv1.ClusterNetworkConnect, len(objs))
	for i, obj := range objs {
		out[i] = *obj.(*ovnkv1.ClusterNetworkConnect)
	}
	return out, nil
}

// connectionsView prints what `connections` shows: the table, or the objects in -o's
// format.
type connectionsView struct {
	o *connectionsOptions
	p humanview.Palette
	// feed prints the table, then its rows as -w sees connects change.
	feed *cmdutil.TableFeed[[]humanview.Cell]
	// snap is the cluster as last read, which a row falls back on when reading it
	// again fails while watching.
	snap *snapshot
}

// start prints the list of connects.
func (v *connectionsView) start(snap *snapshot, cncs []ovnkv1.ClusterNetworkConnect) error {
	o := v.o
	if !o.output.Human() {
		objs := make([]client.Object, len(cncs))
		for i := range cncs {
			objs[i] = &cncs[i]
		}
		if o.list.Watch {
			return o.output.PrintWatchList(objs, o.f.Out)
		}
		return o.output.PrintList(objs, o.f.Out)
	}
	if len(cncs) == 0 {
		matching := ""
		if o.list.Selector != "" {
			matching = " with labels matching -l " + o.list.Selector
		}
		_, err := fmt.Fprintf(o.f.ErrOut, "No connections found%s: `kubectl ovnk connect A B` connects two networks.\n", matching)
		return err
	}
	keys := make([]string, len(cncs))
	rows := make([][]humanview.Cell, len(cncs))
	for i := range cncs {
		keys[i], rows[i] = cncs[i].Name, v.row(snap, &cncs[i], false)
	}
	return v.feed.Start(keys, rows)
}

// row is c's row of the table: deleted, its STATUS says so.
func (v *connectionsView) row(snap *snapshot, c *ovnkv1.ClusterNetworkConnect, deleted bool) []humanview.Cell {
	p := v.p
	var subnets []string
	for _, s := range c.Spec.ConnectSubnets {
		subnets = append(subnets, string(s.CIDR))
	}
	status, h := statusOf(c)
	statusStyle := healthStyle(p, h)
	if deleted {
		status, statusStyle = statusDeleted, p.Faint
	}
	rs := humanview.Readiness(snap.reports, cluster.ConnectZoneStatusKey(c.Name), "connect")
	ready := humanview.CountReady(rs)
	return []humanview.Cell{
		humanview.Text(c.Name),
		humanview.List(refs(snap.selected(c).connected), p.Faint),
		humanview.List(subnets, p.Faint),
		humanview.List(connectivityWordsOf(c), p.Faint),
		humanview.Styled(status, statusStyle),
		humanview.Styled(strconv.Itoa(ready)+"/"+strconv.Itoa(len(rs)), p.Ratio(ready, len(rs))),
		humanview.Text(humanview.Age(c.CreationTimestamp, v.o.now())),
	}
}

// render draws rows as the table, fitted to the terminal.
func (v *connectionsView) render(rows [][]humanview.Cell, w io.Writer) error {
	t := v.p.Table(
		humanview.Column{Header: "NAME", MinWidth: 10},
		humanview.Column{Header: "NETWORKS", Stack: true, MinWidth: 10, Fold: foldList("/")},
		// Wide enough for an IPv4 subnet on one line; an IPv6 one may wrap after a colon.
		humanview.Column{Header: "SUBNETS", Stack: true, MinWidth: len("192.168.0.0/16"), Fold: foldList(":"), Optional: 2},
		humanview.Column{Header: "CONNECTIVITY", Stack: true, Fold: foldList(""), Optional: 3},
		humanview.Column{Header: "STATUS"},
		humanview.Column{Header: "NODES"},
		humanview.Column{Header: "AGE", Optional: 1},
	)
	t.Wide = v.o.output.Format() == "wide"
	t.Rows = rows
	return t.Render(w, v.o.f.TableWidth())
}

// statusDeleted is the STATUS of a connect deleted while -w watches.
const statusDeleted = "Deleted"
