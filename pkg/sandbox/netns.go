package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	vnetns "github.com/vishvananda/netns"
)

// netnsDir is where ip-netns(8) keeps the named network namespaces, as bind mounts.
const netnsDir = "/run/netns"

// netnsPath is the file naming namespace name, for setns(2) and nsenter --net; a name
// that is a path already (a pod's, /proc/<pid>/ns/net) is that file.
func netnsPath(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(netnsDir, name)
}

// netnsPrefix starts the name of every network namespace of the sandbox in dir:
// "ovnk-" and six hex digits of a hash of the directory, so two sandboxes never share a
// namespace and the names stay short enough to type.
func netnsPrefix(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return fmt.Sprintf("ovnk-%x-", sum[:3])
}

// netnsExists reports whether the named namespace is there.
func netnsExists(name string) bool {
	if name == "" || !filepath.IsAbs(name) && strings.ContainsRune(name, '/') {
		return false
	}
	_, err := os.Stat(netnsPath(name))
	return err == nil
}

// netnsesWithPrefix lists the named namespaces whose names start with prefix.
func netnsesWithPrefix(prefix string) ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list network namespaces in %s: %w", netnsDir, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// addNetns creates a named namespace with its loopback up: a fresh namespace has lo
// down, and then not even 127.0.0.1 answers in it.
func addNetns(ctx context.Context, name string) error {
	if _, err := run(ctx, nil, "ip", "netns", "add", name); err != nil {
		return err
	}
	_, err := run(ctx, nil, "ip", "-n", name, "link", "set", "lo", "up")
	return err
}

// deleteNetns removes a named namespace; one that is not there is no error. Its
// interfaces go with it, and so do the peers of its veths in other namespaces.
func deleteNetns(ctx context.Context, name string) error {
	if !netnsExists(name) {
		return nil
	}
	_, err := run(ctx, nil, "ip", "netns", "delete", name)
	return err
}

// inNetns runs fn on an OS thread switched into the named namespace (the caller's own
// when name is empty). Sockets fn creates belong to that namespace for good, whichever
// thread uses them later. fn runs on a goroutine of its own whose thread is locked: if
// the thread cannot be switched back, it ends with that goroutine and never runs
// anything else in the wrong namespace.
func inNetns(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		switched := false // the thread is in the other namespace
		defer func() {
			if !switched {
				runtime.UnlockOSThread()
			}
		}()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- fmt.Errorf("open this thread's network namespace: %w", err)
			return
		}
		defer orig.Close()
		target, err := os.Open(netnsPath(name))
		if err != nil {
			errc <- fmt.Errorf("network namespace %s: %w", name, err)
			return
		}
		defer target.Close()
		if err := setns(target); err != nil {
			errc <- fmt.Errorf("enter network namespace %s: %w", name, err)
			return
		}
		switched = true
		fnErr := fn()
		if err := setns(orig); err != nil {
			errc <- errors.Join(fnErr, fmt.Errorf("leave network namespace %s: %w", name, err))
			return
		}
		switched = false
		errc <- fnErr
	}()
	return <-errc
}

// setns moves the calling thread into the network namespace f names.
func setns(f *os.File) error { return vnetns.Set(vnetns.NsHandle(f.Fd())) }

// listenIn listens on a TCP address inside the named namespace ("" for our own).
func listenIn(netns, addr string) (net.Listener, error) {
	var l net.Listener
	err := inNetns(netns, func() error {
		var err error
		l, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		if l != nil { // made, but the thread could not leave the namespace
			l.Close()
		}
		return nil, fmt.Errorf("listen on %s in %s: %w", addr, netnsLabel(netns), err)
	}
	return l, nil
}

// dialIn connects to a TCP address from inside the named namespace ("" for our own).
// The socket is made in the namespace; the connection itself completes on the
// locked thread, which the runtime parks meanwhile.
func dialIn(ctx context.Context, netns, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(netns, func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return err
	})
	if err != nil {
		if c != nil { // made, but the thread could not leave the namespace
			c.Close()
		}
		return nil, fmt.Errorf("connect to %s from %s: %w", addr, netnsLabel(netns), err)
	}
	return c, nil
}

// dialsIn is a readiness check: something accepts connections on addr in netns.
func dialsIn(netns, addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := dialIn(ctx, netns, addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// httpOKIn is a readiness check: a GET of url, made from inside netns, answers 200.
func httpOKIn(netns, url string) func(context.Context) error {
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return dialIn(ctx, netns, addr) },
	}}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s in %s: %s", url, netnsLabel(netns), resp.Status)
		}
		return nil
	}
}

// writeSysctl sets a kernel parameter of a namespace's network stack, such as
// net.ipv4.ip_forward: /proc/sys/net shows the namespace of the thread that opens it.
func writeSysctl(netns, key, value string) error {
	path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
	err := inNetns(netns, func() error { return os.WriteFile(path, []byte(value+"\n"), 0o644) })
	if err != nil {
		return fmt.Errorf("set %s=%s in %s: %w", key, value, netnsLabel(netns), err)
	}
	return nil
}

func netnsLabel(netns string) string {
	if netns == "" {
		return "the host's network namespace"
	}
	return "network namespace " + netns
}

// nsenterArgv is the command line that runs argv inside the named namespace. nsenter
// execs argv, so the pid is argv's own and a pid file can name it.
func nsenterArgv(netns string, argv ...string) []string {
	return append([]string{"nsenter", "--net=" + netnsPath(netns), "--"}, argv...)
}

// run runs a command with extra environment and returns its standard output; the error
// names the command and carries what it wrote to standard error. As the daemons', its
// environment is ours without OVNK_* variables: they are the plugin's settings (a
// user's OVNK_PLUGIN_CONFIG names the sandbox's own settings file, written last).
func run(ctx context.Context, env []string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(withoutOVNKVars(os.Environ()), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
