package statuscmd

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/ovnk/ovnk/pkg/cli/humanview"
)

// view is how the human output is drawn: its width, whether it is coloured, and the
// styles of a renderer that colours only when it may.
type view struct {
	width  int
	colour bool
	now    time.Time

	good, bad, warn, faint, bold lipgloss.Style
}

func newView(r *lipgloss.Renderer, width int, colour bool, now time.Time) *view {
	return &view{
		width:  width,
		colour: colour,
		now:    now,
		good:   r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:    r.NewStyle().Foreground(lipgloss.Color("1")),
		warn:   r.NewStyle().Foreground(lipgloss.Color("3")),
		faint:  r.NewStyle().Faint(true),
		bold:   r.NewStyle().Bold(true),
	}
}

// minLastColumn is the narrowest the last column (the free text) is cut to, even when
// the others already fill the terminal.
const minLastColumn = 16

// render writes the report: the agents table, the networks table and a summary.
func (v *view) render(w io.Writer, r Report) error {
	var out bytes.Buffer
	if len(r.Nodes) == 0 {
		out.WriteString("No nodes in the cluster.\n")
	} else {
		if err := v.table(&out, []string{"NODE", "AGENT", "VERSION", "LEADER", "LAST RECONCILE", "LAST ERROR"}, v.nodeRows(r.Nodes)); err != nil {
			return err
		}
	}
	out.WriteString("\n")
	if len(r.Networks) == 0 {
		out.WriteString("No user-defined networks.\n")
	} else {
		if err := v.table(&out, []string{"NETWORK", "READY", "NOT READY"}, v.networkRows(r.Networks)); err != nil {
			return err
		}
	}
	out.WriteString("\n")
	v.summary(&out, r)
	_, err := w.Write(out.Bytes())
	return err
}

func (v *view) nodeRows(nodes []NodeStatus) [][]humanview.Cell {
	rows := make([][]humanview.Cell, 0, len(nodes))
	for _, n := range nodes {
		row := []humanview.Cell{humanview.Text(n.Node), humanview.Styled("ready", v.good), humanview.Text(n.Version), {}, {}, humanview.Styled(oneLine(n.LastError), v.bad)}
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
		case n.Agent:
			row[4] = humanview.Styled("never", v.faint)
		}
		rows = append(rows, row)
	}
	return rows
}

func (v *view) networkRows(networks []NetworkStatus) [][]humanview.Cell {
	rows := make([][]humanview.Cell, 0, len(networks))
	for _, nw := range networks {
		ready := humanview.Styled(fmt.Sprintf("%d/%d", nw.ReadyNodes, nw.TotalNodes), v.good)
		if len(nw.NotReady) > 0 || nw.TotalNodes == 0 {
			ready.Style = &v.bad
		}
		reasons := make([]string, len(nw.NotReady))
		for i, nr := range nw.NotReady {
			reasons[i] = nr.Node + ": " + oneLine(nr.Reason)
		}
		rows = append(rows, []humanview.Cell{humanview.Text(nw.Network), ready, humanview.Text(strings.Join(reasons, "; "))})
	}
	return rows
}

// summary says in a line whether everything is ready, and else lists why each agent
// that is not ready is not.
func (v *view) summary(out *bytes.Buffer, r Report) {
	agents, networks := r.Counts()
	if r.Ready {
		fmt.Fprintln(out, v.good.Render(fmt.Sprintf("All %d agents and %d networks are ready.", len(r.Nodes), len(r.Networks))))
		return
	}
	fmt.Fprintln(out, v.bad.Render(fmt.Sprintf("Not ready: %d/%d agents ready, %d/%d networks ready on every node.", agents, len(r.Nodes), networks, len(r.Networks))))
	for _, n := range r.Nodes {
		if !n.Ready {
			fmt.Fprintln(out, ansi.Truncate("  "+n.Node+": "+oneLine(n.NotReadyReason), max(v.width, minLastColumn), "…"))
		}
	}
}

// table draws rows under header, kubectl-style, and cuts the last column (the free
// text) so that lines fit the view's width. The table is laid out from plain text and
// coloured afterwards.
func (v *view) table(out *bytes.Buffer, header []string, rows [][]humanview.Cell) error {
	t := &humanview.Table{Rows: rows, Header: v.bold}
	for _, h := range header {
		t.Columns = append(t.Columns, humanview.Column{Header: h})
	}
	t.Columns[len(t.Columns)-1].MinWidth = minLastColumn
	t.Columns[len(t.Columns)-1].Fold = humanview.Cut
	return t.Render(out, v.width)
}

// oneLine folds a multi-line message into one line for a table cell.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// age is how long before now t was, as kubectl prints ages ("4s", "2m30s", "3h").
func age(now, t time.Time) string {
	return duration.HumanDuration(now.Sub(t))
}
