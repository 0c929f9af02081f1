package connectcmd

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/ovnk/ovnk/pkg/cli/humanview"
)

// healthStyle is the style of a health.
func healthStyle(p humanview.Palette, h health) lipgloss.Style {
	switch h {
	case healthGood:
		return p.Good
	case healthPending:
		return p.Warn
	case healthBad:
		return p.Bad
	}
	return p.Plain
}

// foldList folds a cell of comma-separated values as if stacked, one value per line
// (it may wrap, unlike stacking, when other columns are narrow), and a value too wide
// for the column after a hyphen or a breakAt character.
func foldList(breakAt string) func(line string, width int) []string {
	return func(line string, width int) []string {
		var out []string
		for _, v := range strings.Split(line, ",") {
			out = append(out, humanview.Wrap(breakAt)(v, width)...)
		}
		return out
	}
}
