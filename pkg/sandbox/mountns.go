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

	"golang.org/x/sys/unix"

	"github.com/ovnk/ovnk/pkg/poll"
)

// Each node's kubelet, containerd and pods run in a mount namespace of the node's own,
// besides its network namespace: what a node of a real cluster keeps at fixed paths
// (kubelet's /var/lib/kubelet and /var/log/pods, the CNI directories, containerd's and
// the pods' network namespaces under /run, and the OVS and OVN sockets the agent's
// DaemonSet mounts from /var/run/openvswitch and /var/run/ovn) is the node's there, so
// three nodes share one machine without seeing each other's files, and the host keeps
// its own. The namespaces persist as bind mounts of nsfs files in <dir>/mnt (a private
// mount, which a persistent mount namespace needs).

// mountNSDir holds the nodes' mount namespace files, under the sandbox directory.
const mountNSDir = "mnt"

// mountNS is the file holding node n's mount namespace, for nsenter --mount.
func (s *Sandbox) mountNS(n Node) string { return filepath.Join(s.Dir, mountNSDir, n.Dir) }

// nodeRoot is node n's directory of the files that, inside its mount namespace, are at
// the paths of a real node.
func (s *Sandbox) nodeRoot(n Node) string { return filepath.Join(s.nodeDir(n), "root") }

// bindMount puts source at target inside a node's mount namespace.
type bindMount struct{ target, source string }

// nodeMounts are the paths node n's mount namespace has of its own. /run is a fresh
// tmpfs (containerd's state, the pods' network namespaces); the node's OVS and OVN
// directory appears where the agent's DaemonSet mounts it from.
func (s *Sandbox) nodeMounts(n Node) []bindMount {
	root := s.nodeRoot(n)
	return []bindMount{
		{target: "/run/openvswitch", source: s.nodeDir(n)},
		{target: "/run/ovn", source: s.nodeDir(n)},
		{target: "/var/lib/kubelet", source: filepath.Join(root, "kubelet")},
		{target: "/var/log", source: filepath.Join(root, "log")},
		{target: "/var/lib/cni", source: filepath.Join(root, "cni-cache")},
		{target: "/opt/cni/bin", source: filepath.Join(root, "cni-bin")},
		{target: "/etc/cni/net.d", source: filepath.Join(root, "cni-conf")},
		{target: "/usr/libexec/kubernetes", source: filepath.Join(root, "libexec-kubernetes")},
	}
}

// hostMountPoints are the directories of nodeMounts outside /run that the host must have
// for a bind mount to land on: created empty when missing, and left in place (another
// sandbox may be using them).
func hostMountPoints(mounts []bindMount) []string {
	var out []string
	for _, m := range mounts {
		if !strings.HasPrefix(m.target, "/run/") {
			out = append(out, m.target)
		}
	}
	return out
}

// createMountNSes creates every node's mount namespace.
func (s *Sandbox) createMountNSes(ctx context.Context) error {
	if err := ensurePrivateMount(filepath.Join(s.Dir, mountNSDir)); err != nil {
		return err
	}
	return s.inParallel(func(n *Node) error { return s.createMountNS(ctx, *n) })
}

