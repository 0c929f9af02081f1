package humanview

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

func TestRenderWraps(t *testing.T) {
	plain := lipgloss.NewStyle()
	for _, c := range []struct {
		name  string
		line  Line
		width int
		want  string
	}{
		{"fits", Line{{plain, "peer: rtoe-GR_node1 on switch ext_node1"}}, 80, "peer: rtoe-GR_node1 on switch ext_node1"},
		{"at spaces, continuation indented", Line{{plain, "aaaa bbbb cccc dddd"}}, 10, "aaaa bbbb\n  cccc\n  dddd"},
		{"glued words stay together", Line{{plain, "xxxx " + Glue("tunnel key: ")}, {plain, "4"}}, 16, "xxxx\n  tunnel key: 4"},
		{"a long name breaks after _", Line{{plain, "GR_test12_namespace.scoped_ovn-worker"}}, 20, "GR_test12_namespace.\n  scoped_ovn-worker"},
		{"a break too early is not taken", Line{{plain, "ab_cdefghijklmnop"}}, 12, "ab_cdefghijk\n  lmnop"},
		{"a name without breaks is cut", Line{{plain, "abcdefghijkl"}}, 5, "abcde\n  fgh\n  ijk\n  l"},
		{"empty", nil, 10, ""},
		{"width 0 (not a terminal) keeps it whole", Line{{plain, "aaaa bbbb " + strings.Repeat("c", 200)}}, 0, "aaaa bbbb " + strings.Repeat("c", 200)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.line.Render(c.width)
			if got != c.want {
				t.Errorf("Render(%d) =\n%s\nwant\n%s", c.width, got, c.want)
			}
			for _, l := range strings.Split(got, "\n") {
				if c.width > 0 && ansi.StringWidth(l) > c.width {
					t.Errorf("line %q is wider than %d", l, c.width)
				}
			}
		})
	}
}

// TestRenderStylesRuns: a wrapped run keeps its style on every line, and a run is
// styled once per line rather than once per word.
func TestRenderStylesRuns(t *testing.T) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI256)
	bold := r.NewStyle().Bold(true)
	l := Line{{r.NewStyle(), "label: "}, {bold, "one two three"}}
	got := l.Render(16)
	want := "label: " + bold.Render("one two") + "\n  " + bold.Render("three")
	if got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}
