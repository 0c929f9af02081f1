package humanview

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Segment is a run of text in one style. The views build their lines from segments so
// that wrapping a line to the terminal never splits a styled run across lines, where
// the colour would bleed into what is drawn around it (a tree's branches).
type Segment struct {
	Style lipgloss.Style
	Text  string
}

// Line is text to lay out in the terminal's width: a tree item, a title.
type Line []Segment

// nbsp glues words that must stay on one line, such as a label and its value; it
// prints as a space.
const nbsp = "\u00a0"

// Glue makes the spaces of s unbreakable.
func Glue(s string) string { return strings.ReplaceAll(s, " ", nbsp) }

// continuationIndent starts the second and later lines of a wrapped line, so they read
// as the same item.
const continuationIndent = "  "

// piece is text from one segment of a line; a word is a run of pieces between spaces
// (one word may span segments, as in "(" "remote" ")").
type piece struct {
	seg  int
	text string
}

type word []piece

// Render lays the line out in lines of at most width columns, breaking at spaces, and
// inside a word longer than a line after its last "_", "-" or "." that fits. A width of
// 0 (output that is not a terminal) keeps the line whole.
func (l Line) Render(width int) string {
	if width <= 0 {
		width = math.MaxInt
	}
	var lines [][]piece
	var cur []piece
	used := 0
	newLine := func() {
		lines = append(lines, cur)
		cur = []piece{{seg: -1, text: continuationIndent}}
		used = len(continuationIndent)
	}
	for i, w := range l.words() {
		ww := w.width()
		if i > 0 {
			if used+1+ww <= width {
				// A space inside a segment keeps its style; between segments it has none.
				space := piece{seg: -1, text: " "}
				if last := cur[len(cur)-1]; last.seg == w[0].seg {
					space.seg = last.seg
				}
				cur = append(cur, space)
				used++
			} else {
				newLine()
			}
		}
		for used+ww > width && width-used > 0 {
			head, tail := w.split(width - used)
			cur = append(cur, head...)
			newLine()
			w, ww = tail, tail.width()
		}
		cur = append(cur, w...)
		used += ww
	}
	lines = append(lines, cur)
	out := make([]string, len(lines))
	for i, pieces := range lines {
		out[i] = l.styled(pieces)
	}
	return strings.Join(out, "\n")
}

// styled renders a laid-out line, each run of pieces of one segment in that segment's
// style.
func (l Line) styled(pieces []piece) string {
	var b strings.Builder
	for i := 0; i < len(pieces); {
		j := i
		var run strings.Builder
		for ; j < len(pieces) && pieces[j].seg == pieces[i].seg; j++ {
			run.WriteString(strings.ReplaceAll(pieces[j].text, nbsp, " "))
		}
		if seg := pieces[i].seg; seg >= 0 {
			b.WriteString(l[seg].Style.Render(run.String()))
		} else {
			b.WriteString(run.String())
		}
		i = j
	}
	return b.String()
}

// words splits the line at spaces.
func (l Line) words() []word {
	var words []word
	var cur word
	for i, seg := range l {
		for j, p := range strings.Split(seg.Text, " ") {
			if j > 0 && len(cur) > 0 {
				words = append(words, cur)
				cur = nil
			}
			if p != "" {
				cur = append(cur, piece{seg: i, text: p})
			}
		}
	}
	if len(cur) > 0 {
		words = append(words, cur)
	}
	return words
}

func (w word) plain() string {
	var b strings.Builder
	for _, p := range w {
		b.WriteString(p.text)
	}
	return b.String()
}

func (w word) width() int { return ansi.StringWidth(w.plain()) }

// split cuts a word so its head is at most n columns: after the last "_", "-" or "."
// within them when that keeps at least a third of the line, else at n.
func (w word) split(n int) (head, tail word) {
	at := n
	prefix := string([]rune(w.plain())[:n])
	if i := strings.LastIndexAny(prefix, "_-."); i >= 0 {
		if k := utf8.RuneCountInString(prefix[:i+1]); k >= n/3 {
			at = k
		}
	}
	pos := 0
	for _, p := range w {
		r := []rune(p.text)
		switch {
		case pos+len(r) <= at:
			head = append(head, p)
		case pos >= at:
			tail = append(tail, p)
		default:
			head = append(head, piece{p.seg, string(r[:at-pos])})
			tail = append(tail, piece{p.seg, string(r[at-pos:])})
		}
		pos += len(r)
	}
	return head, tail
}
