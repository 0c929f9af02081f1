// A Description writes the plugin's description of one object the way kubectl
// describe does: aligned "Key:  value" lines, then titled sections, each a table or
// lines of text indented under its title. The sections every description has —
// conditions, readiness on each node, recent events — are written here too.

package humanview

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/cluster"
)

// sectionIndent is the indentation of a section's lines under its title.
const sectionIndent = "  "

// minWrapWidth is the narrowest a value is wrapped to, however deep it is indented.
const minWrapWidth = 20

// Description collects a description. It keeps the first error, and Flush writes the
// description only when there was none, so that a failed one prints nothing.
type Description struct {
	// Palette styles keys, notes and the cells of the sections' tables.
	Palette Palette
	// Width is the terminal's: values wrap and tables fit within it; 0 (not a
	// terminal) wraps and fits nothing.
	Width int
	// Now is the clock ages are measured against.
	Now time.Time

	buf bytes.Buffer
	err error
}

// NewDescription is a description drawn in p, width columns wide, as of now.
func NewDescription(p Palette, width int, now time.Time) *Description {
	return &Description{Palette: p, Width: width, Now: now}
}

// Field is one "Key:  value" entry; a value of several lines is indented under the
// first.
type Field struct {
	Key    string
	Values []Value
}

// Value is a field's text and its style, applied to each line the text wraps onto.
type Value struct {
	Text  string
	Style lipgloss.Style
}

// Plain is texts as unstyled values.
func (w *Description) Plain(texts ...string) []Value {
	out := make([]Value, len(texts))
	for i, t := range texts {
		out[i] = Value{Text: t, Style: w.Palette.Plain}
	}
	return out
}

// Age is kubectl's AGE of t, measured at the Description's clock.
func (w *Description) Age(t metav1.Time) string { return Age(t, w.Now) }

func (w *Description) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(&w.buf, format, args...)
	}
}

// Fields writes aligned "Key:  value" lines, wrapping long values under themselves.
// A field without values writes nothing.
func (w *Description) Fields(fields []Field) {
	keyWidth := 0
	for _, f := range fields {
		keyWidth = max(keyWidth, len(f.Key)+1)
	}
	indent := strings.Repeat(" ", keyWidth+2)
	for _, f := range fields {
		prefix := w.Palette.Key.Render(f.Key+":") + strings.Repeat(" ", keyWidth-len(f.Key)+1)
		for _, v := range f.Values {
			for _, line := range w.wrap(v.Text, len(indent)) {
				w.printf("%s%s\n", prefix, v.Style.Render(line))
				prefix = indent
			}
		}
	}
}

// wrap folds text to the width left after indent columns; with no width, not at all.
func (w *Description) wrap(text string, indent int) []string {
	if w.Width <= 0 {
		return []string{text}
	}
	return Wrap("")(text, max(w.Width-indent, minWrapWidth))
}

// title writes a section's title and, when there is one, the note after it.
func (w *Description) title(title, note string) {
	if note != "" {
		note = "  " + note
	}
	w.printf("%s%s\n", w.Palette.Key.Render(title+":"), note)
}

// TextSection writes a title, an optional note after it, and lines of text under it,
// indented and wrapped; each line's continuation is indented two more.
func (w *Description) TextSection(title, note string, items []string) {
	w.title(title, note)
	for _, item := range items {
		for i, line := range w.wrap(item, len(sectionIndent)+2) {
			if i == 0 {
				w.printf("%s%s\n", sectionIndent, line)
			} else {
				w.printf("%s  %s\n", sectionIndent, line)
			}
		}
	}
}

// Section writes a title, a note after it ("<none>" when the table has no rows and
// there is no note), and the table.
func (w *Description) Section(title, note string, t *Table) {
	if note == "" && len(t.Rows) == 0 {
		note = w.Palette.Faint.Render("<none>")
	}
	w.title(title, note)
	if len(t.Rows) == 0 {
		return
	}
	var buf bytes.Buffer
	width := 0
	if w.Width > 0 {
		width = max(w.Width-len(sectionIndent), minWrapWidth)
	}
	if err := t.Render(&buf, width); err != nil && w.err == nil {
		w.err = err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			w.printf("%s%s", sectionIndent, line)
		}
	}
}

// Conditions writes the object's status conditions, True in the good colour and False
// in the bad one.
func (w *Description) Conditions(conds []metav1.Condition) {
	p := w.Palette
	t := p.Table(
		Column{Header: "TYPE"}, Column{Header: "STATUS"}, Column{Header: "REASON", MinWidth: 10},
		Column{Header: "AGE"}, Column{Header: "MESSAGE", MinWidth: 20},
	)
	for _, c := range conds {
		status := p.Warn
		switch c.Status {
		case metav1.ConditionTrue:
			status = p.Good
		case metav1.ConditionFalse:
			status = p.Bad
		}
		t.Add(Text(c.Type), Styled(string(c.Status), status), Text(c.Reason), Text(w.Age(c.LastTransitionTime)), Text(c.Message))
	}
	w.Section("Conditions", "", t)
}

// Nodes writes whether each node is ready, and why not, under a count of the ready
// ones. fromZones says the readiness was read from the zones themselves, not reported
// by agents, which the count says.
func (w *Description) Nodes(rs []cluster.NodeReadiness, fromZones bool) {
	p := w.Palette
	t := p.Table(Column{Header: "NODE", MinWidth: 10}, Column{Header: "READY"}, Column{Header: "REASON", MinWidth: 20})
	for _, r := range rs {
		if r.Ready {
			t.Add(Text(r.Node), Styled("yes", p.Good), Text(""))
		} else {
			t.Add(Text(r.Node), Styled("no", p.Bad), Text(r.Reason))
		}
	}
	ready := CountReady(rs)
	note := p.Ratio(ready, len(rs)).Render(fmt.Sprintf("%d/%d ready", ready, len(rs)))
	if fromZones {
		note += " (read from each node's zone: no agent reports on it)"
	}
	w.Section("Nodes", note, t)
}

// Flush writes the description to out, or returns the first error met writing it.
func (w *Description) Flush(out io.Writer) error {
	if w.err != nil {
		return w.err
	}
	_, err := io.Copy(out, &w.buf)
	return err
}
