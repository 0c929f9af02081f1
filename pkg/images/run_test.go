package images

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/ovnk/ovnk/test/testenv"
)

// dialIn connects from inside the named network namespace. Only the socket's creation
// and connect happen there, on a thread of their own; the connection then works from
// any goroutine. A thread whose namespace cannot be restored is left to die with its
// goroutine rather than serve other goroutines in the wrong namespace.
func dialIn(ctx context.Context, nsName, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			done <- result{err: fmt.Errorf("current network namespace: %w", err)}
			return
		}
		defer orig.Close()
		target, err := netns.GetFromName(nsName)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("network namespace %s: %w", nsName, err)}
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			done <- result{err: fmt.Errorf("enter network namespace %s: %w", nsName, err)}
			return
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// askHTTP sends GET url from inside the namespace and returns the body.
func askHTTP(ctx context.Context, nsName, url string) (string, error) {
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialIn(ctx, nsName, network, addr)
		},
		DisableKeepAlives: true,
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %q", url, resp.Status, b)
	}
	return string(b), nil
}

// askUDP sends a datagram from inside the namespace and returns the answer.
func askUDP(ctx context.Context, nsName, addr string) (string, error) {
	conn, err := dialIn(ctx, nsName, "udp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("who?")); err != nil {
		return "", err
	}
	if err := conn.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return "", err
	}
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	if err != nil {
		return "", fmt.Errorf("udp %s: %w", addr, err)
	}
	return string(buf[:n]), nil
}

