package statuscmd

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/livezone/clusterkind"
	"github.com/ovnk/ovnk/pkg/cli/netview"
)

// view is how the human output is drawn: the width tables are fitted to (0 when not
// a terminal: not fitted), whether it is coloured and wide (-o wide), and the styles
// of a renderer that colours only when it may.
type view struct {
	width  int
	colour bool
	wide   bool
	now    time.Time

	good, bad, warn, faint, bold lipgloss.Style
}

func newView(r *lipgloss.Renderer, width int, colour, wide bool, now time.Time) *view {
	return &view{
		width:  width,
		colour: colour,
		wide:   wide,
		now:    now,
		good:   r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:    r.NewStyle().Foreground(lipgloss.Color("1")),
		warn:   r.NewStyle().Foreground(lipgloss.Color("3")),
		faint:  r.NewStyle().Faint(true),
		bold:   r.NewStyle().Bold(true),
	}
}

// minReason is the narrowest the REASON column wraps to on a terminal, unless a word
// of it (a name) is wider: names are never split.
const minReason = 16

// render writes the report: the agents table, the networks table and a summary.
func (v *view) render(w io.Writer, r Report) error {
	var out bytes.Buffer
	// Neither DaemonSet found says nothing the agents table does not: agents may run
	// outside a DaemonSet, and their Leases speak for them.
	if r.Cluster != nil && r.Cluster.Kind != clusterkind.None {
		line := "Cluster: " + r.Cluster.String()
		if v.width > 0 && len(line) > v.width {
			line = strings.Join(humanview.Wrap("/")(line, v.width-2), "\n  ")
		}
		out.WriteString(line + "\n\n")
	}
	upstream := r.Cluster != nil && r.Cluster.Kind == clusterkind.Upstream
	if len(r.Nodes) == 0 {
		out.WriteString("No nodes in the cluster.\n")
	} else if err := v.nodeTable(r.Nodes, upstream).Render(&out, v.width); err != nil {
		return err
	}
	out.WriteString("\n")
	switch {
	case r.NetworksError != "":
		out.WriteString(v.bad.Render("Networks unknown: "+r.NetworksError) + "\n")
	case len(r.Networks) == 0:
		out.WriteString("No user-defined networks.\n")
	default:
		if err := v.networkTable(r.Networks).Render(&out, v.width); err != nil {
			return err
		}
	}
	out.WriteString("\n")
	v.summary(&out, r)
	_, err := w.Write(out.Bytes())
	return err
}

// nodeTable is the agents: VERSION only with -o wide, so that the table fits 80
// columns with room for the reason an agent is not ready and its last error. Upstream
// agents (ovnkube-node pods) report no reconcile: RECONCILED stays empty.
func (v *view) nodeTable(nodes []NodeStatus, upstream bool) *humanview.Table {
	t := &humanview.Table{Header: v.bold, Wide: v.wide, Columns: []humanview.Column{
		{Header: "NODE"}, {Header: "AGENT"}, {Header: "VERSION", Wide: true}, {Header: "LEADER"},
		{Header: "RECONCILED"}, {Header: "REASON", MinWidth: minReason},
	}}
	for _, n := range nodes {
		row := []humanview.Cell{humanview.Text(n.Node), humanview.Styled("ready", v.good), humanview.Text(n.Version), {}, {}, humanview.Styled(nodeReason(n), v.bad)}
		switch {
		case !n.Agent:
			row[1] = humanview.Styled("no agent", v.bad)
		case !n.Ready:
			row[1] = humanview.Styled("not ready", v.bad)
		}
		if n.Leader {
			row[3] = humanview.Text("yes")
			if v.colour {
				row[3] = humanview.Styled("★", v.warn)
			}
		}
		switch {
		case n.LastReconcile != nil:
			row[4] = humanview.Text(age(v.now, *n.LastReconcile) + " ago")
		case n.Agent && !upstream:
			row[4] = humanview.Styled("never", v.faint)
		}
		t.Add(row...)
	}
	return t
}

// nodeReason is why an agent is not ready, then its last error: an agent may be
// unready with no error (its NB gone) or ready with one (a failed reconcile).
func nodeReason(n NodeStatus) string {
	var parts []string
	if n.NotReadyReason != "" {
		parts = append(parts, oneLine(n.NotReadyReason))
	}
	if n.LastError != "" {
		parts = append(parts, "last error: "+oneLine(n.LastError))
	}
	return strings.Join(parts, "; ")
}

// networkTable is the networks by their user-facing names; the OVN name only with -o
// wide.
func (v *view) networkTable(networks []NetworkStatus) *humanview.Table {
	t := &humanview.Table{Header: v.bold, Wide: v.wide, Columns: []humanview.Column{
		{Header: "NETWORK"}, {Header: "OVN NETWORK", Wide: true}, {Header: "STATUS"}, {Header: "READY"},
		{Header: "REASON", MinWidth: minReason},
	}}
	for _, nw := range networks {
		style := v.good
		switch {
		case nw.Status == netview.StatusPending:
			style = v.warn
		case nw.Status != netview.StatusReady:
			style = v.bad
		}
		ready := humanview.Styled(fmt.Sprintf("%d/%d", nw.ReadyNodes, nw.TotalNodes), v.good)
		switch {
		case nw.FromConditions:
			ready = humanview.Text("-") // no node reports on its zone
		case len(nw.NotReady) > 0 || nw.TotalNodes == 0:
			ready.Style = &v.bad
		}
		t.Add(humanview.Text(nw.Name), humanview.Text(nw.Network), humanview.Styled(nw.Status, style), ready, humanview.Text(oneLine(nw.Reason)))
	}
	return t
}

// summary says in a line whether everything is ready, and else how many agents and
// networks are: the tables say why each is not, their REASON wrapped to the terminal
// but never cut.
func (v *view) summary(out *bytes.Buffer, r Report) {
	agents, networks := r.Counts()
	if r.Ready {
		fmt.Fprintln(out, v.good.Render(fmt.Sprintf("All %s and %s are ready.", humanview.Count(len(r.Nodes), "agent"), humanview.Count(len(r.Networks), "network"))))
		return
	}
	fmt.Fprintln(out, v.bad.Render(fmt.Sprintf("Not ready: %d/%s ready, %d/%s ready on every node.", agents, humanview.Count(len(r.Nodes), "agent"), networks, humanview.Count(len(r.Networks), "network"))))
}

// oneLine folds a multi-line message into one line for a table cell.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// age is how long before now t was, as kubectl prints ages ("4s", "2m30s", "3h").
func age(now, t time.Time) string {
	return duration.HumanDuration(now.Sub(t))
}
