package clitest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// goldenName is a golden's name as GoldenTerminal describes it: the view, the width,
// and the kind of terminal ("" piped, "colour" or "tty").
var goldenName = regexp.MustCompile(`^(.+)-(\d+)(?:-(colour|tty))?\.golden$`)

// TestGoldenLayouts holds every golden of the plugin's commands to what its name says
// it is. On a terminal: every line at most as wide as the terminal (ANSI escapes aside),
// unless it holds a word (an identifier) wider than that, which is never split, or the
// view is -o wide (every column, even wider than the terminal); with NO_COLOR, no escape
// and the coloured golden's lines. Piped: no escape, and every table row on one line
// (tables are not fitted there).
func TestGoldenLayouts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "*", "testdata", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no goldens found under pkg/cli/*/testdata")
	}
	kinds := map[string]int{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		golden := string(data)
		name := filepath.Join(filepath.Base(filepath.Dir(filepath.Dir(path))), filepath.Base(path))
		m := goldenName.FindStringSubmatch(filepath.Base(path))
		kind := "piped"
		if m != nil && m[3] != "" {
			kind = m[3]
		}
		kinds[kind]++
		if kind != "colour" && strings.Contains(golden, "\x1b[") {
			t.Errorf("%s: escape sequences in a golden that is not coloured", name)
		}
		switch kind {
		case "piped":
			for _, row := range wrappedRows(golden) {
				t.Errorf("%s: a table row continues on the next line, piped: %q", name, row)
			}
		case "tty":
			// A view may word what colour shows (status's leader: ★ or yes), but lays
			// it out as in colour.
			colour, err := os.ReadFile(strings.TrimSuffix(path, "-tty.golden") + "-colour.golden")
			if err == nil && strings.Count(string(colour), "\n") != strings.Count(golden, "\n") {
				t.Errorf("%s: not laid out as the coloured golden: %d lines, %d in colour", name, strings.Count(golden, "\n"), strings.Count(string(colour), "\n"))
			}
		}
		if kind == "piped" || strings.HasSuffix(m[1], "-wide") {
			continue
		}
		width, _ := strconv.Atoi(m[2])
		for _, line := range strings.Split(ansi.Strip(golden), "\n") {
			if ansi.StringWidth(line) > width && longestWord(line) <= width {
				t.Errorf("%s: line of %d columns on a %d-column terminal: %q", name, ansi.StringWidth(line), width, line)
			}
		}
	}
	for _, kind := range []string{"piped", "colour", "tty"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s golden: the check above checked nothing of them", kind)
		}
	}
}

// longestWord is the width of the widest space-separated word of line.
func longestWord(line string) int {
	n := 0
	for _, w := range strings.Fields(line) {
		n = max(n, ansi.StringWidth(w))
	}
	return n
}

// tableHeader is a table's header line: upper-case headings, at least two, each at
// least two spaces from the next.
var tableHeader = regexp.MustCompile(`^ *[A-Z][A-Z0-9_]*( [A-Z][A-Z0-9_]*)*( {2,}[A-Z][A-Z0-9_]*( [A-Z][A-Z0-9_]*)*)+$`)

// wrappedRows are the lines of text's tables that continue a row: a line under a
// header, before the table ends (an empty line, or one indented less than the header),
// whose first column is empty. No table of the plugin has a row without a first cell.
func wrappedRows(text string) []string {
	var out []string
	indent := -1 // the header's, while in a table
	for _, line := range strings.Split(ansi.Strip(text), "\n") {
		lead := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case tableHeader.MatchString(line):
			indent = lead
		case indent < 0:
		case strings.TrimSpace(line) == "" || lead < indent:
			indent = -1
		case lead > indent:
			out = append(out, line)
		}
	}
	return out
}

// TestWrappedRows: the check finds a row continued on the next line, in a table at the
// margin or indented, and nothing in whole rows, trees or text.
func TestWrappedRows(t *testing.T) {
	whole := "Title\n  indented text\nNAME   OUTPUT PORT\nblue   rtos-blue\n\nConditions:\n  TYPE   STATUS\n  Ready  True\nDone\n├── tree\n│   └── x\n"
	if got := wrappedRows(whole); len(got) != 0 {
		t.Errorf("rows found wrapped in whole tables: %q", got)
	}
	wrapped := "PRIORITY   MATCH\n1004       inport ==\n           \"rtos-blue\"\n\nNodes:\n  NODE   REASON\n  a      no zone\n         report\n"
	want := []string{`           "rtos-blue"`, "         report"}
	if got := wrappedRows(wrapped); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("wrapped rows %q, want %q", got, want)
	}
}
