package sandbox

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// kubelet sets kernel parameters for itself when it starts, and they are the machine's,
// not a namespace's. The sandbox puts them back when the last sandbox that runs kubelets
// goes: several sandboxes may run at once (a test's beside the demo's), and the second
// one to start would otherwise record the values the first one's kubelets set. The
// record and the sandboxes using it live in kernelStateDir, under a lock.

// kernelSettings are the parameters kubelet's container manager sets (its
// setupKernelTunables), as paths under /proc/sys.
var kernelSettings = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// kernelStateDir holds the values from before the first kubelet (record.json) and one
// file per sandbox that runs kubelets now (users/), on the host's /run so a reboot, which
// restores the kernel's defaults, forgets them too.
var kernelStateDir = "/run/ovnk-sandbox"

// procSys is where the kernel's parameters are; tests point both elsewhere.
var procSys = "/proc/sys"

// withKernelState runs fn holding the lock of kernelStateDir.
func withKernelState(fn func(users, record string) error) error {
	users := filepath.Join(kernelStateDir, "users")
	if err := os.MkdirAll(users, 0o700); err != nil {
		return fmt.Errorf("kernel settings: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(kernelStateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("kernel settings: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("kernel settings: lock %s: %w", lock.Name(), err)
	}
	return fn(users, filepath.Join(kernelStateDir, "record.json"))
}

// kernelUser is the file registering the sandbox in dir as running kubelets.
func kernelUser(users, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(users, fmt.Sprintf("%x", sum[:8]))
}

// liveKernelUsers lists the registered sandboxes whose directory still is a sandbox,
// and forgets the others (removed by hand, or lost by a crash of their down).
func liveKernelUsers(users string) ([]string, error) {
	entries, err := os.ReadDir(users)
	if err != nil {
		return nil, fmt.Errorf("kernel settings: %w", err)
	}
	var live []string
	for _, e := range entries {
		path := filepath.Join(users, e.Name())
		dir, err := os.ReadFile(path)
		if err == nil {
			if _, err := os.Stat(filepath.Join(string(dir), markerFile)); err == nil {
				live = append(live, string(dir))
				continue
			}
		}
		_ = os.Remove(path)
	}
	return live, nil
}

// saveKernelSettings registers the sandbox as running kubelets, recording the
// parameters' values first when there is no record: no other sandbox runs kubelets, and
// none went without putting them back (a record left by one removed by hand holds the
// values from before its kubelets, truer than today's).
func (s *Sandbox) saveKernelSettings() error {
	return withKernelState(func(users, record string) error {
		if _, err := liveKernelUsers(users); err != nil {
			return err
		}
		if _, err := os.Stat(record); errors.Is(err, fs.ErrNotExist) {
			values := map[string]string{}
			for _, k := range kernelSettings {
				data, err := os.ReadFile(filepath.Join(procSys, k))
				if err != nil {
					return fmt.Errorf("read sysctl %s: %w", k, err)
				}
				values[k] = strings.TrimSpace(string(data))
			}
			data, err := json.Marshal(values)
			if err != nil {
				return fmt.Errorf("encode sysctls: %w", err)
			}
			if err := os.WriteFile(record, data, 0o600); err != nil {
				return fmt.Errorf("record sysctls: %w", err)
			}
		}
		return os.WriteFile(kernelUser(users, s.Dir), []byte(s.Dir), 0o600)
	})
}

// restoreKernelSettings unregisters the sandbox in dir and, when it was the last to run
// kubelets, writes the recorded values back.
func restoreKernelSettings(dir string) error {
	return withKernelState(func(users, record string) error {
		if err := os.Remove(kernelUser(users, dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("kernel settings: %w", err)
		}
		live, err := liveKernelUsers(users)
		if err != nil || len(live) > 0 {
			return err
		}
		data, err := os.ReadFile(record)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read recorded sysctls: %w", err)
		}
		values := map[string]string{}
		if err := json.Unmarshal(data, &values); err != nil {
			return fmt.Errorf("recorded sysctls %s: %w", record, err)
		}
		var errs []error
		for _, k := range kernelSettings {
			if v, ok := values[k]; ok {
				if err := os.WriteFile(filepath.Join(procSys, k), []byte(v+"\n"), 0o644); err != nil {
					errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, v, err))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return os.Remove(record)
	})
}
