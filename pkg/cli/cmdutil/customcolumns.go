package cmdutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The -o formats of columns the user chooses, kubectl's: custom-columns=HEADER:FIELD,…
// and custom-columns-file=FILE, whose first line holds the headers and second line the
// fields, separated by spaces.
const (
	customColumnsFormat     = "custom-columns"
	customColumnsFileFormat = "custom-columns-file"
)

// customColumnsFormats are the -o values of columns, as the output flag lists them.
var customColumnsFormats = []string{customColumnsFormat, customColumnsFileFormat}

// customColumnsExample is what an error about the columns shows the user to write.
const customColumnsExample = "-o custom-columns=NAME:.metadata.name,CREATED:.metadata.creationTimestamp"

// customColumns is a table of the columns the user chose: under each header, the
// values its field holds in each object, comma-separated, <none> when it holds none.
// As in kubectl the columns are three spaces apart and never fitted to a terminal: the
// user chose them, so none is left out or folded.
type customColumns struct {
	headers []string
	fields  []*jsonpath.JSONPath
	// tw aligns the columns written to out. Kept from one print to the next, it
	// remembers the columns' widths, so that each row a watch prints lines up with
	// those before as far as it can (a wider cell widens its column from then on).
	tw interface {
		io.Writer
		Flush() error
	}
	out io.Writer
}

// isCustomColumns reports whether the -o value format asks for custom columns.
func isCustomColumns(format string) bool {
	name, _, _ := strings.Cut(format, "=")
	return name == customColumnsFormat || name == customColumnsFileFormat
}

// parseCustomColumns reads the columns of the -o value format, custom-columns=SPEC or
// custom-columns-file=FILE, with an error that names the value and how to write it.
func parseCustomColumns(format string) (*customColumns, error) {
	name, value, _ := strings.Cut(format, "=")
	if value == "" {
		return nil, fmt.Errorf("-o %s names no columns: give HEADER:FIELD pairs, such as %s", format, customColumnsExample)
	}
	if name == customColumnsFileFormat {
		return readCustomColumnsFile(value)
	}
	c := &customColumns{}
	for _, col := range strings.Split(value, ",") {
		header, field, ok := strings.Cut(col, ":")
		if !ok || header == "" || field == "" {
			return nil, fmt.Errorf("-o %s: column %q is not HEADER:FIELD: write the columns such as %s", format, col, customColumnsExample)
		}
		if err := c.add(header, field); err != nil {
			return nil, fmt.Errorf("-o %s: %w", format, err)
		}
	}
	return c, nil
}

// readCustomColumnsFile reads the columns of custom-columns-file=path: the headers on
// the first line, their fields on the second.
func readCustomColumnsFile(path string) (*customColumns, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-o %s=%s: %w", customColumnsFileFormat, path, err)
	}
	defer f.Close()
	var lines [][]string
	scanner := bufio.NewScanner(f)
	for len(lines) < 2 && scanner.Scan() {
		lines = append(lines, strings.Fields(scanner.Text()))
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("-o %s=%s: %w", customColumnsFileFormat, path, err)
	}
	if len(lines) < 2 || len(lines[0]) == 0 {
		return nil, fmt.Errorf("-o %s=%s: the file must hold two lines, the headers and then their fields, each separated by spaces (such as \"NAME CREATED\" then \".metadata.name .metadata.creationTimestamp\")", customColumnsFileFormat, path)
	}
	headers, fields := lines[0], lines[1]
	if len(headers) != len(fields) {
		return nil, fmt.Errorf("-o %s=%s: %d headers but %d fields: give one field per header", customColumnsFileFormat, path, len(headers), len(fields))
	}
	c := &customColumns{}
	for i := range headers {
		if err := c.add(headers[i], fields[i]); err != nil {
			return nil, fmt.Errorf("-o %s=%s: %w", customColumnsFileFormat, path, err)
		}
	}
	return c, nil
}

func (c *customColumns) add(header, field string) error {
	p, err := fieldPath(field)
	if err != nil {
		return fmt.Errorf("column %s: field %q: %w", header, field, err)
	}
	c.headers = append(c.headers, header)
	c.fields = append(c.fields, p)
	return nil
}

// print writes a row for each object, after the header row when header is set (a
// watch prints its header once, with the list it starts from).
func (c *customColumns) print(objs []client.Object, header bool, w io.Writer) error {
	if c.tw == nil || c.out != w {
		c.tw, c.out = printers.GetNewTabWriter(w), w
	}
	tw := c.tw
	if header {
		fmt.Fprintln(tw, strings.Join(c.headers, "\t"))
	}
	for _, obj := range objs {
		u, err := objectContent(obj)
		if err != nil {
			return err
		}
		cells := make([]string, len(c.fields))
		for i, field := range c.fields {
			values, err := fieldValues(field, u.Object)
			if err != nil {
				return fmt.Errorf("column %s of %s %s: %w", c.headers[i], u.GetKind(), u.GetName(), err)
			}
			cells[i] = cellText(values)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// cellText is a cell of values: comma-separated, <none> for none, with the terminal's
// control characters escaped, as a field may hold anything a user wrote.
func cellText(values []any) string {
	if len(values) == 0 {
		return "<none>"
	}
	texts := make([]string, len(values))
	for i, v := range values {
		texts[i] = printers.EscapeTerminal(fmt.Sprint(v))
	}
	return strings.Join(texts, ",")
}
