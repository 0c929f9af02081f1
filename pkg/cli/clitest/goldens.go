package clitest

import "testing"

// GoldenTerminal is a terminal a view's golden is drawn on, and the suffix of its file,
// testdata/NAME-SUFFIX.golden. The suffixes say what each file must be, which
// TestGoldenLayouts holds every golden of the plugin to: NAME-W is piped (W, the width
// the environment claims, fits no table: they are not fitted), NAME-W-colour a W-column
// terminal in colour, NAME-W-tty the same terminal with NO_COLOR.
type GoldenTerminal struct {
	Suffix string
	Term   Terminal
}

// The terminals of the goldens.
var (
	Piped80    = GoldenTerminal{"80", Terminal{Width: 80}}
	Piped200   = GoldenTerminal{"200", Terminal{Width: 200}}
	Colour80   = GoldenTerminal{"80-colour", Terminal{TTY: true, Width: 80}}
	Colour200  = GoldenTerminal{"200-colour", Terminal{TTY: true, Width: 200}}
	NoColour80 = GoldenTerminal{"80-tty", Terminal{TTY: true, Width: 80, NoColor: true}}
)

// GoldenTerminals are the terminals a view that colours is pinned on: piped and in
// colour at 80 and 200 columns, and at 80 columns with NO_COLOR, the terminal's layout
// to read without escapes.
var GoldenTerminals = []GoldenTerminal{Piped80, Colour80, NoColour80, Piped200, Colour200}

// Goldens draws a view on each terminal, in a subtest named after its golden, checks
// that the output fits the terminal (FitsTerminal), and compares it with
// testdata/NAME-SUFFIX.golden (rewritten by -update).
func Goldens(t *testing.T, name string, terms []GoldenTerminal, draw func(t *testing.T, term Terminal) string) {
	t.Helper()
	for _, gt := range terms {
		t.Run(name+"-"+gt.Suffix, func(t *testing.T) {
			out := draw(t, gt.Term)
			FitsTerminal(t, out, gt.Term)
			Golden(t, name+"-"+gt.Suffix, out)
		})
	}
}
