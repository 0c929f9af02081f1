package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// Process is a server started by the test environment. Its output goes to a log file
// beside its other files, so a failing test can show what the server said.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// startProcess starts a long-running server. The child gets its own process group and
// is killed when the test binary dies (Pdeathsig), so a panic never leaves servers behind.
func startProcess(dir, name string, env []string, argv ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log for %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// Exited reports whether the process has stopped, with its exit error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.exited:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Stop asks the process group to terminate and kills it if it has not gone within 5s.
func (p *Process) Stop() {
	if done, _ := p.Exited(); done {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// LogTail returns the last lines the process wrote, for failure messages.
func (p *Process) LogTail(lines int) string { return procutil.LogTail(p.LogPath, lines) }

// run executes a short command and returns its standard output; the error carries the
// command line and whatever it printed on standard error.
func run(ctx context.Context, env []string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// waitRunning is Eventually for a server that is starting: it stops waiting as soon as
// the process exits, since then no poll can succeed, and says so in the error.
func waitRunning(ctx context.Context, p *Process, timeout time.Duration, what string, check func(context.Context) error) error {
	return poll.Until(ctx, timeout, what, func(ctx context.Context) error {
		if done, err := p.Exited(); done {
			return poll.Stop(fmt.Errorf("%s exited: %v", p.Name, err))
		}
		return check(ctx)
	})
}

// StartProcess starts a long-running program for a test, such as an agent under test,
// with its output in a log file in dir. It is stopped when the test ends; call Stop to
// stop it earlier, or Kill to end it abruptly as a crash would.
func StartProcess(t testing.TB, dir, name string, env []string, argv ...string) *Process {
	t.Helper()
	p, err := startProcess(dir, name, env, argv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", name, p.LogTail(40))
		}
	})
	return p
}

// Usage is what the kernel has counted for a process.
type Usage struct {
	// CPU is the time it has run, in user and kernel mode.
	CPU time.Duration
	// PeakRSS is its peak resident set size (VmHWM), in bytes.
	PeakRSS int64
}

// userHZ is the unit of /proc's CPU times, 1/100 s on every Linux architecture.
const userHZ = 100

// Usage reads, from /proc, what the kernel has counted for the running process: the
// program itself, as the launchers of the OVN programs exec it and nothing here runs a
// shell in between. Benchmarks read it for the figures that are the server's or the
// agent's own, not the benchmark process's.
func (p *Process) Usage() (Usage, error) {
	dir := fmt.Sprintf("/proc/%d/", p.cmd.Process.Pid)
	var u Usage
	stat, err := os.ReadFile(dir + "stat")
	if err != nil {
		return u, err
	}
	// The command name, in parentheses, may hold spaces; utime and stime are the 14th
	// and 15th fields, the 12th and 13th after it.
	end := strings.LastIndexByte(string(stat), ')')
	if end < 0 {
		return u, fmt.Errorf("%sstat: unexpected %q", dir, stat)
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 13 {
		return u, fmt.Errorf("%sstat: unexpected %q", dir, stat)
	}
	for _, field := range f[11:13] {
		ticks, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return u, fmt.Errorf("%sstat: CPU time %q: %w", dir, field, err)
		}
		u.CPU += time.Duration(ticks) * time.Second / userHZ
	}
	status, err := os.ReadFile(dir + "status")
	if err != nil {
		return u, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if value, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(value) // "123456 kB"
			if len(f) != 2 || f[1] != "kB" {
				return u, fmt.Errorf("%sstatus: unexpected %q", dir, line)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return u, fmt.Errorf("%sstatus: VmHWM %q: %w", dir, f[0], err)
			}
			u.PeakRSS = kb << 10
			return u, nil
		}
	}
	return u, fmt.Errorf("%sstatus has no VmHWM", dir)
}

// Kill ends the process group at once with SIGKILL, as a crash or an OOM kill would, and
// waits for it to exit.
func (p *Process) Kill() {
	if done, _ := p.Exited(); done {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}
