package connectcmd

import (
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/table"
)

// palette holds the styles of the human views. Through the Factory's renderer they are
// plain text whenever colour is off (not a terminal, NO_COLOR, --no-color).
type palette struct {
	plain, header, key, good, warn, bad, faint lipgloss.Style
}

func newPalette(f *cmdutil.Factory, w io.Writer) palette {
	r := f.Renderer(w)
	return palette{
		plain:  r.NewStyle(),
		header: r.NewStyle().Bold(true),
		key:    r.NewStyle().Bold(true),
		good:   r.NewStyle().Foreground(lipgloss.Color("2")),
		warn:   r.NewStyle().Foreground(lipgloss.Color("3")),
		bad:    r.NewStyle().Foreground(lipgloss.Color("1")),
		faint:  r.NewStyle().Faint(true),
	}
}

// ratio styles "ready/total": good when all are ready, bad when none is, else warn.
func (p palette) ratio(ready, total int) lipgloss.Style {
	switch {
	case total > 0 && ready == total:
		return p.good
	case ready == 0:
		return p.bad
	}
	return p.warn
}

// of is the style of a health.
func (p palette) of(h health) lipgloss.Style {
	switch h {
	case healthGood:
		return p.good
	case healthPending:
		return p.warn
	case healthBad:
		return p.bad
	}
	return p.plain
}

// tightColumnGap is how close the columns may move on a narrow terminal, before
// optional columns are left out.
const tightColumnGap = 2

// newTable is a table of these views: headers in the header style.
func newTable(p palette, columns ...table.Column) *table.Table {
	return &table.Table{Columns: columns, Header: p.header, TightGap: tightColumnGap}
}

// foldList folds a cell of comma-separated values as if stacked, one value per line
// (it may wrap, unlike stacking, when other columns are narrow), and a value too wide
// for the column after a hyphen or a breakAt character.
func foldList(breakAt string) func(line string, width int) []string {
	return func(line string, width int) []string {
		var out []string
		for _, v := range strings.Split(line, ",") {
			out = append(out, table.Wrap(breakAt)(v, width)...)
		}
		return out
	}
}
