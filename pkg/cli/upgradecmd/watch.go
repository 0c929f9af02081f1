package upgradecmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
)

// plainEvery is how often a non-terminal gets a progress line of -o … --watch when
// nothing changed, so that a CI log shows the watch is alive.
const plainEvery = 30 * time.Second

// display shows the looks of --watch. The human view is redrawn in place on a
// terminal, and elsewhere printed again only when it changed. With -o, standard output
// is kept for the final report, and the progress goes to standard error in one line.
type display struct {
	o     *Options
	start time.Time

	// terminal: standard output is a terminal, where the human view is redrawn.
	terminal bool
	// drawn is how many lines of the terminal the last frame took.
	drawn int
	// last is the last view printed on a non-terminal.
	last string

	// progress is -o's progress line, on standard error.
	progress    *cmdutil.ProgressLine
	lastLine    string
	lastPrinted time.Time
}

func newDisplay(o *Options) *display {
	d := &display{o: o, start: time.Now(), terminal: isTerminal(o.f, o.f.Out)}
	if !o.Output.Human() {
		d.progress = o.f.ProgressLine()
	}
	return d
}

func isTerminal(f *cmdutil.Factory, w any) bool {
	if f.IsTerminal != nil {
		return f.IsTerminal(w)
	}
	return cmdutil.IsTerminal(w)
}

// show shows an assessment of an upgrade that is not complete yet.
func (d *display) show(a assessment) error {
	if d.progress != nil {
		d.showProgress(a)
		return nil
	}
	text, err := d.o.view().draw(a)
	if err != nil {
		return err
	}
	if d.terminal {
		footer := fmt.Sprintf("Watching for %s, every %s; Ctrl-C to stop.", d.elapsed(), d.o.Interval)
		return d.redraw(text + d.o.view().faint.Render(ansi.Truncate(footer, max(d.o.f.Width()-1, 1), "…")) + "\n")
	}
	return d.print(text)
}

// finish shows the last assessment for good: the human view without the watch's
// footer, or the report in the -o format after clearing the progress line.
func (d *display) finish(a assessment) error {
	if d.progress != nil {
		d.progress.Finish()
		warn(d.o.f, a.Warnings)
		return d.o.Output.PrintData(a.Report, d.o.f.Out)
	}
	text, err := d.o.view().draw(a)
	if err != nil {
		return err
	}
	if d.terminal {
		return d.redraw(text)
	}
	return d.print(text)
}

// redraw replaces the frame last drawn on the terminal with frame: up to its first
// line, clear to the end of the screen, draw. One write, so that the terminal does
// not show a half-drawn frame.
func (d *display) redraw(frame string) error {
	var b strings.Builder
	if d.drawn > 0 {
		fmt.Fprintf(&b, "\r\x1b[%dA", d.drawn)
	}
	b.WriteString("\x1b[J" + frame)
	d.drawn = strings.Count(frame, "\n")
	_, err := io.WriteString(d.o.f.Out, b.String())
	return err
}

// print writes the view on a non-terminal when it differs from the last one, after a
// line with the time since the watch began.
func (d *display) print(text string) error {
	if text == d.last {
		return nil
	}
	out := text
	if d.last != "" {
		out = fmt.Sprintf("\n[%s]\n%s", d.elapsed(), text)
	}
	d.last = text
	_, err := io.WriteString(d.o.f.Out, out)
	return err
}

// showProgress reports the upgrade in one line on standard error: on a terminal in
// place, elsewhere when it changed and every plainEvery anyway.
func (d *display) showProgress(a assessment) {
	r := a.Report
	line := fmt.Sprintf("upgraded %d/%d nodes", r.Upgraded, r.Total)
	if len(r.Next) > 0 {
		line += "; next: " + r.Next[0]
		if len(r.Next) > 1 {
			line += fmt.Sprintf(" (and %d more)", len(r.Next)-1)
		}
	}
	if !d.progress.Terminal() {
		if line == d.lastLine && time.Since(d.lastPrinted) < plainEvery {
			return
		}
		d.lastLine, d.lastPrinted = line, time.Now()
	}
	d.progress.Show(fmt.Sprintf("[%s] %s", d.elapsed(), line))
}

func (d *display) elapsed() time.Duration { return time.Since(d.start).Round(time.Second) }
