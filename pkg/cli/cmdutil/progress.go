package cmdutil

import (
	"fmt"
	"io"

	"github.com/charmbracelet/x/ansi"
)

// ProgressLine shows how a long wait is going in one line on standard error: on a
// terminal the line is rewritten in place, elsewhere (a CI log, a file) each report is
// a line of its own.
type ProgressLine struct {
	w        io.Writer
	terminal bool
	width    int
	drawn    bool // a terminal line is on screen
}

// ProgressLine is the progress line of one wait, on f's standard error.
func (f *Factory) ProgressLine() *ProgressLine {
	width := TerminalWidth
	if f.TerminalWidth != nil {
		width = f.TerminalWidth
	}
	l := &ProgressLine{w: f.ErrOut, terminal: f.isTerminal(f.ErrOut), width: width(f.ErrOut)}
	if l.width <= 0 {
		l.width = defaultWidth
	}
	return l
}

// Terminal reports whether the line is rewritten in place.
func (l *ProgressLine) Terminal() bool { return l.terminal }

// Show reports s: on a terminal in place of the last report, elsewhere on a new line.
func (l *ProgressLine) Show(s string) {
	if !l.terminal {
		fmt.Fprintln(l.w, s)
		return
	}
	// A line wider than the terminal would wrap, and \r would then rewrite only its
	// last part.
	fmt.Fprint(l.w, "\r\x1b[K"+ansi.Truncate(s, l.width-1, "…"))
	l.drawn = true
}

// Finish clears the terminal line, so what follows starts on a clean line.
func (l *ProgressLine) Finish() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
}
