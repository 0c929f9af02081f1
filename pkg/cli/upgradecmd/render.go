package upgradecmd

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
)

// view is how the human output is drawn: its width, the width its tables are fitted
// to (0 when not a terminal: not fitted), whether it is coloured, and the styles of a
// renderer that colours only when it may.
type view struct {
	width, tableWidth int
	colour            bool

	good, bad, warn, busy, faint, bold lipgloss.Style
}

func newView(r *lipgloss.Renderer, width, tableWidth int, colour bool) *view {
	return &view{
		width:      width,
		tableWidth: tableWidth,
		colour:     colour,
		good:       r.NewStyle().Foreground(lipgloss.Color("2")),
		bad:        r.NewStyle().Foreground(lipgloss.Color("1")),
		warn:       r.NewStyle().Foreground(lipgloss.Color("3")),
		busy:       r.NewStyle().Foreground(lipgloss.Color("6")),
		faint:      r.NewStyle().Faint(true),
		bold:       r.NewStyle().Bold(true),
	}
}

// Bounds of the view.
const (
	// minListColumn is the narrowest a column of names (blocking pods, networks,
	// nodes) is cut to, even when the others already fill the terminal.
	minListColumn = 20
	// minNameColumn is the narrowest a node or network name wraps to.
	minNameColumn = 12
	// fewNodes is how many nodes a network's LEGACY and TRANSIT ROUTER cells name;
	// beyond, they only count them.
	fewNodes = 3
	// maxListed bounds the unreadable zones, warnings and next actions listed under
	// the tables; -o json has them all.
	maxListed = 5
	// maxBarWidth is the width of the progress bar on a wide terminal.
	maxBarWidth = 30
)

// render writes the view of the assessment.
func (v *view) render(w io.Writer, a assessment) error {
	s, err := v.draw(a)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, s)
	return err
}

// draw is the view of the assessment: the nodes, the networks, the zones that could
// not be read and what was left out, the progress bar, and what to do next.
func (v *view) draw(a assessment) (string, error) {
	r := a.Report
	var out bytes.Buffer
	if len(r.Nodes) == 0 {
		out.WriteString("No nodes to assess.\n")
	} else if err := v.nodeTable(r.Nodes).Render(&out, v.tableWidth); err != nil {
		return "", err
	}
	out.WriteString("\n")
	if len(r.Networks) == 0 {
		out.WriteString("No primary Layer2 networks.\n")
	} else if err := v.networkTable(r.Networks).Render(&out, v.tableWidth); err != nil {
		return "", err
	}
	var unread []string
	for _, n := range r.Nodes {
		if n.ZoneError != "" {
			unread = append(unread, n.Node+": "+oneLine(n.ZoneError))
		}
	}
	v.section(&out, "Zones not read:", unread, "-")
	v.section(&out, "Warnings:", a.Warnings, "-")
	out.WriteString("\n" + v.bar(r) + "\n")
	v.section(&out, "Next:", r.Next, "")
	if r.Complete {
		out.WriteString("\n" + v.good.Render("Upgrade complete.") + "\n")
	}
	return out.String(), nil
}

func (v *view) nodeTable(nodes []l2upgrade.NodeReport) *humanview.Table {
	t := &humanview.Table{Header: v.bold, Columns: []humanview.Column{
		{Header: "NODE", MinWidth: minNameColumn, Fold: humanview.Wrap(".-")},
		{Header: "VERSION"},
		{Header: "PHASE"},
		{Header: "BLOCKING PODS", MinWidth: minListColumn, Cut: true, Fold: foldList},
		{Header: "ARTIFACTS", MinWidth: minListColumn, Cut: true, Fold: foldList},
	}}
	for _, n := range nodes {
		version := humanview.Text(n.Version)
		if n.Version == "" {
			version = humanview.Styled("-", v.faint)
		}
		artifacts := humanview.Text(strings.Join(userNames(n.Artifacts), ", "))
		if n.ZoneError != "" {
			artifacts = humanview.Styled("zone not read", v.bad)
		}
		t.Add(humanview.Text(n.Node), version, humanview.Styled(string(n.Phase), v.phaseStyle(n.Phase)),
			humanview.Text(strings.Join(n.Blocking, ", ")), artifacts)
	}
	return t
}

func (v *view) phaseStyle(p l2upgrade.Phase) lipgloss.Style {
	switch p {
	case l2upgrade.PhaseUpgraded:
		return v.good
	case l2upgrade.PhaseConverting:
		return v.busy
	case l2upgrade.PhaseBlocked:
		return v.bad
	}
	return v.warn
}

func (v *view) networkTable(networks []l2upgrade.NetworkReport) *humanview.Table {
	t := &humanview.Table{Header: v.bold, Columns: []humanview.Column{
		{Header: "NETWORK", MinWidth: minNameColumn, Fold: humanview.Wrap("/._-")},
		{Header: "LEGACY", MinWidth: minListColumn, Cut: true, Fold: foldCount},
		{Header: "TRANSIT ROUTER", MinWidth: minListColumn, Cut: true, Fold: foldCount},
		{Header: "ARTIFACTS IN", MinWidth: minListColumn, Cut: true, Fold: foldList},
	}}
	subnets := slices.ContainsFunc(networks, func(n l2upgrade.NetworkReport) bool { return len(n.TransitSubnets) > 0 })
	if subnets {
		t.Columns = append(t.Columns, humanview.Column{Header: "TRANSIT SUBNETS", Stack: true})
	}
	for _, n := range networks {
		legacy := humanview.Text(countNodes(n.Legacy))
		if len(n.Legacy) > 0 {
			legacy.Style = &v.warn
		}
		transit := humanview.Text(countNodes(n.TransitRouter))
		if len(n.Legacy) == 0 {
			transit.Style = &v.good
		}
		row := []humanview.Cell{humanview.Text(netview.UserName(n.Network)), legacy, transit, humanview.Text(strings.Join(n.ArtifactsIn, ", "))}
		if subnets {
			row = append(row, humanview.Cell{Values: n.TransitSubnets})
		}
		t.Add(row...)
	}
	return t
}

