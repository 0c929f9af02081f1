package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
)

// The nodes' pods live in cgroup v1 hierarchies (this machine's; kubelet is told so by
// failCgroupV1: false), under a cgroup root per node that the sandbox creates before the
// kubelet starts and removes, with whatever still runs in it, at teardown.

// cgroupFS is where the cgroup v1 controllers are mounted.
const cgroupFS = "/sys/fs/cgroup"

// unifiedHierarchy is the cgroup v2 hierarchy a hybrid host mounts beside the v1
// controllers: kubelet's pods get cgroups there too (runc makes them), which teardown
// removes, but the cgroup root is not made there.
const unifiedHierarchy = "unified"

// cgroupControllers lists the hierarchies mounted under cgroupFS: the v1 controllers'
// and the unified one.
func cgroupControllers() ([]string, error) {
	entries, err := os.ReadDir(cgroupFS)
	if err != nil {
		return nil, fmt.Errorf("list cgroup controllers: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(cgroupFS, e.Name()))
		}
	}
	return out, nil
}

// createCgroup creates the cgroup path in every v1 controller.
func createCgroup(path string) error {
	controllers, err := cgroupControllers()
	if err != nil {
		return err
	}
	for _, c := range controllers {
		if filepath.Base(c) == unifiedHierarchy {
			continue
		}
		if err := os.MkdirAll(filepath.Join(c, path), 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", filepath.Join(c, path), err)
		}
	}
	return nil
}

// removeCgroup kills every process in the cgroup path and its descendants, in any
// hierarchy, waits until they are gone, and removes the cgroups, deepest first. A
// missing cgroup is no error. A cgroup whose last process was killed can still refuse
// removal (EBUSY) while the kernel releases the exiting task, so the removal is
// retried, with the killing, until it succeeds.
func removeCgroup(ctx context.Context, path string) error {
	controllers, err := cgroupControllers()
	if err != nil {
		return err
	}
	return poll.Until(ctx, stopTimeout, "cgroup "+path+" removed with its processes", func(context.Context) error {
		pids := cgroupPIDs(controllers, path)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(pids) > 0 {
			return fmt.Errorf("%d processes left", len(pids))
		}
		return removeCgroupDirs(controllers, path)
	})
}

// removeCgroupDirs removes the cgroup path and its descendants in every controller,
// children before their parents.
func removeCgroupDirs(controllers []string, path string) error {
	var errs []error
	for _, c := range controllers {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(c, path), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs) // children before their parents
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// cgroupPIDs lists the processes in path and below, in every controller.
func cgroupPIDs(controllers []string, path string) []int {
	seen := map[int]bool{}
	var out []int
	for _, c := range controllers {
		_ = filepath.WalkDir(filepath.Join(c, path), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	return out
}

// stopTimeout bounds the wait for killed processes to be gone.
const stopTimeout = 30 * time.Second
