package packets_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ovnk/ovnk/pkg/sandbox"
)

// rigPinger is a ping that runs until stopped: one echo request every interval, each
// reply a line on its standard output.
type rigPinger struct {
	from sandbox.Target
	to   netip.Addr
	cmd  *exec.Cmd
	// replies receives a value for each reply line, dropped when nobody listens.
	replies chan struct{}
	// done is closed when standard output is read to its end.
	done chan struct{}

	mu  sync.Mutex
	out bytes.Buffer
}

// rigPingInterval is the continuous ping's: 20 echo requests a second, so a gap of one
// tenth of a second in the dataplane costs two of them.
const rigPingInterval = 50 * time.Millisecond

// startPinger starts `ping -i 0.05` in a pod or on a node. -O prints a line for each
// request whose reply has not come by the time the next one goes, which dates any loss.
func (r *rig) startPinger(ctx context.Context, from sandbox.Target, to netip.Addr) *rigPinger {
	r.tb.Helper()
	cmd, err := r.s.Command(ctx, from, "ping", "-n", "-O", "-i", strconv.FormatFloat(rigPingInterval.Seconds(), 'f', 3, 64), to.String())
	if err != nil {
		r.fatalf("%v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.fatalf("ping from %s: %v", from, err)
	}
	p := &rigPinger{from: from, to: to, cmd: cmd, replies: make(chan struct{}, 1), done: make(chan struct{})}
	cmd.Stderr = &rigPingOutput{p: p}
	if err := cmd.Start(); err != nil {
		r.fatalf("ping from %s: %v", from, err)
	}
	go p.read(stdout)
	r.tb.Cleanup(func() {
		// A test that failed before stopping it: the process must not outlive it.
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

type rigPingOutput struct{ p *rigPinger }

func (w *rigPingOutput) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

func (p *rigPinger) read(stdout io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.out.WriteString(line + "\n")
		p.mu.Unlock()
		if strings.Contains(line, " bytes from ") {
			select {
			case p.replies <- struct{}{}:
			default:
			}
		}
	}
}

// rigPingSummary is the end of a ping's output.
type rigPingSummary struct {
	Transmitted, Received int
	// Answered are the icmp_seq numbers replies came for.
	Answered map[int]bool
	// Line is ping's own summary line: "N packets transmitted, M received, …".
	Line string
	// Unanswered are ping's "no answer yet for icmp_seq=N" lines.
	Unanswered []string
}

// Lost is how many echo requests got no reply, among those sent before the last one
// answered: a request still in flight when ping was interrupted (its round trip longer
// than the interval, on a busy machine) is not lost.
func (s rigPingSummary) Lost() int {
	if len(s.Answered) == 0 {
		return s.Transmitted
	}
	last := 0
	for seq := range s.Answered {
		last = max(last, seq)
	}
	return last - len(s.Answered)
}

var rigSeqRe = regexp.MustCompile(` bytes from .*icmp_seq=(\d+)`)

var rigSummaryRe = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)

// stop ends the ping between two echo requests and returns its summary. ping counts
// a request still in flight when interrupted as lost, so the interrupt goes right
// after a reply, while the next request is still almost a whole interval away.
func (p *rigPinger) stop(ctx context.Context) (rigPingSummary, error) {
	select {
	case <-p.replies: // an old one: wait for the next
	default:
	}
	select {
	case <-p.replies:
	case <-p.done:
	case <-time.After(5 * time.Second):
		// No reply for seconds: the summary tells the loss anyway.
	case <-ctx.Done():
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return rigPingSummary{}, fmt.Errorf("interrupt ping from %s to %s: %w", p.from, p.to, err)
	}
	<-p.done
	waitErr := p.cmd.Wait()
	p.mu.Lock()
	out := p.out.String()
	p.mu.Unlock()
	s := rigPingSummary{Answered: map[int]bool{}}
	for _, line := range strings.Split(out, "\n") {
		if m := rigSeqRe.FindStringSubmatch(line); m != nil {
			seq, _ := strconv.Atoi(m[1])
			s.Answered[seq] = true
		}
		if strings.HasPrefix(line, "no answer yet") {
			s.Unanswered = append(s.Unanswered, line)
		}
		if m := rigSummaryRe.FindStringSubmatch(line); m != nil {
			s.Line = line
			s.Transmitted, _ = strconv.Atoi(m[1])
			s.Received, _ = strconv.Atoi(m[2])
		}
	}
	if s.Line == "" {
		return s, fmt.Errorf("ping from %s to %s printed no summary (%v):\n%s", p.from, p.to, waitErr, rigLastLines(out, 10))
	}
	return s, nil
}

// rigLastLines returns the last n lines of s.
func rigLastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
