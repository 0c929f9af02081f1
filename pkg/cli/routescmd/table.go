package routescmd

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// columnGap separates columns, as in kubectl's tables.
const columnGap = "   "

// trailingPadding is the spaces, and the colour reset after them, that end a table
// line; the reset is kept.
var trailingPadding = regexp.MustCompile(` +(\x1b\[0m)?$`)

// minColumnWidth is as narrow as a column is squeezed to fit the terminal, unless its
// heading is wider: narrower columns would wrap addresses into unreadable pieces.
const minColumnWidth = 12

// table is one kubectl-style table: upper-case headings, no borders, columns that
// are empty in every row left out, and cells wrapped so the table fits the width.
type table struct {
	header []string
	rows   [][]string
}

// render draws the table in at most width columns (wider only when even the narrowest
// columns do not fit); heading styles the headings.
func (t table) render(w io.Writer, width int, heading lipgloss.Style) error {
	keep := t.nonEmptyColumns()
	header := pick(t.header, keep)
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = pick(r, keep)
	}
	widths := fitWidths(header, rows, width-len(columnGap)*(len(header)-1))
	styled := make([]string, len(header))
	for i, h := range header {
		styled[i] = heading.Render(h)
	}
	cell := tw.CellConfig{
		Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
		Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off},
		Padding:    tw.CellPadding{Global: tw.Padding{Right: columnGap, Overwrite: true}},
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithConfig(tablewriter.Config{Header: cell, Row: cell}),
	)
	tbl.Header(styled)
	for _, r := range rows {
		wrapped := make([]string, len(r))
		for i, c := range r {
			wrapped[i] = ansi.Wrap(c, widths[i], "_")
		}
		if err := tbl.Append(wrapped); err != nil {
			return fmt.Errorf("lay out table: %w", err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("lay out table: %w", err)
	}
	// Padding leaves the last column's gap at the end of every line, followed by a
	// reset when the headings are styled; every styled heading resets itself.
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = trailingPadding.ReplaceAllString(l, "$1")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// nonEmptyColumns says which columns have a value in some row.
func (t table) nonEmptyColumns() []bool {
	keep := make([]bool, len(t.header))
	for _, r := range t.rows {
		for i, c := range r {
			keep[i] = keep[i] || c != ""
		}
	}
	return keep
}

func pick(cells []string, keep []bool) []string {
	var out []string
	for i, c := range cells {
		if keep[i] {
			out = append(out, c)
		}
	}
	return out
}

// fitWidths gives each column its widest cell, then, while the total exceeds avail,
// takes a column from the widest one that is still wider than its minimum.
func fitWidths(header []string, rows [][]string, avail int) []int {
	widths := make([]int, len(header))
	minimum := make([]int, len(header))
	for i, h := range header {
		widths[i] = ansi.StringWidth(h)
		for _, r := range rows {
			widths[i] = max(widths[i], ansi.StringWidth(r[i]))
		}
		minimum[i] = min(widths[i], max(ansi.StringWidth(h), minColumnWidth))
	}
	total := 0
	for _, w := range widths {
		total += w
	}
	for total > avail {
		widest := -1
		for i := range widths {
			if widths[i] > minimum[i] && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		total--
	}
	return widths
}
