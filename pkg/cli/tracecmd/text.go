package tracecmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/ovnk/ovnk/pkg/cli/humanview"
	"github.com/ovnk/ovnk/pkg/trace"
)

// styles colour the text form; with a renderer that has no colour they print plain.
type styles struct {
	plain, heading, row, good, bad lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	return styles{
		plain:   r.NewStyle(),
		heading: r.NewStyle().Bold(true),
		row:     r.NewStyle().Faint(true),
		good:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("34")),
		bad:     r.NewStyle().Bold(true).Foreground(lipgloss.Color("160")),
	}
}

// writeText prints the result as trace.WriteText words it, wrapped to width (a
// wrapped line continues two columns further in than its text began; 0, for a pipe,
// wraps nothing, so that grep sees each line whole) and styled by what each line is.
// WriteText's layout says what a line is: a direction's heading and its verdict start
// in the first column, a hop starts with its number, and the row that decided a hop is
// indented below it, as is the final packet below the verdict.
func writeText(w io.Writer, res *trace.Result, st styles, width int) error {
	var plain strings.Builder
	if err := trace.WriteText(&plain, res); err != nil {
		return err
	}
	verdicts := []trace.VerdictKind{res.Forward.Verdict.Kind}
	if res.Reply != nil {
		verdicts = append(verdicts, res.Reply.Verdict.Kind)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(plain.String(), "\n"), "\n") {
		body := strings.TrimLeft(line, " ")
		// lead is what stays in front of the wrapped text: the indentation, and a hop's
		// number, so that a hop's text continues under itself, past its number.
		lead := line[:len(line)-len(body)]
		var l humanview.Line
		switch {
		case body == "":
			out.WriteString("\n")
			continue
		case lead == "" && (strings.HasPrefix(body, "forward: ") || strings.HasPrefix(body, "reply: ")):
			l = labelled(body, st.heading, st.plain)
		case isHop(body):
			number, rest, _ := strings.Cut(body, " ")
			lead += number + " "
			l = humanview.Line{{Style: st.plain, Text: rest}}
		case lead == "":
			// A verdict: "DELIVERED: …", coloured by how the path ended.
			style := st.bad
			if len(verdicts) > 0 {
				if reached(verdicts[0]) {
					style = st.good
				}
				verdicts = verdicts[1:]
			}
			l = labelled(body, style, st.plain)
		case strings.HasPrefix(body, "final packet: "):
			l = humanview.Line{{Style: st.plain, Text: body}}
		default: // the row that decided the hop above
			l = humanview.Line{{Style: st.row, Text: body}}
		}
		room := 0 // not a terminal: the line stays whole
		if width > 0 {
			room = max(width-len(lead), minWrap)
		}
		for i, wrapped := range strings.Split(l.Render(room), "\n") {
			if i == 0 {
				out.WriteString(lead)
			} else {
				out.WriteString(strings.Repeat(" ", len(lead)))
			}
			out.WriteString(wrapped)
			out.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, out.String())
	if err != nil {
		return fmt.Errorf("write the trace: %w", err)
	}
	return nil
}

// minWrap is the narrowest a line's text is wrapped to, however little room its
// indentation leaves on a narrow terminal.
const minWrap = 20

// labelled styles the words up to the first ": " one way and the rest another.
func labelled(s string, label, rest lipgloss.Style) humanview.Line {
	head, tail, ok := strings.Cut(s, ": ")
	if !ok {
		return humanview.Line{{Style: label, Text: s}}
	}
	return humanview.Line{{Style: label, Text: head + ":"}, {Style: rest, Text: " " + tail}}
}

// reached reports whether a verdict is the packet getting somewhere: delivered, answered
// by a router, or out of the cluster.
func reached(k trace.VerdictKind) bool {
	return k == trace.Delivered || k == trace.ToRouter || k == trace.LeftCluster
}

// isHop reports whether a line is a hop: "12. …".
func isHop(s string) bool {
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	return digits > 0 && strings.HasPrefix(s[digits:], ". ")
}