// createMountNS creates node n's mount namespace and its mounts.
// The directory of the files must be a private mount first (createMountNSes).
func (s *Sandbox) createMountNS(ctx context.Context, n Node) error {
	file := s.mountNS(n)
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		return fmt.Errorf("create mount namespace file of %s: %w", n.Name, err)
	}
	if _, err := run(ctx, nil, "unshare", "--mount="+file, "--propagation=private", "true"); err != nil {
		return fmt.Errorf("create the mount namespace of %s: %w", n.Name, err)
	}
	mounts := s.nodeMounts(n)
	for _, p := range hostMountPoints(mounts) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("create mount point %s: %w", p, err)
		}
	}
	// One shell in the namespace does every mount, in order. First it lets go of the
	// network namespaces the copy of the host's mounts holds (every ip-netns name under
	// /run/netns, other sandboxes' and tests' too), which would otherwise live as long
	// as this node; then the tmpfs on /run, the directories under it, and the binds.
	script := []string{"set -e",
		`findmnt -rn -t nsfs -o TARGET | while read -r m; do umount -l "$m"; done`,
		"mount -t tmpfs -o mode=0755 tmpfs /run"}
	for _, m := range mounts {
		if err := os.MkdirAll(m.source, 0o755); err != nil {
			return fmt.Errorf("create %s of %s: %w", m.source, n.Name, err)
		}
		script = append(script, "mkdir -p "+shellQuote(m.target), "mount --bind "+shellQuote(m.source)+" "+shellQuote(m.target))
	}
	if _, err := run(ctx, nil, "nsenter", "--mount="+file, "sh", "-c", strings.Join(script, "\n")); err != nil {
		return fmt.Errorf("mount the directories of %s: %w", n.Name, err)
	}
	return nil
}

// ensurePrivateMount makes dir a mount point of its own with private propagation, as a
// persistent mount namespace's file must be on.
func ensurePrivateMount(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	// A start that died between the two steps left a bind that may not be private yet:
	// the second step is always made.
	if !isMountPoint(dir) {
		if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s onto itself: %w", dir, err)
		}
	}
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make %s private: %w", dir, err)
	}
	return nil
}

// isMountPoint reports whether path is listed as a mount point in /proc/self/mountinfo.
func isMountPoint(path string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && unescapeMountPath(f[4]) == path {
			return true
		}
	}
	return false
}

// unescapeMountPath undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescapeMountPath(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// mountNSFiles lists the files of the nodes' mount namespaces of the sandbox in dir.
func mountNSFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, mountNSDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list mount namespaces: %w", err)
	}
	files := make([]string, len(entries))
	for i, e := range entries {
		files[i] = filepath.Join(dir, mountNSDir, e.Name())
	}
	return files, nil
}

// killInMountNSes kills every process left in a node's mount namespace (one of
// containerd's CNI calls waiting for an agent, say): it would keep the namespace, and
// with it every mount made there, after the file is gone.
func killInMountNSes(ctx context.Context, dir string) error {
	files, err := mountNSFiles(dir)
	if err != nil {
		return err
	}
	var links []string
	for _, file := range files {
		var st unix.Stat_t
		if err := unix.Stat(file, &st); err == nil {
			links = append(links, fmt.Sprintf("mnt:[%d]", st.Ino))
		}
	}
	if len(links) == 0 {
		return nil
	}
	return poll.Until(ctx, killGrace, "the processes left in the nodes' mount namespaces to end", func(context.Context) error {
		procs, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		left := 0
		for _, p := range procs {
			pid, err := strconv.Atoi(p.Name())
			if err != nil {
				continue
			}
			if ns, err := os.Readlink(filepath.Join("/proc", p.Name(), "ns", "mnt")); err == nil && slices.Contains(links, ns) {
				_ = unix.Kill(pid, unix.SIGKILL)
				left++
			}
		}
		if left > 0 {
			return fmt.Errorf("%d left", left)
		}
		return nil
	})
}

// releaseMountNSes unmounts the nodes' mount namespace files and their directory: a
// namespace goes away once no process runs in it and no file holds it, and every mount
// made in it with it.
func releaseMountNSes(dir string) error {
	nsDir := filepath.Join(dir, mountNSDir)
	files, err := mountNSFiles(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, file := range files {
		if isMountPoint(file) {
			if err := unix.Unmount(file, unix.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmount mount namespace %s: %w", file, err))
			}
		}
	}
	// Mounted once by ensurePrivateMount; a loop all the same, so a mount stacked twice
	// (by a crash between the check and the mount, say) is not left behind.
	for isMountPoint(nsDir) {
		if err := unix.Unmount(nsDir, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount %s: %w", nsDir, err))
			break
		}
	}
	return errors.Join(errs...)
}
