package images

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/testenv"
)

// containerd is a containerd of the test's own: its root, state and socket in a
// temporary directory, the CRI plugin off (ctr needs none of it). Its containers keep
// their runc state and IO fifos there too and get cgroups under a parent of the test's
// own, so it shares nothing with another containerd on the machine but
// /run/containerd/s, where every containerd 1.6 puts its shims' sockets (named by a
// hash of the socket and the container).
type containerd struct {
	dir, sock string
	cgroup    string // the parent of the containers' cgroups, in every hierarchy
	proc      *testenv.Process
}

// shimSocketDir is where containerd 1.6 puts the shims' sockets, whatever its config.
const shimSocketDir = "/run/containerd/s"

// ctrNamespace is kubelet's (CRI's) containerd namespace, the one images must be in.
const ctrNamespace = "k8s.io"

func startContainerd(t *testing.T) *containerd {
	t.Helper()
	testenv.NeedRoot(t, "containerd mounts snapshots and runs containers")
	testenv.NeedBinaries(t, "containerd", "ctr", "runc")
	dir := t.TempDir()
	c := &containerd{dir: dir, sock: filepath.Join(dir, "c.sock"), cgroup: fmt.Sprintf("/ovnk-images-test-%d", os.Getpid())}
	if len(c.sock) >= 108 {
		t.Fatalf("containerd socket path %s is %d bytes, a unix socket's limit is 107", c.sock, len(c.sock))
	}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = %q

[ttrpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.sock, c.sock+".ttrpc")
	configPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-in first-out: the containers go first (a shim outlives
	// containerd), then containerd itself, then whatever is still mounted under dir.
	t.Cleanup(func() { unmountUnder(t, dir) })
	t.Cleanup(func() { removeCgroups(t, c.cgroup) })
	if _, err := os.Stat(filepath.Dir(shimSocketDir)); os.IsNotExist(err) {
		// Only what this test made, and only while empty: another containerd may
		// have come meanwhile.
		t.Cleanup(func() {
			_ = os.Remove(shimSocketDir)
			_ = os.Remove(filepath.Dir(shimSocketDir))
		})
	}
	c.proc = testenv.StartProcess(t, dir, "containerd", nil, "containerd", "--config", configPath)
	t.Cleanup(func() { c.removeContainers(t) })
	ctx := context.Background()
	err := testenv.Eventually(ctx, 30*time.Second, "containerd answering on "+c.sock, func(ctx context.Context) error {
		if done, err := c.proc.Exited(); done {
			return fmt.Errorf("containerd exited: %v\n%s", err, c.proc.LogTail(20))
		}
		_, err := c.ctr(ctx, "version")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ctr runs ctr against this containerd in kubelet's namespace.
func (c *containerd) ctr(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{"-a", c.sock, "-n", ctrNamespace}, args...)
	cmd := exec.CommandContext(ctx, "ctr", argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("ctr %s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// ctrArgv is the command line of a ctr against this containerd, for StartProcess.
func (c *containerd) ctrArgv(args ...string) []string {
	return append([]string{"ctr", "-a", c.sock, "-n", ctrNamespace}, args...)
}

// runArgs are the arguments of `ctr run` for the container id, up to the image: its
// runc state, IO fifos and cgroup where this containerd keeps its own, instead of
// /run/containerd/runc, /run/containerd/fifo and /k8s.io/<id>.
func (c *containerd) runArgs(id string, flags ...string) []string {
	return append([]string{"run", "--rm",
		"--runc-root", filepath.Join(c.dir, "runc"),
		"--fifo-dir", filepath.Join(c.dir, "fifo"),
		"--cgroup", c.cgroup + "/" + id,
	}, flags...)
}

// removeCgroups removes the parent cgroup of the containers in every hierarchy; runc
// removes each container's own. A cgroup still in use cannot be removed, which the
// test reports.
func removeCgroups(t *testing.T, parent string) {
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", parent))
	for _, d := range dirs {
		if err := os.Remove(d); err != nil {
			t.Errorf("remove cgroup %s: %v", d, err)
		}
	}
}

// removeContainers kills and deletes every task and container left, so no shim or
// container outlives the test.
func (c *containerd) removeContainers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if done, _ := c.proc.Exited(); done {
		return
	}
	tasks, err := c.ctr(ctx, "tasks", "ls", "-q")
	if err != nil {
		t.Errorf("list containerd tasks: %v", err)
	}
	for _, id := range strings.Fields(tasks) {
		if _, err := c.ctr(ctx, "tasks", "delete", "--force", id); err != nil {
			t.Errorf("remove task %s: %v", id, err)
		}
	}
	containers, err := c.ctr(ctx, "containers", "ls", "-q")
	if err != nil {
		t.Errorf("list containerd containers: %v", err)
	}
	for _, id := range strings.Fields(containers) {
		if _, err := c.ctr(ctx, "containers", "delete", id); err != nil {
			t.Errorf("remove container %s: %v", id, err)
		}
	}
}

// unmountUnder unmounts every mount point under dir, deepest first, so the temporary
// directory can go even when a container's root file system was left mounted.
func unmountUnder(t *testing.T, dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Errorf("read mounts: %v", err)
		return
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			points = append(points, fields[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", p, err)
		}
	}
	if len(points) > 0 {
		t.Errorf("containerd left %d mounts under %s: %v", len(points), dir, points)
	}
}
