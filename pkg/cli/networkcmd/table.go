package networkcmd

import (
	"bytes"
	"io"
	"regexp"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Tables are drawn the way kubectl draws them (upper-case headers, columns three
// spaces apart, no borders) and are made to fit the terminal. When the table is too
// wide, in turn: cells holding several values put one value per line; columns move two
// spaces apart; the widest columns that may narrow wrap their cells onto more lines,
// never below their minimum; and, last, optional columns are left out, least useful
// first. Cells are wrapped, never truncated, so nothing shown is cut.

// Gaps between columns: kubectl's, and the narrower one for a tight terminal.
const (
	columnGap      = 3
	tightColumnGap = 2
)

// column is a table column and how its cells give way when the table is too wide.
type column struct {
	header string
	// stack lets a cell of several values show one value per line.
	stack bool
	// minWidth is how narrow the column may become by wrapping its cells; 0 keeps it at
	// its natural width.
	minWidth int
	// breakAt are characters, besides spaces and hyphens, after which a cell may wrap.
	breakAt string
	// optional ranks the columns left out of a table too wide for the terminal: 1
	// first, then 2, …; 0 is never left out.
	optional int
}

// cell is one cell: its values (shown comma-separated, or stacked) and its style.
type cell struct {
	values []string
	style  *lipgloss.Style
}

func text(s string) cell { return cell{values: []string{s}} }

func styled(s string, st lipgloss.Style) cell { return cell{values: []string{s}, style: &st} }

// list is a cell of several values; none shows as "<none>", as in kubectl.
func list(values []string, none lipgloss.Style) cell {
	if len(values) == 0 {
		return styled("<none>", none)
	}
	return cell{values: values}
}

type table struct {
	columns []column
	rows    [][]cell
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// layout is how the table is drawn: which columns, how far apart, stacked or not, and
// at which width.
type layout struct {
	gap     int
	stacked bool
	hidden  []bool
	widths  []int
}

func (l layout) total() int {
	sum, shown := 0, 0
	for i, w := range l.widths {
		if !l.hidden[i] {
			sum += w
			shown++
		}
	}
	return sum + l.gap*(shown-1)
}

// fit chooses the first layout, in the order the package comment gives, that is no
// wider than width; if none is, the narrowest.
func (t *table) fit(width int) layout {
	maxOptional := 0
	for _, c := range t.columns {
		maxOptional = max(maxOptional, c.optional)
	}
	var l layout
	for _, try := range []struct{ stacked, tight bool }{{false, false}, {true, false}, {true, true}} {
		l = t.shrink(try.stacked, try.tight, 0, width)
		if l.total() <= width {
			return l
		}
	}
	for drop := 1; drop <= maxOptional; drop++ {
		if l = t.shrink(true, true, drop, width); l.total() <= width {
			return l
		}
	}
	return l
}

// shrink lays the table out, leaving out the optional columns ranked up to drop, and
// narrows the widest columns that may narrow until the table fits width or every
// column is at its minimum.
func (t *table) shrink(stacked, tight bool, drop, width int) layout {
	l := layout{gap: columnGap, stacked: stacked, hidden: make([]bool, len(t.columns)), widths: make([]int, len(t.columns))}
	if tight {
		l.gap = tightColumnGap
	}
	for i, c := range t.columns {
		l.hidden[i] = c.optional > 0 && c.optional <= drop
		l.widths[i] = ansi.StringWidth(c.header)
	}
	for _, row := range t.rows {
		for i, c := range row {
			for _, line := range c.lines(stacked && t.columns[i].stack) {
				l.widths[i] = max(l.widths[i], ansi.StringWidth(line))
			}
		}
	}
	for excess := l.total() - width; excess > 0; excess-- {
		widest := -1
		for i, c := range t.columns {
			floor := max(c.minWidth, ansi.StringWidth(c.header))
			if !l.hidden[i] && c.minWidth > 0 && l.widths[i] > floor && (widest < 0 || l.widths[i] > l.widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		l.widths[widest]--
	}
	return l
}

func (c cell) lines(stacked bool) []string {
	if stacked {
		return c.values
	}
	return []string{strings.Join(c.values, ",")}
}

// draw renders the cell in a column of the given width, wrapping lines that are too
// long, and styles each line (a style must not span the table's padding).
func (c cell) draw(col column, stacked bool, width int) string {
	var lines []string
	for _, line := range c.lines(stacked) {
		if ansi.StringWidth(line) > width {
			lines = append(lines, wrap(line, width, col.breakAt)...)
		} else {
			lines = append(lines, line)
		}
	}
	if c.style != nil {
		for i, line := range lines {
			lines[i] = c.style.Render(line)
		}
	}
	return strings.Join(lines, "\n")
}

// wrap breaks s into lines of at most width columns: between words where it can, and
// inside a word longer than a line after a hyphen or a breakAt character (anywhere as a
// last resort). Runs of spaces become one.
func wrap(s string, width int, breakAt string) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for _, piece := range strings.Split(ansi.Wrap(word, width, breakAt), "\n") {
			switch {
			case line == "":
				line = piece
			case ansi.StringWidth(line)+1+ansi.StringWidth(piece) <= width:
				line += " " + piece
			default:
				lines = append(lines, line)
				line = piece
			}
		}
	}
	return append(lines, line)
}

// trailing is what tablewriter leaves at the end of a line: the last column's padding,
// and resets of styles that already ended.
var trailing = regexp.MustCompile(`(?: +(?:\x1b\[0m)*)+$`)

// render draws the table in at most width columns (when the minimums allow), with
// headers in the header style.
func (t *table) render(w io.Writer, width int, header lipgloss.Style) error {
	l := t.fit(width)
	var buf bytes.Buffer
	pad := tw.CellPadding{Global: tw.Padding{Right: strings.Repeat(" ", l.gap), Overwrite: true}}
	cells := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
		Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
		Padding:    pad,
	}
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off, ShowHeader: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off, ShowTop: tw.Off, ShowBottom: tw.Off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{Header: cells, Row: cells}),
	)
	var headers []string
	for i, c := range t.columns {
		if !l.hidden[i] {
			headers = append(headers, header.Render(c.header))
		}
	}
	tbl.Header(headers)
	for _, row := range t.rows {
		var cells []string
		for i, c := range row {
			if !l.hidden[i] {
				cells = append(cells, c.draw(t.columns[i], l.stacked && t.columns[i].stack, l.widths[i]))
			}
		}
		if err := tbl.Append(cells); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if _, err := io.WriteString(w, trailing.ReplaceAllString(line, "")+"\n"); err != nil {
			return err
		}
	}
	return nil
}
