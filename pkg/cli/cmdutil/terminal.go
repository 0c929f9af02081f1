package cmdutil

import (
	"io"
	"os"
	"strconv"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/term"
)

// defaultWidth is the width assumed when the output is not a terminal and COLUMNS is
// unset: what a pipe or a file gets, so output there does not depend on who ran it.
const defaultWidth = 80

// fileDescriptor is what *os.File offers; a stream without it is never a terminal.
type fileDescriptor interface{ Fd() uintptr }

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(fileDescriptor)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TerminalWidth is the width of the terminal w, or 0.
func TerminalWidth(w any) int {
	f, ok := w.(fileDescriptor)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// Colour reports whether output to Out may be coloured: only on a terminal, and never
// with NO_COLOR (any value, https://no-color.org) or --no-color.
func (f *Factory) Colour() bool {
	if f.Settings != nil && f.Settings.NoColor {
		return false
	}
	if f.getenv("NO_COLOR") != "" {
		return false
	}
	return f.isTerminal(f.Out)
}

// Width is the number of columns output to Out may use: the terminal's, else COLUMNS,
// else defaultWidth.
func (f *Factory) Width() int {
	if f.TerminalWidth != nil {
		if w := f.TerminalWidth(f.Out); w > 0 {
			return w
		}
	} else if w := TerminalWidth(f.Out); w > 0 {
		return w
	}
	if n, err := strconv.Atoi(f.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}

// TableWidth is the width tables are fitted to: Width on a terminal, and 0 — not
// fitted at all — when Out is not one. Piped, a table keeps every row on one line
// and every cell whole, whatever the width, so that grep and cut see what the cluster
// holds and scripts see the same text wherever they run.
func (f *Factory) TableWidth() int {
	if !f.isTerminal(f.Out) {
		return 0
	}
	return f.Width()
}

// Renderer is a lipgloss renderer for w that colours only when Colour says so.
func (f *Factory) Renderer(w io.Writer) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(w)
	if f.Colour() {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

func (f *Factory) getenv(key string) string {
	if f.Getenv != nil {
		return f.Getenv(key)
	}
	return os.Getenv(key)
}

func (f *Factory) isTerminal(w any) bool {
	if f.IsTerminal != nil {
		return f.IsTerminal(w)
	}
	return IsTerminal(w)
}
