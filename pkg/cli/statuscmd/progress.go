package statuscmd

import (
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// plainEvery is how often a non-terminal gets a progress line when nothing changed, so
// that a CI log shows the wait is alive.
const plainEvery = 10 * time.Second

// progress shows --wait's progress on standard error: on a terminal one line that is
// rewritten in place; elsewhere (a CI log, a file) a plain line whenever the state
// changes, and every plainEvery anyway.
type progress struct {
	w        io.Writer
	terminal bool
	width    int
	start    time.Time

	lastLine    string    // the last state shown, without the elapsed time
	lastPrinted time.Time // when a plain line was last printed
	drawn       bool      // a terminal line is on screen
}

func newProgress(f *cmdutil.Factory) *progress {
	isTerminal, width := cmdutil.IsTerminal, cmdutil.TerminalWidth
	if f.IsTerminal != nil {
		isTerminal = f.IsTerminal
	}
	if f.TerminalWidth != nil {
		width = f.TerminalWidth
	}
	p := &progress{w: f.ErrOut, terminal: isTerminal(f.ErrOut), width: width(f.ErrOut), start: time.Now()}
	if p.width <= 0 {
		p.width = cmdutil.DefaultWidth
	}
	return p
}

// show reports a report that is not ready yet.
func (p *progress) show(r Report) {
	agents, networks := r.Counts()
	line := fmt.Sprintf("%d/%d agents ready, %d/%d networks ready", agents, len(r.Nodes), networks, len(r.Networks))
	if pending := r.Pending(); len(pending) > 0 {
		line += "; waiting for " + pending[0]
		if len(pending) > 1 {
			line += fmt.Sprintf(" and %d more", len(pending)-1)
		}
	}
	elapsed := time.Since(p.start).Round(time.Second)
	if p.terminal {
		// A line wider than the terminal would wrap, and \r would then rewrite only
		// its last part.
		fmt.Fprint(p.w, "\r\x1b[K"+ansi.Truncate(fmt.Sprintf("[%s] %s", elapsed, line), p.width-1, "…"))
		p.drawn = true
		return
	}
	if line == p.lastLine && time.Since(p.lastPrinted) < plainEvery {
		return
	}
	fmt.Fprintf(p.w, "[%s] %s\n", elapsed, line)
	p.lastLine, p.lastPrinted = line, time.Now()
}

// finish clears the terminal line, so what follows starts on a clean line.
func (p *progress) finish() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
