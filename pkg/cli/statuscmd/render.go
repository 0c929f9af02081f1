package statuscmd

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"k8s.io/apimachinery/pkg/util/duration"
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

// cell is a table cell: its text, and the style it is drawn in.
type cell struct {
	text  string
	style *lipgloss.Style
}

// columnGap separates columns, as in kubectl's tables.
const columnGap = "   "

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

func (v *view) nodeRows(nodes []NodeStatus) [][]cell {
	rows := make([][]cell, 0, len(nodes))
	for _, n := range nodes {
		row := []cell{{text: n.Node}, {text: "ready", style: &v.good}, {text: n.Version}, {}, {}, {text: oneLine(n.LastError), style: &v.bad}}
		switch {
		case !n.Agent:
			row[1] = cell{text: "no agent", style: &v.bad}
		case !n.Ready:
			row[1] = cell{text: "not ready", style: &v.bad}
		}
		if n.Leader {
			row[3] = cell{text: "yes"}
			if v.colour {
				row[3] = cell{text: "★", style: &v.warn}
			}
		}
		switch {
		case n.LastReconcile != nil:
			row[4] = cell{text: age(v.now, *n.LastReconcile) + " ago"}
		case n.Agent:
			row[4] = cell{text: "never", style: &v.faint}
		}
		rows = append(rows, row)
	}
	return rows
}

func (v *view) networkRows(networks []NetworkStatus) [][]cell {
	rows := make([][]cell, 0, len(networks))
	for _, nw := range networks {
		ready := cell{text: fmt.Sprintf("%d/%d", nw.ReadyNodes, nw.TotalNodes), style: &v.good}
		if len(nw.NotReady) > 0 || nw.TotalNodes == 0 {
			ready.style = &v.bad
		}
		reasons := make([]string, len(nw.NotReady))
		for i, nr := range nw.NotReady {
			reasons[i] = nr.Node + ": " + oneLine(nr.Reason)
		}
		rows = append(rows, []cell{{text: nw.Network}, ready, {text: strings.Join(reasons, "; ")}})
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

// table draws rows under header without borders, columns apart by columnGap, and cuts
// the last column so that lines fit the view's width. The table is laid out from plain
// text, so that widths are measured exactly, and coloured afterwards.
func (v *view) table(out *bytes.Buffer, header []string, rows [][]cell) error {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = ansi.StringWidth(h)
	}
	for _, row := range rows {
		for i, c := range row[:len(row)-1] {
			widths[i] = max(widths[i], ansi.StringWidth(c.text))
		}
	}
	used := 0
	for _, w := range widths[:len(widths)-1] {
		used += w + len(columnGap)
	}
	last := max(v.width-used, minLastColumn)
	for _, row := range rows {
		row[len(row)-1].text = ansi.Truncate(row[len(row)-1].text, last, "…")
	}

	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: columnGap, Overwrite: true}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	t.Header(header)
	for _, row := range rows {
		texts := make([]string, len(row))
		for i, c := range row {
			texts[i] = c.text
		}
		if err := t.Append(texts); err != nil {
			return fmt.Errorf("draw table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("draw table: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(rows)+1 {
		return fmt.Errorf("draw table: %d lines for %d rows", len(lines), len(rows))
	}
	headerCells := make([]cell, len(header))
	for i, h := range header {
		headerCells[i] = cell{text: h, style: &v.bold}
	}
	for i, line := range lines {
		// The padding of the last column would leave spaces at every line's end.
		line = strings.TrimRight(line, " ")
		if i == 0 {
			out.WriteString(colourCells(line, headerCells) + "\n")
		} else {
			out.WriteString(colourCells(line, rows[i-1]) + "\n")
		}
	}
	return nil
}

// colourCells styles the cells of a drawn line: each cell's text is found after the
// previous one's, left to right, and replaced by its styled form.
func colourCells(line string, cells []cell) string {
	var out strings.Builder
	rest := line
	for _, c := range cells {
		i := strings.Index(rest, c.text)
		if c.text == "" || i < 0 {
			continue
		}
		out.WriteString(rest[:i])
		if c.style != nil {
			out.WriteString(c.style.Render(c.text))
		} else {
			out.WriteString(c.text)
		}
		rest = rest[i+len(c.text):]
	}
	out.WriteString(rest)
	return out.String()
}

// oneLine folds a multi-line message into one line for a table cell.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// age is how long before now t was, as kubectl prints ages ("4s", "2m30s", "3h").
func age(now, t time.Time) string {
	return duration.HumanDuration(now.Sub(t))
}
