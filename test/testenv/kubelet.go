package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// Kubelet stands in for the kubelet of a test node, for the one thing the API server
// asks a kubelet to do that tests need: pods/exec. The API server proxies an exec of a
// pod to https://<node address>:<kubelet port>/exec/<namespace>/<pod>/<container>, and
// this server answers it with the kubelet's own streaming code (k8s.io/cri-streaming's
// ServeExec, SPDY and WebSocket), running the command as a local process instead of in
// a container. There is no container runtime here, so there are no containers: every
// pod and container name is accepted, and the command is looked up by its base name in
// Image, the directory that stands in for the container image.
//
// Point a Node at it with NodeStatus. Without --kubelet-certificate-authority the API
// server does not verify a kubelet's serving certificate (k8s.io/kubernetes
// pkg/kubelet/client: no CA means an insecure transport), so the self-signed one here is
// accepted; the API server presents no client certificate, and none is asked for.
type Kubelet struct {
	// Image is the directory the exec'd commands are found in.
	Image string
	// Port is the HTTPS port on 127.0.0.1.
	Port int32

	mu    sync.Mutex
	execs []Exec
}

// Exec is one exec request the stand-in kubelet served.
type Exec struct {
	Namespace, Pod, Container string
	Command                   []string
}

// kubeletIdleTimeout closes an exec stream that carried nothing for this long (a real
// kubelet's default is 4h; a test never waits that long for a command).
const kubeletIdleTimeout = 2 * time.Minute

// StartKubelet starts a stand-in kubelet whose exec'd commands come from image, and
// stops it in t.Cleanup.
func StartKubelet(t testing.TB, image string) *Kubelet {
	t.Helper()
	k := &Kubelet{Image: image}
	mux := http.NewServeMux()
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", k.serveExec)
	srv := httptest.NewTLSServer(mux) // HTTP/1.1 only: SPDY upgrades need it
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("stand-in kubelet address %s: %v", srv.Listener.Addr(), err)
	}
	p, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("stand-in kubelet port %s: %v", port, err)
	}
	k.Port = int32(p)
	return k
}

// NodeStatus is what a kubelet publishes about itself for the API server to reach it:
// the address 127.0.0.1 (an InternalIP, one of kube-apiserver's default
// --kubelet-preferred-address-types) and this server's port.
func (k *Kubelet) NodeStatus() corev1.NodeStatus {
	return corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: k.Port}},
	}
}

// Execs returns the exec requests served so far, oldest first.
func (k *Kubelet) Execs() []Exec {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Exec(nil), k.execs...)
}

func (k *Kubelet) serveExec(w http.ResponseWriter, req *http.Request) {
	opts, err := remotecommand.NewOptions(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The API server passes the command as repeated "command" parameters, as a kubelet
	// receives it (corev1.PodExecOptions).
	cmd := req.URL.Query()["command"]
	if len(cmd) == 0 {
		http.Error(w, "no command", http.StatusBadRequest)
		return
	}
	e := Exec{Namespace: req.PathValue("namespace"), Pod: req.PathValue("pod"), Container: req.PathValue("container"), Command: cmd}
	k.mu.Lock()
	k.execs = append(k.execs, e)
	k.mu.Unlock()
	remotecommand.ServeExec(w, req, processExecutor{image: k.Image}, e.Pod, "", e.Container, cmd, opts,
		kubeletIdleTimeout, remotecommand.DefaultStreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// processExecutor runs an exec'd command as a child process of the test.
type processExecutor struct{ image string }

func (x processExecutor) ExecInContainer(ctx context.Context, _, _, _ string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, _ <-chan remotecommand.TerminalSize, _ time.Duration) error {
	if tty {
		return errors.New("the stand-in kubelet runs no terminals")
	}
	path := filepath.Join(x.image, filepath.Base(cmd[0]))
	if _, err := os.Stat(path); err != nil {
		// The message a container runtime gives for a command the image lacks.
		return fmt.Errorf("exec: %q: executable file not found in $PATH (image %s)", cmd[0], x.image)
	}
	c := exec.CommandContext(ctx, path, cmd[1:]...)
	c.Env = []string{"PATH=" + x.image}
	if in != nil {
		c.Stdin = in
	}
	if out != nil {
		c.Stdout = out
	}
	if errOut != nil {
		c.Stderr = errOut
	}
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := c.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		// ServeExec reports an exit code only for this type; anything else becomes an
		// internal error.
		return &utilexec.ExitErrorWrapper{ExitError: exitErr}
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", strings.Join(cmd, " "), err)
	}
	return nil
}
