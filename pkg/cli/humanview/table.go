// Tables are drawn the way kubectl draws them (upper-case headers, columns
// three spaces apart, no borders), laid out by tablewriter.
//
// On a terminal a table is made to fit its width. When it is too wide, the columns that
// may narrow (Column.MinWidth) fold their cells, widest first and never below their
// minimum; when that is not enough, in turn: cells holding several values put one value
// per line (Column.Stack); columns move closer (Table.TightGap); and optional columns
// are left out, least useful first (Column.Optional), unless the user asked for every
// column (Table.Wide). A column folds its cells by wrapping them between words, and
// never narrows below its longest word, so an identifier is never split; a column of
// free text (Column.Cut) is cut short with "…" instead, as narrow as its minimum. A
// table whose narrowest layout is still too wide overflows the terminal: an identifier
// is never split to fit.
//
// Not on a terminal (width 0) nothing is fitted: every row is one line, every cell
// whole, so that what a script greps or cuts is what the cluster holds.

package humanview

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// columnGap is the spaces between columns, as in kubectl's tables.
const columnGap = 3

// Column is a table column and how its cells give way when the table is too wide.
type Column struct {
	Header string
	// Stack lets a cell of several values show one value per line.
	Stack bool
	// MinWidth is how narrow the column may become by folding its cells (never narrower
	// than its header); 0 keeps it at its natural width.
	MinWidth int
	// Optional ranks the columns left out of a table too wide for the terminal: 1
	// first, then 2, …; 0 is never left out.
	Optional int
	// Wide columns are shown only when the table is drawn wide (Table.Wide, -o wide).
	Wide bool
	// Cut marks free text (a message, a list that abbreviates itself): the column may
	// narrow to MinWidth whatever its words, its cells cut short rather than wrapped.
	// Any other column never narrows below its longest word.
	Cut bool
	// Fold breaks a line wider than the column into lines that fit; nil is Wrap("")
	// for a column that wraps, and Cut for one that cuts.
	Fold func(line string, width int) []string
}

// Cell is one cell: its values (shown comma-separated, or stacked) and its style (nil
// for none).
type Cell struct {
	Values []string
	Style  *lipgloss.Style
}

// Text is a cell of one plain value.
func Text(s string) Cell { return Cell{Values: []string{s}} }

// Styled is a cell of one value drawn in st.
func Styled(s string, st lipgloss.Style) Cell { return Cell{Values: []string{s}, Style: &st} }

// List is a cell of several values; none shows as "<none>" in the none style, as in
// kubectl.
func List(values []string, none lipgloss.Style) Cell {
	if len(values) == 0 {
		return Styled("<none>", none)
	}
	return Cell{Values: values}
}

// Table is the columns, the rows (a cell per column) and how they are drawn.
type Table struct {
	Columns []Column
	Rows    [][]Cell
	// Header styles the column headers.
	Header lipgloss.Style
	// TightGap, when not 0, is the narrower gap the columns may close to before
	// optional columns are left out.
	TightGap int
	// Wide shows the Wide columns too, and leaves out no optional column: the user
	// asked for all of them, even if the table is then wider than the terminal.
	Wide bool
}

// Add appends a row.
func (t *Table) Add(cells ...Cell) { t.Rows = append(t.Rows, cells) }

