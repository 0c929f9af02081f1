package agent

import (
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/pkg/poll"
)

// shortDir is a directory whose paths fit a unix socket (107 bytes), which a test's
// own temporary directory may not.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ovnk-agent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// unixClient is an HTTP client that dials the socket, as the plugin does.
func unixClient(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
}

// The plan server listens on a unix socket of mode 0600 in a directory it creates
// 0700, replaces the socket an agent that died left there, answers plans (and nothing
// else) on it, and removes the socket when it stops.
func TestPlanServer(t *testing.T) {
	dir := filepath.Join(shortDir(t), "ovnk") // missing, as on a fresh node
	socket := filepath.Join(dir, "cni.sock")

	start := func(t *testing.T) func() error {
		t.Helper()
		plans := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(podnet.Plan{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")})
		})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- planServer{socket: socket, plans: plans, log: logr.Discard()}.Start(ctx) }()
		if err := poll.Until(ctx, 10*time.Second, "the plan server's socket", poll.Dials("unix", socket)); err != nil {
			t.Fatal(err)
		}
		return func() error { cancel(); return <-done }
	}

	stop := start(t)
	for path, want := range map[string]fs.FileMode{dir: fs.ModeDir | 0o700, socket: fs.ModeSocket | 0o600} {
		if st, err := os.Lstat(path); err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, st.Mode(), err, want)
		}
	}
	resp, err := unixClient(socket).Get("http://ovnk-agent" + podnet.PlanPath("blue", "web"))
	if err != nil {
		t.Fatal(err)
	}
	var plan podnet.Plan
	if err := json.NewDecoder(resp.Body).Decode(&plan); err != nil || plan.Ref() != "blue/web" {
		t.Errorf("plan over the socket: %+v, %v", plan, err)
	}
	resp.Body.Close()
	if resp, err := unixClient(socket).Get("http://ovnk-agent/metrics"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the plan socket: %v, %v; want 404", resp, err)
	}

	// A restarted agent replaces the socket of one that died (SIGKILL: no cleanup).
	if err := os.Chmod(dir, 0o755); err != nil { // as a hostPath DirectoryOrCreate makes it
		t.Fatal(err)
	}
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket + ".other", Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close() // its process is gone: the file stays, no one answers
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after the server stopped: %v", err)
	}
	if err := os.Rename(socket+".other", socket); err != nil { // left by an agent killed
		t.Fatal(err)
	}
	stop = start(t)
	if resp, err := unixClient(socket).Get("http://ovnk-agent" + podnet.PlanPath("blue", "web")); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("plan over the replaced socket: %v, %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("an existing directory's mode was changed: %v, %v", st.Mode(), err)
	}
	// Another agent replaces this one's socket: stopping does not remove the other's.
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	other, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	other.SetUnlinkOnClose(false)
	defer other.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(socket); err != nil {
		t.Errorf("stopping removed another agent's socket: %v", err)
	}
}

// Anything but a socket at the path is not the agent's to remove.
func TestPlanServerRefusesAFile(t *testing.T) {
	socket := filepath.Join(shortDir(t), "cni.sock")
	if err := os.WriteFile(socket, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := planServer{socket: socket, plans: http.NotFoundHandler(), log: logr.Discard()}.Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "cni-socket "+socket+" exists and is not a socket") {
		t.Errorf("Start over a file: %v", err)
	}
	if b, err := os.ReadFile(socket); err != nil || string(b) != "precious" {
		t.Errorf("the file was touched: %q, %v", b, err)
	}
}

// The agent's HTTP port serves probes and metrics only: not the pods' plans.
func TestHealthMuxHasNoPlans(t *testing.T) {
	srv := httptest.NewServer(healthMux(func() bool { return true }, func() bool { return true }, func(context.Context) error { return nil }))
	defer srv.Close()
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, podnet.PlanPath("blue", "web") + "?uid=u": 404} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s on the HTTP port: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// The profiles are served on their own mux, never on the HTTP port every pod reaches.
func TestPprofOnlyOnItsOwnAddress(t *testing.T) {
	health := httptest.NewServer(healthMux(func() bool { return true }, func() bool { return true }, func(context.Context) error { return nil }))
	defer health.Close()
	profiles := httptest.NewServer(pprofMux())
	defer profiles.Close()
	for _, c := range []struct {
		url  string
		want int
	}{
		{health.URL + "/debug/pprof/heap", 404},
		{profiles.URL + "/debug/pprof/heap", 200},
		{profiles.URL + "/debug/pprof/goroutine?debug=1", 200},
		{profiles.URL + "/healthz", 404},
	} {
		resp, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.url, resp.StatusCode, c.want)
		}
	}
}
