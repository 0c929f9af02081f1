package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
)

// daemon is one long-running process of the sandbox. Its pid file and log sit side by
// side in the sandbox directory (<rel>.pid, <rel>.log), so any later invocation can
// find, check and stop it.
type daemon struct {
	name    string // shown to the user: "etcd", "ovnk-node-1 agent"
	pidFile string
	logFile string
	pid     int
	// exited is closed when the process ends; only the invocation that started it can
	// know, and it uses that to stop waiting for a server that died.
	exited  chan struct{}
	waitErr error
}

// daemonAt names the files of a daemon whose paths, relative to the sandbox directory,
// start with rel.
func daemonAt(dir, name, rel string) *daemon {
	base := filepath.Join(dir, rel)
	return &daemon{name: name, pidFile: base + ".pid", logFile: base + ".log"}
}

// base is the daemon's files' path without the extension: <dir>/<rel>.
func (d *daemon) base() string { return strings.TrimSuffix(d.pidFile, ".pid") }

// startDetached starts the daemon in a session of its own, so it outlives the command
// (and the make) that started it and is not hit by the terminal's Ctrl-C; its output goes
// to its log and its standard input is /dev/null. The environment is ours without
// OVNK_* variables: they configure the plugin, and the agent would read them as its own
// settings.
func (d *daemon) startDetached(workDir string, env []string, argv ...string) error {
	logFile, err := os.OpenFile(d.logFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create log of %s: %w", d.name, err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = workDir
	cmd.Env = append(withoutOVNKVars(os.Environ()), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", d.name, err)
	}
	d.pid = cmd.Process.Pid
	d.exited = make(chan struct{})
	go func() {
		// Reaps the child if it dies while we run; once we exit, init adopts it.
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	if err := os.WriteFile(d.pidFile, []byte(strconv.Itoa(d.pid)+"\n"), 0o644); err != nil {
		signalGroup(d.pid, syscall.SIGKILL)
		return fmt.Errorf("write pid file of %s: %w", d.name, err)
	}
	return nil
}

func withoutOVNKVars(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OVNK_") {
			out = append(out, kv)
		}
	}
	return out
}

// exitedEarly returns why the daemon is gone if this invocation started it and it
// has exited, or nil.
func (d *daemon) exitedEarly() error {
	if d.exited == nil {
		return nil
	}
	select {
	case <-d.exited:
		return fmt.Errorf("%s exited: %v", d.name, d.waitErr)
	default:
		return nil
	}
}

// readPID reads the daemon's pid file; 0 when there is none.
func (d *daemon) readPID() (int, error) {
	data, err := os.ReadFile(d.pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read pid file of %s: %w", d.name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s holds %q, not a pid: remove it", d.pidFile, strings.TrimSpace(string(data)))
	}
	return pid, nil
}

// running reports whether pid is a live process of the sandbox in dir. Every daemon's
// command line names dir or a file in it, which tells ours from an unrelated process
// that reused the pid (or a daemon of a sandbox in dir2); a zombie has an empty command
// line and counts as gone.
func running(pid int, dir string) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if arg == dir || strings.Contains(arg, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Grace periods of stopDaemons: SIGTERM first, SIGKILL when that is not enough.
const (
	termGrace = 15 * time.Second
	killGrace = 5 * time.Second
)

// stopDaemons stops the daemons whose pid files match patterns (globs relative to dir),
// stage by stage: all of a stage are signalled together and must be gone before the
// next stage starts. A daemon is its process group's leader, so the whole group is
// signalled. Pid files are removed once their process is gone.
func stopDaemons(ctx context.Context, dir string, progress io.Writer, stages ...[]string) error {
	var errs []error // a stage that fails does not keep the later ones running
	for _, patterns := range stages {
		var pidFiles []string
		for _, p := range patterns {
			matches, err := filepath.Glob(filepath.Join(dir, p))
			if err != nil {
				errs = append(errs, fmt.Errorf("find pid files %s: %w", p, err))
				continue
			}
			pidFiles = append(pidFiles, matches...)
		}
		errs = append(errs, stopStage(ctx, dir, progress, pidFiles))
	}
	return errors.Join(errs...)
}

func stopStage(ctx context.Context, dir string, progress io.Writer, pidFiles []string) error {
	alive := map[string]int{} // pid file -> pid
	var unreadable []error
	for _, f := range pidFiles {
		d := &daemon{name: strings.TrimSuffix(relTo(dir, f), ".pid"), pidFile: f}
		pid, err := d.readPID()
		if err != nil {
			unreadable = append(unreadable, err) // the stage's other daemons still stop
			continue
		}
		if running(pid, dir) {
			fmt.Fprintf(progress, "stopping %s (pid %d)\n", d.name, pid)
			signalGroup(pid, syscall.SIGTERM)
			alive[f] = pid
		}
	}
	gone := func(context.Context) error {
		var left []string
		for f, pid := range alive {
			if running(pid, dir) {
				left = append(left, fmt.Sprintf("%s (pid %d)", relTo(dir, f), pid))
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still running: %s", strings.Join(left, ", "))
		}
		return nil
	}
	if err := poll.Until(ctx, termGrace, "processes to exit after SIGTERM", gone); err != nil {
		for _, pid := range alive {
			signalGroup(pid, syscall.SIGKILL)
		}
		if err := poll.Until(ctx, killGrace, "processes to exit after SIGKILL", gone); err != nil {
			return errors.Join(append(unreadable, err)...)
		}
	}
	if len(unreadable) > 0 {
		return errors.Join(unreadable...) // their pid files stay, for a look
	}
	for _, f := range pidFiles {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove pid file: %w", err)
		}
	}
	return nil
}

// signalGroup signals the process group the daemon leads, and the daemon alone if it
// leads none (started by something other than startDetached).
func signalGroup(pid int, sig syscall.Signal) {
	if err := syscall.Kill(-pid, sig); err != nil {
		_ = syscall.Kill(pid, sig)
	}
}

func relTo(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil {
		return rel
	}
	return path
}

// killNamingDir kills every process of the sandbox in dir (running says which) whose
// program's name contains program, and waits until they are gone.
func killNamingDir(ctx context.Context, dir, program string) error {
	find := func() []int {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return nil
		}
		var pids []int
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || !running(pid, dir) {
				continue
			}
			if comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); err == nil && strings.Contains(string(comm), program) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	return poll.Until(ctx, killGrace, program+" processes of "+dir+" to end", func(context.Context) error {
		pids := find()
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(pids) > 0 {
			return fmt.Errorf("%d left", len(pids))
		}
		return nil
	})
}
