package humanview

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestFitOrder narrows one table step by step and checks that each width gives way in
// the package comment's order: folding, stacking, a tight gap, leaving columns out;
// and that no identifier is ever split, even when the table then overflows.
func TestFitOrder(t *testing.T) {
	newTable := func() *Table {
		t := &Table{TightGap: 2, Columns: []Column{
			{Header: "NAME", MinWidth: 6},
			{Header: "SUBNETS", Stack: true},
			{Header: "MESSAGE", MinWidth: 8, Optional: 2},
			{Header: "AGE", Optional: 1},
		}}
		t.Add(Text("storage-net"), Cell{Values: []string{"10.0.0.0/16", "fd00::/48"}}, Text("waits for node-b"), Text("3d"))
		return t
	}
	cases := []struct {
		width int
		want  string
	}{
		{80, `
NAME          SUBNETS                 MESSAGE            AGE
storage-net   10.0.0.0/16,fd00::/48   waits for node-b   3d`},
		{54, `
NAME          SUBNETS                 MESSAGE     AGE
storage-net   10.0.0.0/16,fd00::/48   waits for   3d
                                      node-b`},
		{48, `
NAME          SUBNETS       MESSAGE     AGE
storage-net   10.0.0.0/16   waits for   3d
              fd00::/48     node-b`},
		{40, `
NAME         SUBNETS      MESSAGE    AGE
storage-net  10.0.0.0/16  waits for  3d
             fd00::/48    node-b`},
		{38, `
NAME         SUBNETS      MESSAGE
storage-net  10.0.0.0/16  waits for
             fd00::/48    node-b`},
		{24, `
NAME         SUBNETS
storage-net  10.0.0.0/16
             fd00::/48`},
		{12, `
NAME         SUBNETS
storage-net  10.0.0.0/16
             fd00::/48`},
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

// TestNotFitted draws a table as it goes to a pipe (width 0): one line per row, every
// cell whole and its values comma-separated, optional columns kept, wide ones left
// out unless the table is wide.
func TestNotFitted(t *testing.T) {
	tb := &Table{TightGap: 2, Columns: []Column{
		{Header: "NAME", MinWidth: 4},
		{Header: "SUBNETS", Stack: true, MinWidth: 4},
		{Header: "MESSAGE", MinWidth: 4, Cut: true},
		{Header: "AGE", Optional: 1},
		{Header: "OVN NAME", Wide: true},
	}}
	tb.Add(Text("blue/storage-net"), Cell{Values: []string{"10.0.0.0/16", "fd00::/48"}}, Text("waits for the zone of node-b to report"), Text("3d"), Text("blue_storage.net"))
	var buf bytes.Buffer
	if err := tb.Render(&buf, 0); err != nil {
		t.Fatal(err)
	}
	want := "NAME               SUBNETS                 MESSAGE                                  AGE\n" +
		"blue/storage-net   10.0.0.0/16,fd00::/48   waits for the zone of node-b to report   3d\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	tb.Wide = true
	buf.Reset()
	if err := tb.Render(&buf, 0); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[0], "AGE   OVN NAME") || !strings.HasSuffix(lines[1], "3d    blue_storage.net") {
		t.Errorf("wide, not fitted:\n%s", buf.String())
	}
}

// TestWideKeepsOptional: a wide table on a narrow terminal leaves out no column, as
// the user asked for all of them; it wraps and cuts what it can and overflows.
func TestWideKeepsOptional(t *testing.T) {
	tb := &Table{Wide: true, Columns: []Column{
		{Header: "NAME"}, {Header: "ERROR", MinWidth: 6, Cut: true}, {Header: "AGE", Optional: 1}, {Header: "VERSION", Wide: true},
	}}
	tb.Add(Text("node-a"), Text("connection refused"), Text("3d"), Text("v1.2.3"))
	var buf bytes.Buffer
	if err := tb.Render(&buf, 20); err != nil {
		t.Fatal(err)
	}
	want := "NAME     ERROR    AGE   VERSION\n" +
		"node-a   conne…   3d    v1.2.3\n"
	if buf.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", buf.String(), want)
	}
}

