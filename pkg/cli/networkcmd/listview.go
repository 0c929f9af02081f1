package networkcmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// statusDeleted is the STATUS of a network deleted while -w watches.
const statusDeleted = "Deleted"

// listView prints what `network list` shows: the table, or the objects in -o's format.
type listView struct {
	o *listOptions
	s *session
	p humanview.Palette
	// feed prints the table, then its rows as -w sees networks change.
	feed *cmdutil.TableFeed[[]humanview.Cell]
	// around is what was last read beside the networks, which a row falls back on
	// when reading it again fails while watching.
	around surroundings
}

func newListView(o *listOptions, s *session) *listView {
	v := &listView{o: o, s: s, p: humanview.NewPalette(o.f, o.f.Out)}
	v.feed = cmdutil.NewTableFeed(o.f.Out, v.render)
	return v
}

// surroundings is what a network's row shows beside the network itself: the nodes'
// zone reports, the connects, and the namespaces' labels they select by.
type surroundings struct {
	reports  []cluster.ZoneReport
	cncs     []ovnkv1.ClusterNetworkConnect
	nsLabels map[string]map[string]string
}

// start prints the list.
func (v *listView) start(ctx context.Context, l *listing) error {
	if !v.o.output.Human() {
		if v.o.list.Watch {
			return v.o.output.PrintWatchList(objects(l.nets), v.o.f.Out)
		}
		if len(v.o.args) == 1 && len(l.nets) == 1 {
			// One network named, one object, as kubectl get prints it.
			return v.o.output.PrintObject(l.nets[0].Object(), v.o.f.Out)
		}
		return v.o.output.PrintList(objects(l.nets), v.o.f.Out)
	}
	if len(l.nets) == 0 {
		if len(v.o.args) > 0 {
			return nil // the error names what is missing
		}
		_, err := fmt.Fprintf(v.o.f.ErrOut, "No networks found%s.\n", v.where(l))
		return err
	}
	around, err := v.surroundings(ctx, l)
	if err != nil {
		return err
	}
	v.around = around
	connects := connectsByNetwork(netview.NewModel(l.nets, around.nsLabels), around.cncs)
	keys := make([]string, len(l.nets))
	rows := make([][]humanview.Cell, len(l.nets))
	for i, n := range l.nets {
		keys[i], rows[i] = networkKey(n), v.row(n, around.reports, connects, false)
	}
	return v.feed.Start(keys, rows)
}

// where says which networks were looked for, after "No networks found".
func (v *listView) where(l *listing) string {
	var out []string
	if l.ns != "" {
		out = append(out, " in namespace "+l.ns)
	}
	if v.o.list.Selector != "" {
		out = append(out, " with labels matching -l "+v.o.list.Selector)
	}
	return strings.Join(out, "")
}

// surroundings reads what the rows show beside the networks. With -n, connects select
// the namespace's networks by its labels alone; otherwise every namespace's are read,
// when there are connects to select by them.
func (v *listView) surroundings(ctx context.Context, l *listing) (surroundings, error) {
	var around surroundings
	nodes, cncs, err := v.s.nodesAndConnects(ctx)
	if err != nil {
		return around, err
	}
	around.cncs = cncs
	switch {
	case l.ns != "":
		around.nsLabels = map[string]map[string]string{l.ns: l.nsLabels}
	case len(cncs) > 0:
		if around.nsLabels, err = v.s.NamespaceLabels(ctx); err != nil {
			return around, err
		}
	}
	around.reports = v.s.zoneReports(ctx, nodes, cncs)
	return around, nil
}

