package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain removes the binaries the tests built (testenv.Command) once they are done.
func TestMain(m *testing.M) { os.Exit(testenv.BuildsMain(m)) }

func TestHandler(t *testing.T) {
	var logs strings.Builder
	s := &server{hostname: "pod-a", log: log.New(&logs, "", 0)}
	for _, tc := range []struct {
		method, path, remote string
		status               int
		body                 string // the whole body, when not empty
		log                  string
	}{
		{"GET", "/", "10.0.0.5:40000", 200, "pod-a 10.0.0.5\n", "tcp 10.0.0.5:40000 GET / 200"},
		{"GET", "/", "[::ffff:10.0.0.6]:40001", 200, "pod-a 10.0.0.6\n", "tcp 10.0.0.6:40001 GET / 200"},
		{"GET", "/", "[fd00::7]:40002", 200, "pod-a fd00::7\n", "tcp [fd00::7]:40002 GET / 200"},
		{"GET", "/healthz", "10.0.0.5:40003", 200, "ok\n", "tcp 10.0.0.5:40003 GET /healthz 200"},
		{"HEAD", "/", "10.0.0.5:40004", 200, "", "tcp 10.0.0.5:40004 HEAD / 200"},
		{"POST", "/", "10.0.0.5:40005", 405, "", "tcp 10.0.0.5:40005 POST / 405"},
		{"GET", "/nope", "10.0.0.5:40006", 404, "", "tcp 10.0.0.5:40006 GET /nope 404"},
	} {
		logs.Reset()
		r := httptest.NewRequest(tc.method, tc.path, nil)
		r.RemoteAddr = tc.remote
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != tc.status || (tc.body != "" && w.Body.String() != tc.body) {
			t.Errorf("%s %s from %s: %d %q, want %d %q", tc.method, tc.path, tc.remote, w.Code, w.Body.String(), tc.status, tc.body)
		}
		if got := strings.TrimSpace(logs.String()); got != tc.log {
			t.Errorf("%s %s from %s logged %q, want %q", tc.method, tc.path, tc.remote, got, tc.log)
		}
	}
}

// process is the built ovnk-testapp running, with its stdout collected line by line.
type process struct {
	cmd    *exec.Cmd
	exited chan error
	mu     sync.Mutex
	lines  []string
}

func (p *process) output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// waitLine waits for a line of stdout matching re and returns its submatches.
func (p *process) waitLine(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	err := testenv.Eventually(context.Background(), 10*time.Second, "ovnk-testapp to log "+re.String(), func(context.Context) error {
		for _, l := range p.output() {
			if m = re.FindStringSubmatch(l); m != nil {
				return nil
			}
		}
		return fmt.Errorf("logged %q", p.output())
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func start(t *testing.T, args ...string) *process {
	t.Helper()
	return startArgv(t, append([]string{testenv.Command(t, "ovnk-testapp")}, args...))
}

// startArgv runs argv, which runs ovnk-testapp (inside nsenter, say).
func startArgv(t *testing.T, argv []string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(argv[0], argv[1:]...), exited: make(chan error, 1)}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	p.cmd.Stderr = &stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("ovnk-testapp stdout: %q, stderr: %q", p.output(), stderr.String())
		}
	})
	return p
}

func TestServesHTTPAndUDP(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, "--port", "0")
	port := p.waitLine(t, regexp.MustCompile(`^ovnk-testapp \S+ serving on port (\d+) \(tcp: http, udp\)$`))[1]

	get := func(url string) string {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %q %v", url, resp.StatusCode, b, err)
		}
		return string(b)
	}
	if got, want := get("http://127.0.0.1:"+port+"/"), hostname+" 127.0.0.1\n"; got != want {
		t.Errorf("GET / = %q, want %q", got, want)
	}
	if got := get("http://127.0.0.1:" + port + "/healthz"); got != "ok\n" {
		t.Errorf("GET /healthz = %q, want ok", got)
	}
	if l, err := net.Listen("tcp6", "[::1]:0"); err == nil { // where the host has IPv6
		l.Close()
		if got, want := get("http://[::1]:"+port+"/"), hostname+" ::1\n"; got != want {
			t.Errorf("GET / over IPv6 = %q, want %q", got, want)
		}
	}

	conn, err := net.Dial("udp4", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("who?")); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("udp answer: %v", err)
	}
	if got, want := string(buf[:n]), hostname+" 127.0.0.1\n"; got != want {
		t.Errorf("udp answer %q, want %q", got, want)
	}
	clientPort := strconv.Itoa(conn.LocalAddr().(*net.UDPAddr).Port)
	p.waitLine(t, regexp.MustCompile(`^udp 127\.0\.0\.1:`+clientPort+` 4 bytes$`))
	p.waitLine(t, regexp.MustCompile(`^tcp 127\.0\.0\.1:\d+ GET /healthz 200$`))

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("ovnk-testapp after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ovnk-testapp did not exit within 10s of SIGTERM")
	}
	if out := p.output(); out[len(out)-1] != "stopping" {
		t.Errorf("last line %q, want stopping", out[len(out)-1])
	}
}

func TestRefusesBadFlags(t *testing.T) {
	bin := testenv.Command(t, "ovnk-testapp")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "70000"}, "port 70000 is out of range"},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"--nope"}, "flag provided but not defined: -nope"},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(string(out), tc.want) {
			t.Errorf("ovnk-testapp %q: %v, %q; want a failure saying %q", tc.args, err, out, tc.want)
		}
	}
}