// TestWrapAndCut: a column that wraps breaks between words and keeps its longest word
// (an OVN port name in a match) whole; a column of free text is cut.
func TestWrapAndCut(t *testing.T) {
	tb := &Table{Columns: []Column{
		{Header: "MATCH", MinWidth: 8},
		{Header: "ERROR", MinWidth: 8, Cut: true},
	}}
	tb.Add(Text(`inport == "trtos-green_layer2_switch" && tcp`), Text("connection refused"))
	var buf bytes.Buffer
	if err := tb.Render(&buf, 40); err != nil {
		t.Fatal(err)
	}
	want := "MATCH                         ERROR\n" +
		"inport ==                     connectio…\n" +
		"\"trtos-green_layer2_switch\"\n" +
		"&& tcp\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
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

// TestFitAlike: tables drawn one after another show the same columns: the optional
// column one of them leaves out to fit is left out of the other too, which alone would
// have kept it; LeftOut names it, and a wide table, or one not fitted, leaves none out.
func TestFitAlike(t *testing.T) {
	newTable := func(port string) *Table {
		t := &Table{TightGap: 2, Columns: []Column{{Header: "PREFIX"}, {Header: "NEXTHOP"}, {Header: "OUTPUT PORT", Optional: 1}}}
		t.Add(Text("10.0.0.0/8"), Text("100.64.0.1"), Text(port))
		return t
	}
	short, long := newTable("rtoe-GR_a"), newTable("rtoe-GR_a_router_of_a_long_network_name")
	if got := short.LeftOut(40); len(got) != 0 {
		t.Errorf("the short table alone leaves out %q at 40 columns, want nothing", got)
	}
	if got := long.LeftOut(40); !slices.Equal(got, []string{"OUTPUT PORT"}) {
		t.Errorf("the long table leaves out %q at 40 columns, want OUTPUT PORT", got)
	}
	if got := long.LeftOut(0); len(got) != 0 {
		t.Errorf("not fitted, the long table leaves out %q", got)
	}
	if got := FitAlike(40, short, long); !slices.Equal(got, []string{"OUTPUT PORT"}) {
		t.Fatalf("FitAlike left out %q, want OUTPUT PORT", got)
	}
	var buf bytes.Buffer
	for _, tb := range []*Table{short, long} {
		if err := tb.Render(&buf, 40); err != nil {
			t.Fatal(err)
		}
	}
	want := "PREFIX       NEXTHOP\n10.0.0.0/8   100.64.0.1\n" +
		"PREFIX       NEXTHOP\n10.0.0.0/8   100.64.0.1\n"
	if buf.String() != want {
		t.Errorf("fitted alike:\n%s\nwant:\n%s", buf.String(), want)
	}
	// -o wide shows what FitAlike left out.
	short.Wide = true
	buf.Reset()
	if err := short.Render(&buf, 40); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "rtoe-GR_a") {
		t.Errorf("wide, the column left out is not shown:\n%s", buf.String())
	}
	long = newTable("rtoe-GR_a_router_of_a_long_network_name")
	long.Wide = true
	if got := FitAlike(40, long); len(got) != 0 {
		t.Errorf("a wide table leaves out %q", got)
	}
}

// TestOverflowRatherThanSplit: a table whose identifiers cannot fit the width, even
// with every optional column left out, overflows it with every identifier whole.
func TestOverflowRatherThanSplit(t *testing.T) {
	tb := &Table{Columns: []Column{{Header: "PORT", MinWidth: 4}, {Header: "MATCH", MinWidth: 4}}}
	tb.Add(Text("rtos-cluster_udn_blue_node1"), Text(`inport == "rtos-cluster_udn_blue_node1"`))
	var buf bytes.Buffer
	if err := tb.Render(&buf, 20); err != nil {
		t.Fatal(err)
	}
	want := "PORT                          MATCH\n" +
		"rtos-cluster_udn_blue_node1   inport ==\n" +
		"                              \"rtos-cluster_udn_blue_node1\"\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}
