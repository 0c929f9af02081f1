package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/test/testenv"
)

// lab is a node as the plugin sees it: a network namespace in which ovs-vswitchd
// (userspace datapath) runs br-int, as the agent makes it.
type lab struct {
	ctx  context.Context
	node *testenv.Netns
	ovs  *testenv.OVS
}

func newLab(t *testing.T) *lab {
	t.Helper()
	testenv.NeedRoot(t, "network namespaces, veths and OVS")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	node := testenv.NewNetns(t)
	ovs := testenv.StartOVSInNetns(t, node, nil)
	if _, err := ovs.VSCtl(ctx, "add-br", DefaultBridge, "--", "set", "Bridge", DefaultBridge, "datapath_type=netdev", "fail_mode=secure"); err != nil {
		t.Fatal(err)
	}
	return &lab{ctx: ctx, node: node, ovs: ovs}
}

// podNetns makes a pod sandbox's namespace as containerd does (a file under
// /run/netns, with lo up as the loopback plugin leaves it) and returns its path. It is
// deleted at the end of the test unless the test deleted it first.
func podNetns(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("cni-ovnk-%d-%d", os.Getpid(), netnsSeq.Add(1))
	for _, argv := range [][]string{{"ip", "netns", "add", name}, {"ip", "-n", name, "link", "set", "lo", "up"}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
		}
	}
	path := filepath.Join("/run/netns", name)
	t.Cleanup(func() {
		if _, err := os.Stat(path); err != nil {
			return
		}
		if out, err := exec.Command("ip", "netns", "delete", name).CombinedOutput(); err != nil {
			t.Errorf("delete network namespace %s: %v: %s", name, err, out)
		}
	})
	return path
}

var netnsSeq atomic.Int64

// deleteNetns deletes a pod's namespace, as containerd does after DEL (or a crash
// before it).
func deleteNetns(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "delete", filepath.Base(path)).CombinedOutput(); err != nil {
		t.Fatalf("delete network namespace %s: %v: %s", path, err, out)
	}
}

// agent serves plans as the node's agent does, on a unix socket whose path it returns;
// answer decides each answer.
func agent(t *testing.T, answer func(r *http.Request) (int, any)) string {
	t.Helper()
	return serveOnSocket(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body := answer(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}))
}

// serveOnSocket serves h on a unix socket in a directory of its own (short: a socket's
// path has room for 107 bytes, a test's temporary directory may not) and returns the
// socket's path. Server and directory go at the end of the test.
func serveOnSocket(t *testing.T, h http.Handler) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ovnk-cni-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return socket
}

// servePlan is an agent that answers the plan.
func servePlan(plan podnet.Plan) func(*http.Request) (int, any) {
	return func(*http.Request) (int, any) { return http.StatusOK, plan }
}

func (l *lab) config(t *testing.T, agentSocket string, extra string) Config {
	t.Helper()
	c, err := ParseConfig([]byte(fmt.Sprintf(`{"cniVersion":"1.0.0","name":"ovnk","type":"ovnk-cni","agentSocket":%q,"ovsAddress":%q,"agentTimeout":"10s","ovnInstalledTimeout":"0s"%s}`,
		agentSocket, l.ovs.DB.Endpoint, extra)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (l *lab) plugin(t *testing.T) *Plugin {
	return &Plugin{HostNetns: l.node.Name, Log: testLogger(t)}
}

const podUID = "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f"

func args(command, containerID, netnsPath string) Args {
	return Args{Command: command, ContainerID: containerID, Netns: netnsPath, IfName: "eth0",
		PodNamespace: "blue", PodName: "web", PodUID: podUID}
}

// handleAt opens netlink in a namespace (a path or a name).
func handleAt(t *testing.T, ns string) *netlink.Handle {
	t.Helper()
	n, err := netconf.OpenNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n.Handle
}

// podState is the pod's namespace as netlink shows it, one sorted line per link,
// address and route (the kernel's own routes and link-local addresses left out).
func podState(t *testing.T, netnsPath string) []string {
	t.Helper()
	h := handleAt(t, netnsPath)
	links, err := netconf.RetryDump(h.LinkList)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range links {
		a := l.Attrs()
		if a.Name == "lo" {
			continue
		}
		up := "down"
		if a.Flags&1 != 0 {
			up = "up"
		}
		lines = append(lines, fmt.Sprintf("link %s %s mtu %d %s", a.Name, a.HardwareAddr, a.MTU, up))
		addrs, err := netconf.RetryDump(func() ([]netlink.Addr, error) { return h.AddrList(l, netlink.FAMILY_ALL) })
		if err != nil {
			t.Fatal(err)
		}
		for _, ad := range addrs {
			if ad.IP.IsLinkLocalUnicast() {
				continue
			}
			lines = append(lines, fmt.Sprintf("addr %s %s", a.Name, ad.IPNet))
		}
		routes, err := netconf.RetryDump(func() ([]netlink.Route, error) { return h.RouteList(l, netlink.FAMILY_ALL) })
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range routes {
			if r.Protocol != 3 { // RTPROT_BOOT: what we add; the kernel's are RTPROT_KERNEL
				continue
			}
			dst := "default"
			if r.Dst != nil && r.Dst.IP != nil {
				if ones, _ := r.Dst.Mask.Size(); ones > 0 {
					dst = r.Dst.String()
				}
			}
			lines = append(lines, fmt.Sprintf("route %s via %s dev %s", dst, r.Gw, a.Name))
		}
	}
	slices.Sort(lines)
	return lines
}

// hostEnds are the sandbox's veths in the node's namespace.
func (l *lab) hostEnds(t *testing.T, containerID string) []string {
	t.Helper()
	links, err := netconf.RetryDump(handleAt(t, l.node.Name).LinkList)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range links {
		if podnet.IsHostInterfaceOf(containerID, k.Attrs().Name) {
			out = append(out, k.Attrs().Name)
		}
	}
	slices.Sort(out)
	return out
}

// ports are br-int's ports tagged with the container id, with their external_ids,
// as ovs-vsctl shows them ("name k=v k=v …"), sorted.
func (l *lab) ports(t *testing.T, containerID string) []string {
	t.Helper()
	out, err := l.ovs.VSCtl(l.ctx, "--format=csv", "--data=bare", "--no-headings", "--columns=name,external_ids",
		"find", "Interface", "external_ids:sandbox="+containerID)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" {
			lines = append(lines, strings.ReplaceAll(strings.Replace(line, ",", " ", 1), `"`, ""))
		}
	}
	slices.Sort(lines)
	return lines
}

// nothingLeft fails the test if the sandbox left veths or ports behind, or, when the
// pod's namespace is given, interfaces in it.
func (l *lab) nothingLeft(t *testing.T, containerID, netnsPath string) {
	t.Helper()
	if got := l.hostEnds(t, containerID); len(got) > 0 {
		t.Errorf("veths left in the node: %v", got)
	}
	if got := l.ports(t, containerID); len(got) > 0 {
		t.Errorf("ports left on br-int: %v", got)
	}
	if netnsPath != "" {
		if got := podState(t, netnsPath); len(got) > 0 {
			t.Errorf("interfaces left in the pod:\n%s", strings.Join(got, "\n"))
		}
	}
}

// testLogger logs the plugin's lines into the test's log.
func testLogger(t *testing.T) *log.Logger {
	return log.New(testWriter{t}, "ovnk-cni: ", 0)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
