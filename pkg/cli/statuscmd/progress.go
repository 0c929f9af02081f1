package statuscmd

import (
	"fmt"
	"time"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// plainEvery is how often a non-terminal gets a progress line when nothing changed, so
// that a CI log shows the wait is alive.
const plainEvery = 10 * time.Second

// waitProgress shows --wait's progress on standard error: on a terminal one line that
// is rewritten in place; elsewhere (a CI log, a file) a plain line whenever the state
// changes, and every plainEvery anyway.
type waitProgress struct {
	line  *cmdutil.ProgressLine
	start time.Time

	lastLine    string    // the last state shown, without the elapsed time
	lastPrinted time.Time // when a plain line was last printed
}

func newWaitProgress(f *cmdutil.Factory) *waitProgress {
	return &waitProgress{line: f.ProgressLine(), start: time.Now()}
}

// show reports a report that is not ready yet.
func (p *waitProgress) show(r Report) {
	agents, networks := r.Counts()
	line := fmt.Sprintf("%d/%d agents ready, %d/%d networks ready", agents, len(r.Nodes), networks, len(r.Networks))
	if pending := r.Pending(); len(pending) > 0 {
		line += "; waiting for " + pending[0]
		if len(pending) > 1 {
			line += fmt.Sprintf(" and %d more", len(pending)-1)
		}
	}
	if !p.line.Terminal() {
		if line == p.lastLine && time.Since(p.lastPrinted) < plainEvery {
			return
		}
		p.lastLine, p.lastPrinted = line, time.Now()
	}
	p.line.Show(fmt.Sprintf("[%s] %s", time.Since(p.start).Round(time.Second), line))
}

// finish clears the terminal line, so what follows starts on a clean line.
func (p *waitProgress) finish() { p.line.Finish() }
