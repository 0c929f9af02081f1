package humanview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestFitOrder narrows one table step by step and checks that each width gives way in
// the package comment's order: folding, stacking, a tight gap, leaving columns out.
func TestFitOrder(t *testing.T) {
	newTable := func() *Table {
		t := &Table{TightGap: 2, Columns: []Column{
			{Header: "NAME", MinWidth: 6},
			{Header: "SUBNETS", Stack: true},
			{Header: "AGE", Optional: 1},
		}}
		t.Add(Text("storage-net"), Cell{Values: []string{"10.0.0.0/16", "fd00::/48"}}, Text("3d"))
		return t
	}
	cases := []struct {
		width int
		want  string
	}{
		{80, `
NAME          SUBNETS                 AGE
storage-net   10.0.0.0/16,fd00::/48   3d`},
		{36, `
NAME     SUBNETS                 AGE
storag   10.0.0.0/16,fd00::/48   3d
e-net`},
		{31, `
NAME          SUBNETS       AGE
storage-net   10.0.0.0/16   3d
              fd00::/48`},
		{29, `
NAME       SUBNETS       AGE
storage-   10.0.0.0/16   3d
net        fd00::/48`},
		{25, `
NAME     SUBNETS      AGE
storage  10.0.0.0/16  3d
-net     fd00::/48`},
		{20, `
NAME     SUBNETS
storage  10.0.0.0/16
-net     fd00::/48`},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		if err := newTable().Render(&buf, tc.width); err != nil {
			t.Fatalf("width %d: %v", tc.width, err)
		}
		if want := strings.TrimPrefix(tc.want, "\n") + "\n"; buf.String() != want {
			t.Errorf("width %d:\n%s\nwant:\n%s", tc.width, buf.String(), want)
		}
	}
}

func TestCutAndFill(t *testing.T) {
	tb := &Table{Columns: []Column{
		{Header: "MATCH", MinWidth: 12, Fold: Fill("_")},
		{Header: "ERROR", MinWidth: 8, Fold: Cut},
	}}
	tb.Add(Text("ip4.dst == 10.0.0.1 && tcp_port"), Text("connection refused"))
	var buf bytes.Buffer
	if err := tb.Render(&buf, 30); err != nil {
		t.Fatal(err)
	}
	want := "MATCH         ERROR\n" +
		"ip4.dst ==    connection re…\n" +
		"10.0.0.1 &&\n" +
		"tcp_port\n"
	if buf.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", buf.String(), want)
	}
}

// TestStyles checks where escape codes go: the table is laid out in plain text and each
// header and cell line styled where it landed, so that padding carries no codes and a
// line ends with its last cell's own reset.
func TestStyles(t *testing.T) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI)
	bold, red := r.NewStyle().Bold(true), r.NewStyle().Foreground(lipgloss.Color("1"))
	tb := &Table{Columns: []Column{{Header: "A"}, {Header: "B", MinWidth: 3}}, Header: bold}
	tb.Add(Styled("no", red), Text("x"))
	tb.Add(Text("x"), Styled("yes sir", red))
	var buf bytes.Buffer
	if err := tb.Render(&buf, 9); err != nil {
		t.Fatal(err)
	}
	want := "\x1b[1mA\x1b[0m    \x1b[1mB\x1b[0m\n" +
		"\x1b[31mno\x1b[0m   x\n" +
		"x    \x1b[31myes\x1b[0m\n" +
		"     \x1b[31msir\x1b[0m\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