// TestContainerdRunsTheImages imports the three archives into a real containerd and
// runs each image as ctr would any other: the test app serving HTTP and UDP in a
// network namespace of its own, the pause process stopping on SIGTERM, and the agent
// image's OVS tools driving a real ovs-vswitchd through its mounted run directory.
func TestContainerdRunsTheImages(t *testing.T) {
	in := testInputs(t)
	built, err := WriteAll(t.TempDir(), in)
	if err != nil {
		t.Fatal(err)
	}
	c := startContainerd(t)
	ctx := context.Background()

	for _, b := range built {
		if _, err := c.ctr(ctx, "images", "import", b.Archive); err != nil {
			t.Fatal(err)
		}
	}
	names, err := c.ctr(ctx, "images", "ls", "-q")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := c.ctr(ctx, "images", "ls")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if !slices.Contains(strings.Fields(names), b.Name) {
			t.Errorf("ctr images ls -q lists %q, not %s", names, b.Name)
		}
		// REF TYPE DIGEST …: containerd's digest of the image is the manifest's.
		if !strings.Contains(strings.Join(strings.Fields(listed), " "), b.Name+" application/vnd.oci.image.manifest.v1+json "+b.Digest) {
			t.Errorf("ctr images ls does not show %s with digest %s:\n%s", b.Name, b.Digest, listed)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Run("testapp", func(t *testing.T) { runTestApp(t, c) })
	t.Run("pause", func(t *testing.T) { runPause(t, c) })
	t.Run("agent", func(t *testing.T) { runAgentTools(t, c) })
}

// runTestApp runs the test app in namespace A and asks it from namespace B, across a
// veth, so the answer shows B's address as the source. The container is stopped as
// kubelet would, with SIGTERM, and must exit 0.
func runTestApp(t *testing.T, c *containerd) {
	ctx := context.Background()
	a, b := testenv.NewNetns(t), testenv.NewNetns(t)
	testenv.Connect(t, a, netip.MustParsePrefix("192.0.2.1/24"), b, netip.MustParsePrefix("192.0.2.2/24"))
	hostname, err := os.Hostname() // ctr gives the container the host's name
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("ovnk-testapp-%d", os.Getpid())
	argv := c.ctrArgv(c.runArgs(id, "--with-ns", "network:"+filepath.Join("/run/netns", a.Name))...)
	p := testenv.StartProcess(t, c.dir, id, nil, append(argv, TestAppImage, id)...)
	want := hostname + " 192.0.2.2\n"
	err = testenv.Eventually(ctx, 30*time.Second, "the test app answering GET / from "+b.Name, func(ctx context.Context) error {
		if done, err := p.Exited(); done {
			return fmt.Errorf("ctr run exited: %v\n%s", err, p.LogTail(20))
		}
		got, err := askHTTP(ctx, b.Name, "http://192.0.2.1:8080/")
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("answer %q, want %q", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := askHTTP(ctx, b.Name, "http://192.0.2.1:8080/healthz"); err != nil || got != "ok\n" {
		t.Errorf("GET /healthz: %q, %v", got, err)
	}
	if got, err := askUDP(ctx, b.Name, "192.0.2.1:8080"); err != nil || got != want {
		t.Errorf("udp: %q, %v; want %q", got, err, want)
	}
	err = testenv.Eventually(ctx, 10*time.Second, "the test app's log lines", func(context.Context) error {
		log := p.LogTail(50)
		for _, line := range []string{"GET / 200", "GET /healthz 200", "udp 192.0.2.2:"} {
			if !strings.Contains(log, line) {
				return fmt.Errorf("no %q in:\n%s", line, log)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	stopAndExpectZero(t, c, p, id)
	if log := p.LogTail(5); !strings.Contains(log, "stopping") {
		t.Errorf("the test app did not log its stop:\n%s", log)
	}
}

// stopAndExpectZero sends SIGTERM to ctr run, which hands it to the container's
// process; ctr then exits with the container's status, and --rm removes it.
func stopAndExpectZero(t *testing.T, c *containerd, p *testenv.Process, id string) {
	t.Helper()
	ctx := context.Background()
	// ctr forwards signals only once the task runs; until then a SIGTERM ends ctr.
	err := testenv.Eventually(ctx, 30*time.Second, "container "+id+" running", func(ctx context.Context) error {
		out, err := c.ctr(ctx, "tasks", "ls")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == id && f[2] == "RUNNING" {
				return nil
			}
		}
		return fmt.Errorf("tasks:\n%s", out)
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if _, err := p.Exited(); err != nil {
		t.Errorf("ctr run %s after SIGTERM: %v, want exit 0\n%s", id, err, p.LogTail(20))
	}
	if out, err := c.ctr(ctx, "containers", "ls", "-q"); err != nil || slices.Contains(strings.Fields(out), id) {
		t.Errorf("containers after ctr run --rm of %s: %q, %v", id, out, err)
	}
}

func runPause(t *testing.T, c *containerd) {
	id := fmt.Sprintf("ovnk-pause-%d", os.Getpid())
	p := testenv.StartProcess(t, c.dir, id, nil, append(c.ctrArgv(c.runArgs(id)...), PauseImage, id)...)
	stopAndExpectZero(t, c, p, id)
}

// runAgentTools runs the agent image's OVS and OVN tools as plain /usr/bin/NAME, with
// the run directory of a real ovs-vswitchd mounted where the DaemonSet mounts the
// node's: they must load from the image alone and talk to the servers.
func runAgentTools(t *testing.T, c *containerd) {
	ctx := context.Background()
	ovs := testenv.StartOVS(t)
	dbSock, err := filepath.Rel(ovs.Dir(), ovs.DB.Socket)
	if err != nil || strings.HasPrefix(dbSock, "..") {
		t.Fatalf("the OVS database socket %s is not in its run directory %s", ovs.DB.Socket, ovs.Dir())
	}
	script := `set -e
for tool in ` + strings.Join(AgentTools, " ") + `; do "/usr/bin/$tool" --version | head -n 1; done
ovs-vsctl --db=unix:/run/openvswitch/` + dbSock + ` add-br br-img -- set bridge br-img datapath_type=netdev
ovs-ofctl add-flow br-img "cookie=0x17,priority=7,ip,actions=drop"
ovs-ofctl dump-flows --no-stats br-img
ovs-appctl -t /run/openvswitch/ovs-vswitchd.ctl version
echo "shell: $(id -un) in $(pwd), $(ls /bin | wc -l) entries in /bin"
`
	id := fmt.Sprintf("ovnk-agent-%d", os.Getpid())
	args := c.runArgs(id,
		"--mount", "type=bind,src="+ovs.Dir()+",dst=/var/run/openvswitch,options=rbind:rw",
		"--env", "OVS_RUNDIR=/var/run/openvswitch")
	out, err := c.ctr(ctx, append(args, AgentImage, id, "/bin/sh", "-c", script)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("inside the agent image:\n%s", out)
	for _, want := range []string{
		"ovs-ofctl (Open vSwitch) 3.5.", "ovs-vsctl (Open vSwitch) 3.5.", "ovn-nbctl 25.03.", "ovn-trace 25.03.",
		"cookie=0x17, priority=7,ip actions=drop", "ovs-vswitchd (Open vSwitch) 3.5.", "shell: root in /,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the agent image's output", want)
		}
	}
	// And the server saw it: the bridge and the flow are on the host's side too.
	flows, err := ovs.Bridge("br-img").DumpFlows(ctx)
	if err != nil || !slices.ContainsFunc(flows, func(f string) bool { return strings.Contains(f, "cookie=0x17") }) {
		t.Errorf("flows of br-img seen from the host: %q, %v", flows, err)
	}
}