// follow prints each network shown that changes, until ctx ends or Ctrl-C.
func (v *listView) follow(ctx context.Context, l *listing) error {
	var opts []client.ListOption
	udnOpts := []client.ListOption{client.InNamespace(l.ns)}
	if l.named == nil {
		opts = v.o.list.ListOptions()
		udnOpts = append(udnOpts, opts...)
	}
	kinds := []cmdutil.Watched{
		{List: &ovnkv1.ClusterUserDefinedNetworkList{}, ResourceVersion: l.versions.CUDNVersion, Options: opts},
		{List: &ovnkv1.UserDefinedNetworkList{}, ResourceVersion: l.versions.UDNVersion, Options: udnOpts},
	}
	return v.s.Watch(ctx, kinds, func(ctx context.Context, t watch.EventType, obj client.Object) error {
		n := netview.Of(obj)
		// A network that stops serving the namespace (its selector changed) leaves
		// the list as if deleted, as an object leaving a label selector's watch.
		left := !l.shows(n) && v.o.output.Human() && v.feed.Has(networkKey(n))
		if !l.shows(n) && !left {
			return nil
		}
		if !v.o.output.Human() {
			return v.o.output.PrintWatched(obj, v.o.f.Out)
		}
		look, cancel := context.WithTimeout(ctx, netview.RequestTimeout)
		defer cancel()
		around, err := v.surroundings(look, l)
		if ctx.Err() != nil {
			return nil // Ctrl-C while reading: the table stays as last printed
		}
		if err != nil {
			// Only the watch failing ends -w, as with kubectl get -w: a failed look
			// beside it (an API server restarting, a throttled list) is said, and
			// the row shows what was read before.
			fmt.Fprintf(v.o.f.ErrOut, "Warning: %v; %s's row shows the zones and connects read before\n", err, n.Ref())
		} else {
			v.around = around
		}
		around = v.around
		// The model of n alone selects as one of every network: selection looks at
		// each network on its own.
		connects := connectsByNetwork(netview.NewModel([]netview.Network{n}, around.nsLabels), around.cncs)
		deleted := t == watch.Deleted || left
		return v.feed.Changed(networkKey(n), v.row(n, around.reports, connects, deleted), deleted)
	})
}

// row is n's row of the table: deleted, its STATUS says so.
func (v *listView) row(n netview.Network, reports []cluster.ZoneReport, connects map[string][]ovnkv1.ClusterNetworkConnect, deleted bool) []humanview.Cell {
	p := v.p
	sum := n.Summarize(reports)
	ready, status := humanview.CountReady(sum.Nodes), sum.Status
	readyCell := humanview.Styled(strconv.Itoa(ready)+"/"+strconv.Itoa(len(sum.Nodes)), p.Ratio(ready, len(sum.Nodes)))
	if sum.FromConditions {
		readyCell = humanview.Text("-") // no per-node word without zone reports
	}
	statusStyle := p.Bad // the leader refused it
	switch {
	case deleted:
		status, statusStyle = statusDeleted, p.Faint
	case status == netview.StatusReady:
		statusStyle = p.Good
	case status == netview.StatusPending:
		statusStyle = p.Warn
	}
	return []humanview.Cell{
		humanview.Text(n.Ref()),
		humanview.Text(n.OVNName()),
		humanview.Text(string(n.Spec().Topology)),
		humanview.Text(string(n.Role())),
		humanview.List(n.Subnets(), p.Faint),
		humanview.Text(string(n.Transport())),
		readyCell,
		humanview.Styled(status, statusStyle),
		humanview.List(names(connects[n.OVNName()]), p.Faint),
		humanview.Text(humanview.Age(n.Object().GetCreationTimestamp(), v.o.now())),
	}
}

// render draws rows as the table, fitted to the terminal.
func (v *listView) render(rows [][]humanview.Cell, w io.Writer) error {
	t := v.p.Table(
		humanview.Column{Header: "NAME"},
		humanview.Column{Header: "OVN NETWORK", Wide: true},
		humanview.Column{Header: "TOPOLOGY"},
		humanview.Column{Header: "ROLE"},
		humanview.Column{Header: "SUBNETS", Stack: true, Optional: 3},
		humanview.Column{Header: "TRANSPORT", Wide: true},
		humanview.Column{Header: "READY"},
		humanview.Column{Header: "STATUS"},
		humanview.Column{Header: "CONNECTED", Stack: true, Optional: 2},
		humanview.Column{Header: "AGE", Optional: 1},
	)
	t.Wide = v.o.output.Format() == "wide"
	t.Rows = rows
	return t.Render(w, v.o.f.TableWidth())
}
