package main_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain removes the binaries the tests built (testenv.Command) once they are done.
func TestMain(m *testing.M) { os.Exit(testenv.BuildsMain(m)) }

// startPause starts the built ovnk-pause, in a new PID namespace (as its PID 1) when
// newPID is set, and kills it at the end of the test if it is still there.
func startPause(t *testing.T, newPID bool) (*exec.Cmd, <-chan error) {
	t.Helper()
	cmd := exec.Command(testenv.Command(t, "ovnk-pause"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if newPID {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ovnk-pause: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if stderr.Len() > 0 {
			t.Logf("ovnk-pause said: %s", stderr.String())
		}
	})
	return cmd, exited
}

// waitExit returns the exit of the process, or fails the test after a deadline.
func waitExit(t *testing.T, exited <-chan error) error {
	t.Helper()
	select {
	case err := <-exited:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("ovnk-pause did not exit within 10s")
		return nil
	}
}

// orphanAndReap makes an orphan in the namespace whose PID 1 is ovnk-pause and waits
// until ovnk-pause has reaped it: a shell started there backgrounds a sleep and exits,
// so the kernel hands the sleep to ovnk-pause; once the sleep is killed it stays a
// zombie until its parent waits for it, and only ovnk-pause can. Having reaped also
// proves that ovnk-pause's signal handlers are in: the Go runtime catches every signal
// from its start, so /proc's SigCgt cannot tell.
func orphanAndReap(t *testing.T, pause int) {
	t.Helper()
	ctx := context.Background()
	if err := exec.Command("nsenter", "--target", strconv.Itoa(pause), "--pid", "--",
		"sh", "-c", "sleep 600 & exit 0").Run(); err != nil {
		t.Fatalf("orphan a sleep in ovnk-pause's namespace: %v", err)
	}
	children := fmt.Sprintf("/proc/%d/task/%d/children", pause, pause)
	var orphan int
	err := testenv.Eventually(ctx, 10*time.Second, "the orphan to become ovnk-pause's child", func(context.Context) error {
		b, err := os.ReadFile(children)
		if err != nil {
			return err
		}
		fields := strings.Fields(string(b))
		if len(fields) != 1 {
			return fmt.Errorf("children of ovnk-pause: %q", b)
		}
		orphan, err = strconv.Atoi(fields[0])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatalf("kill orphan %d: %v", orphan, err)
	}
	err = testenv.Eventually(ctx, 10*time.Second, fmt.Sprintf("orphan %d reaped", orphan), func(context.Context) error {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", orphan))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		state := "?"
		for _, line := range strings.Split(string(status), "\n") {
			if s, ok := strings.CutPrefix(line, "State:"); ok {
				state = strings.TrimSpace(s)
			}
		}
		return fmt.Errorf("orphan %d is still there: %s", orphan, state)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// needNamespaces ends the test unless it can make PID namespaces and orphans.
func needNamespaces(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "a new PID namespace, for ovnk-pause to be its PID 1")
	testenv.NeedBinaries(t, "nsenter", "sh", "sleep")
}

func TestReapsOrphans(t *testing.T) {
	needNamespaces(t)
	cmd, exited := startPause(t, true)
	for range 3 {
		orphanAndReap(t, cmd.Process.Pid)
	}
	if done := len(exited); done != 0 {
		t.Errorf("ovnk-pause exited while reaping: %v", <-exited)
	}
}

// TestExitsZeroOnTermAndInt stops ovnk-pause as PID 1, where a signal without a
// handler would be dropped.
func TestExitsZeroOnTermAndInt(t *testing.T) {
	needNamespaces(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, exited := startPause(t, true)
			orphanAndReap(t, cmd.Process.Pid)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := waitExit(t, exited); err != nil {
				t.Errorf("ovnk-pause after %v: %v, want exit 0", sig, err)
			}
		})
	}
}

func TestRefusesArguments(t *testing.T) {
	out, err := exec.Command(testenv.Command(t, "ovnk-pause"), "-v").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "takes no arguments") {
		t.Errorf("ovnk-pause -v: %v, %q; want exit 2 saying it takes no arguments", err, out)
	}
}
