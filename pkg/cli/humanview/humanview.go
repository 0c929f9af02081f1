// Package humanview draws the plugin's human views, the output -o leaves for people
// rather than scripts: tables fitted to the terminal, kubectl describe's blocks, lines
// of styled text wrapped to it (trees, titles), and the palette they are drawn in,
// with kubectl's AGE and per-node READY.
package humanview

import (
	"io"
	"strconv"
	"time"

	"github.com/charmbracelet/lipgloss"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// Palette holds the styles of the human views. Made through the Factory's renderer,
// they are plain text whenever colour is off (not a terminal, NO_COLOR, --no-color).
type Palette struct {
	Plain, Header, Key, Good, Warn, Bad, Faint lipgloss.Style
}

// NewPalette is the palette of the views f writes to w.
func NewPalette(f *cmdutil.Factory, w io.Writer) Palette {
	r := f.Renderer(w)
	return Palette{
		Plain:  r.NewStyle(),
		Header: r.NewStyle().Bold(true),
		Key:    r.NewStyle().Bold(true),
		Good:   r.NewStyle().Foreground(lipgloss.Color("2")),
		Warn:   r.NewStyle().Foreground(lipgloss.Color("3")),
		Bad:    r.NewStyle().Foreground(lipgloss.Color("1")),
		Faint:  r.NewStyle().Faint(true),
	}
}

// Ratio styles "ready/total": good when all are ready, bad when none is, else warn.
func (p Palette) Ratio(ready, total int) lipgloss.Style {
	switch {
	case total > 0 && ready == total:
		return p.Good
	case ready == 0:
		return p.Bad
	}
	return p.Warn
}

// tightColumnGap is how close the columns of the views may move on a narrow terminal,
// before optional columns are left out.
const tightColumnGap = 2

// Table is a table of the views: headers in the palette's header style.
func (p Palette) Table(columns ...Column) *Table {
	return &Table{Columns: columns, Header: p.Header, TightGap: tightColumnGap}
}

// Count is n things in English: "1 network", "2 networks", "0 networks". thing is
// a noun whose plural takes an s.
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// Age is kubectl's AGE: how long before now t was, in its short form (5m, 30h, 12d).
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// Readiness is every node's readiness for what its zone report holds under key (what
// names the kind of thing in the reasons: "network", "connect"), in the leader's words.
func Readiness(reports []cluster.ZoneReport, key, what string) []cluster.NodeReadiness {
	out := make([]cluster.NodeReadiness, 0, len(reports))
	for _, z := range reports {
		out = append(out, z.Readiness(key, what))
	}
	return out
}

// CountReady counts the ready nodes of rs.
func CountReady(rs []cluster.NodeReadiness) int {
	n := 0
	for _, r := range rs {
		if r.Ready {
			n++
		}
	}
	return n
}
