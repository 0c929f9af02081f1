package cmdutil

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// TableFeed prints a human table while a command watches (-w), as `kubectl get -w`
// does: the table of the list first, then for each object that changes one new row.
// Each row is drawn in a table of the latest row of every object, so that it lines up
// with them; when that table's columns are not those of the header last printed (on a
// terminal a long row may leave a column out), the header is printed again before
// the row. As in kubectl, a row wider than those before does not move the header
// printed above them. A row's first cell must never be empty or fold, as a name's does not: a
// line starting with a space continues the row above it.
type TableFeed[R any] struct {
	out io.Writer
	// render draws rows as a whole table, header first.
	render func(rows []R, w io.Writer) error
	// keys are the objects with a row, the one printed last at the end.
	keys   []string
	rows   map[string]R
	header string
}

// NewTableFeed is a feed of rows R to out, which render draws as a table.
func NewTableFeed[R any](out io.Writer, render func(rows []R, w io.Writer) error) *TableFeed[R] {
	return &TableFeed[R]{out: out, render: render, rows: map[string]R{}}
}

// Start prints the table of the list, a row per object (keys name them): nothing when
// there is none.
func (f *TableFeed[R]) Start(keys []string, rows []R) error {
	for i, k := range keys {
		f.set(k, rows[i])
	}
	if len(f.keys) == 0 {
		return nil
	}
	lines, err := f.draw()
	if err != nil {
		return err
	}
	f.header = lines[0]
	return f.write(lines)
}

// Has reports whether the table holds a row of the object key.
func (f *TableFeed[R]) Has(key string) bool {
	_, ok := f.rows[key]
	return ok
}

// Changed prints the row of the object key, which changed; deleted drops the object
// from the table after its row is printed.
func (f *TableFeed[R]) Changed(key string, row R, deleted bool) error {
	f.set(key, row)
	lines, err := f.draw()
	if err != nil {
		return err
	}
	if deleted {
		f.keys = f.keys[:len(f.keys)-1]
		delete(f.rows, key)
	}
	last := len(lines) - 1
	for last > 1 && strings.HasPrefix(ansi.Strip(lines[last]), " ") {
		last--
	}
	out := lines[last:]
	if !sameColumns(lines[0], f.header) {
		f.header = lines[0]
		out = append([]string{lines[0]}, out...)
	}
	return f.write(out)
}

// sameColumns reports whether two header lines name the same columns, however wide.
func sameColumns(a, b string) bool {
	return slices.Equal(strings.Fields(ansi.Strip(a)), strings.Fields(ansi.Strip(b)))
}

// set makes row the object's row, and the object the last one.
func (f *TableFeed[R]) set(key string, row R) {
	if i := slices.Index(f.keys, key); i >= 0 {
		f.keys = slices.Delete(f.keys, i, i+1)
	}
	f.keys = append(f.keys, key)
	f.rows[key] = row
}

// draw renders the table of every object's row, and returns its lines.
func (f *TableFeed[R]) draw() ([]string, error) {
	rows := make([]R, len(f.keys))
	for i, k := range f.keys {
		rows[i] = f.rows[k]
	}
	var buf bytes.Buffer
	if err := f.render(rows, &buf); err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"), nil
}

func (f *TableFeed[R]) write(lines []string) error {
	_, err := io.WriteString(f.out, strings.Join(lines, "\n")+"\n")
	return err
}
