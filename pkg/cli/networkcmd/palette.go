package networkcmd

import (
	"io"

	"github.com/charmbracelet/lipgloss"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/cli/table"
)

// palette holds the styles of the human views. Through the Factory's renderer they are
// plain text whenever colour is off (not a terminal, NO_COLOR, --no-color).
type palette struct {
	header, key, good, warn, bad, faint lipgloss.Style
}

func newPalette(f *cmdutil.Factory, w io.Writer) palette {
	r := f.Renderer(w)
	return palette{
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

// tightColumnGap is how close the columns of the network views may move on a narrow
// terminal, before optional columns are left out.
const tightColumnGap = 2

// newTable is a table of the network views: headers in the palette's header style.
func newTable(p palette, columns ...table.Column) *table.Table {
	return &table.Table{Columns: columns, Header: p.header, TightGap: tightColumnGap}
}