// Render draws the table in at most width columns (wider only when the columns'
// minimums do not fit), or, when width is 0 (not a terminal), unfitted: one line
// per row and every cell whole. The table is laid out in plain text and each cell styled where
// it landed: styled before the layout, tablewriter would end the padding of every
// styled cell with a reset of its own.
func (t *Table) Render(w io.Writer, width int) error {
	l := t.fit(width)
	var header []string
	for i, c := range t.Columns {
		if !l.hidden[i] {
			header = append(header, c.Header)
		}
	}
	rows := make([][]folded, len(t.Rows))
	for r, row := range t.Rows {
		for i, c := range row {
			if !l.hidden[i] {
				rows[r] = append(rows[r], folded{lines: c.fold(t.Columns[i], l.stacked && t.Columns[i].Stack, l.widths[i]), style: c.Style})
			}
		}
	}
	lines, err := draw(header, rows, l.gap)
	if err != nil {
		return fmt.Errorf("lay out table: %w", err)
	}
	if lines, err = t.styleLines(lines, header, rows); err != nil {
		return fmt.Errorf("lay out table: %w", err)
	}
	_, err = io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// LeftOut is the headers of the optional columns Render leaves out to fit width, in
// the table's order: none when width is 0 (not fitted) or the table is wide.
func (t *Table) LeftOut(width int) []string {
	l := t.fit(width)
	var out []string
	for i, c := range t.Columns {
		if l.hidden[i] && !c.Wide {
			out = append(out, c.Header)
		}
	}
	return out
}

// FitAlike makes tables drawn one after another at width show the same columns: a
// column that one of them leaves out to fit is left out of every one, by its header,
// as a Wide column (shown with -o wide). It returns the headers left out, in the
// order they first appear, for the view to say that -o wide shows them.
func FitAlike(width int, tables ...*Table) []string {
	var out []string
	for _, t := range tables {
		for _, h := range t.LeftOut(width) {
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	for _, t := range tables {
		for i, c := range t.Columns {
			if slices.Contains(out, c.Header) {
				t.Columns[i].Wide = true
			}
		}
	}
	return out
}

// folded is a shown cell: its lines as they fit its column, and its style.
type folded struct {
	lines []string
	style *lipgloss.Style
}

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
// wider than width; if none is, the narrowest. Width 0 is the natural layout.
func (t *Table) fit(width int) layout {
	if width <= 0 {
		return t.shrink(false, columnGap, 0, 0)
	}
	var l layout
	for _, stacked := range []bool{false, true} {
		if l = t.shrink(stacked, columnGap, 0, width); l.total() <= width {
			return l
		}
	}
	gap := columnGap
	if t.TightGap > 0 {
		gap = t.TightGap
		if l = t.shrink(true, gap, 0, width); l.total() <= width {
			return l
		}
	}
	if t.Wide {
		return l
	}
	maxOptional := 0
	for _, c := range t.Columns {
		maxOptional = max(maxOptional, c.Optional)
	}
	for drop := 1; drop <= maxOptional; drop++ {
		if l = t.shrink(true, gap, drop, width); l.total() <= width {
			return l
		}
	}
	return l
}

// shrink lays the table out, leaving out the Wide columns of a table not drawn wide
// and the optional columns ranked up to drop, and, when width is not 0, narrows the
// widest columns that may narrow until the table fits width or every column is at its
// floor (floor).
func (t *Table) shrink(stacked bool, gap, drop, width int) layout {
	l := layout{gap: gap, stacked: stacked, hidden: make([]bool, len(t.Columns)), widths: make([]int, len(t.Columns))}
	floors := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		l.hidden[i] = c.Wide && !t.Wide || c.Optional > 0 && c.Optional <= drop
		l.widths[i] = ansi.StringWidth(c.Header)
		floors[i] = max(c.MinWidth, l.widths[i])
	}
	for _, row := range t.Rows {
		for i, c := range row {
			for _, line := range c.lines(stacked && t.Columns[i].Stack) {
				l.widths[i] = max(l.widths[i], ansi.StringWidth(line))
				if !t.Columns[i].Cut {
					floors[i] = max(floors[i], longestWord(line))
				}
			}
		}
	}
	if width <= 0 {
		return l
	}
	for excess := l.total() - width; excess > 0; excess-- {
		widest := -1
		for i, c := range t.Columns {
			if !l.hidden[i] && c.MinWidth > 0 && l.widths[i] > floors[i] && (widest < 0 || l.widths[i] > l.widths[widest]) {
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

// longestWord is the width of the widest space-separated word of line: what a column
// that wraps must hold so that no word is split.
func longestWord(line string) int {
	n := 0
	for _, w := range strings.Fields(line) {
		n = max(n, ansi.StringWidth(w))
	}
	return n
}

func (c Cell) lines(stacked bool) []string {
	if stacked {
		return c.Values
	}
	return []string{strings.Join(c.Values, ",")}
}

// fold gives the cell's lines as they fit a column of the given width.
func (c Cell) fold(col Column, stacked bool, width int) []string {
	fold := col.Fold
	switch {
	case fold == nil && col.Cut:
		fold = Cut
	case fold == nil:
		fold = Wrap("")
	}
	var lines []string
	for _, line := range c.lines(stacked) {
		if ansi.StringWidth(line) > width {
			lines = append(lines, fold(line, width)...)
		} else {
			lines = append(lines, line)
		}
	}
	return lines
}

// Wrap folds a line between words, and inside a word longer than a line after a
// hyphen or a breakAt character (anywhere as a last resort): a word that fits a line
// is never split, and in a table none is longer than its column unless the column
// cuts. Runs of spaces become one.
func Wrap(breakAt string) func(line string, width int) []string {
	return func(s string, width int) []string {
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
}

// Cut folds a line by cutting it short with "…".
func Cut(line string, width int) []string {
	return []string{ansi.Truncate(line, width, "…")}
}

// draw lays out the header and the folded rows in plain text with tablewriter, columns
// gap apart, and returns the lines without the padding that ends them.
func draw(header []string, rows [][]folded, gap int) ([]string, error) {
	cellConfig := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
		Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
		Padding:    tw.CellPadding{Global: tw.Padding{Right: strings.Repeat(" ", gap), Overwrite: true}},
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithConfig(tablewriter.Config{Header: cellConfig, Row: cellConfig}),
	)
	tbl.Header(header)
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = strings.Join(c.lines, "\n")
		}
		if err := tbl.Append(cells); err != nil {
			return nil, err
		}
	}
	if err := tbl.Render(); err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " ")
	}
	return lines, nil
}

// styleLines styles the plain lines drawn from header and rows: the header in the
// header style, and each line of a row's cells in the cell's style.
func (t *Table) styleLines(lines, header []string, rows [][]folded) ([]string, error) {
	height := 1
	for _, row := range rows {
		height += rowHeight(row)
	}
	if len(lines) != height {
		return nil, fmt.Errorf("%d lines drawn for %d expected", len(lines), height)
	}
	out := make([]string, 0, len(lines))
	segments := make([]segment, len(header))
	for i, h := range header {
		segments[i] = segment{text: h, style: &t.Header}
	}
	out = append(out, styleSegments(lines[0], segments))
	next := 1
	for _, row := range rows {
		for k := range rowHeight(row) {
			segments := make([]segment, len(row))
			for i, c := range row {
				if k < len(c.lines) {
					segments[i] = segment{text: c.lines[k], style: c.style}
				}
			}
			out = append(out, styleSegments(lines[next], segments))
			next++
		}
	}
	return out, nil
}

// rowHeight is how many lines a row takes: its tallest cell's.
func rowHeight(row []folded) int {
	h := 1
	for _, c := range row {
		h = max(h, len(c.lines))
	}
	return h
}

// segment is the text of a cell on one drawn line, and its style.
type segment struct {
	text  string
	style *lipgloss.Style
}

// styleSegments styles the segments of a drawn line: each segment's text is found
// after the previous one's, left to right, and replaced by its styled form.
func styleSegments(line string, segments []segment) string {
	var out strings.Builder
	rest := line
	for _, s := range segments {
		i := strings.Index(rest, s.text)
		if s.text == "" || i < 0 {
			continue
		}
		out.WriteString(rest[:i])
		if s.style != nil {
			out.WriteString(s.style.Render(s.text))
		} else {
			out.WriteString(s.text)
		}
		rest = rest[i+len(s.text):]
	}
	out.WriteString(rest)
	return out.String()
}