// countNodes is a LEGACY or TRANSIT ROUTER cell: how many nodes, and their names when
// they are few.
func countNodes(nodes []string) string {
	if len(nodes) == 0 || len(nodes) > fewNodes {
		return strconv.Itoa(len(nodes))
	}
	return fmt.Sprintf("%d (%s)", len(nodes), strings.Join(nodes, ", "))
}

// foldCount fits a countNodes cell too wide for its column: the count alone.
func foldCount(line string, width int) []string {
	if count, _, ok := strings.Cut(line, " ("); ok && ansi.StringWidth(count) <= width {
		return []string{count}
	}
	return humanview.Cut(line, width)
}

// foldList fits a list of names ("a, b, c, d") too wide for its column as "a, b and 2
// more", with as many names as fit (at least one, cut if it must be).
func foldList(line string, width int) []string {
	names := strings.Split(line, ", ")
	for shown := len(names) - 1; shown >= 1; shown-- {
		s := fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
		if ansi.StringWidth(s) <= width {
			return []string{s}
		}
	}
	if len(names) > 1 {
		// Not even one name fits with the count: cut the name, keep the count.
		more := fmt.Sprintf(" and %d more", len(names)-1)
		if room := width - ansi.StringWidth(more); room >= minCutName {
			return []string{ansi.Truncate(names[0], room, "…") + more}
		}
	}
	return humanview.Cut(line, width)
}

// minCutName is the least of a name foldList shows before its count.
const minCutName = 4

// userNames are OVN network names as users name the networks.
func userNames(networks []string) []string {
	out := make([]string, len(networks))
	for i, n := range networks {
		out[i] = netview.UserName(n)
	}
	return out
}

// bar is the progress line: a bar of the nodes upgraded, and what else the upgrade
// waits for (zones holding upgrade ports, zones not read) after it, or on a line of
// its own when the terminal is too narrow for both.
func (v *view) bar(r l2upgrade.Report) string {
	text := fmt.Sprintf("upgraded %d/%d nodes", r.Upgraded, r.Total)
	var holding, unread int
	for _, n := range r.Nodes {
		if len(n.Artifacts) > 0 {
			holding++
		}
		if n.ZoneError != "" {
			unread++
		}
	}
	var also []string
	if holding > 0 {
		also = append(also, fmt.Sprintf("%d %s upgrade ports", holding, plural(holding, "zone holds", "zones hold")))
	}
	if unread > 0 {
		also = append(also, fmt.Sprintf("%d %s", unread, plural(unread, "zone not read", "zones not read")))
	}
	extra := ""
	if len(also) > 0 {
		extra = "; " + strings.Join(also, "; ")
		if maxBarWidth+3+ansi.StringWidth(text+extra) > v.width {
			extra = "\n  " + ansi.Truncate(strings.Join(also, "; "), v.width-2, "…")
		}
	}
	width := min(maxBarWidth, v.width-ansi.StringWidth(text)-3)
	if width < 5 {
		return ansi.Truncate(text, v.width, "…") + extra
	}
	filled := width
	if r.Total > 0 {
		filled = width * r.Upgraded / r.Total
	}
	full, empty := "#", "-"
	if v.colour {
		full, empty = "█", "░"
	}
	done := v.good
	if !r.Complete {
		done = v.busy
	}
	return "[" + render(done, strings.Repeat(full, filled)) + render(v.faint, strings.Repeat(empty, width-filled)) + "] " + text + extra
}

// render styles s, and leaves an empty s empty rather than a pair of escapes.
func render(st lipgloss.Style, s string) string {
	if s == "" {
		return ""
	}
	return st.Render(s)
}

// section writes a titled list under the tables, at most maxListed items, each
// wrapped to the width; bullet marks the items, or "" numbers them.
func (v *view) section(out *bytes.Buffer, title string, items []string, bullet string) {
	if len(items) == 0 {
		return
	}
	out.WriteString("\n" + v.bold.Render(title) + "\n")
	shown := items[:min(len(items), maxListed)]
	for i, item := range shown {
		mark := bullet
		if mark == "" {
			mark = strconv.Itoa(i+1) + "."
		}
		lead := "  " + mark + " "
		indent := strings.Repeat(" ", ansi.StringWidth(lead))
		for j, line := range humanview.Wrap("/-")(oneLine(item), max(v.width-len(indent), minListColumn)) {
			if j == 0 {
				out.WriteString(lead + line + "\n")
			} else {
				out.WriteString(indent + line + "\n")
			}
		}
	}
	if more := len(items) - len(shown); more > 0 {
		out.WriteString(v.faint.Render(fmt.Sprintf("  … and %d more (-o json lists them all)", more)) + "\n")
	}
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
