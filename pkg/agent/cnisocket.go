package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
)

// planServer serves the pods' plans (podPlans) to the node's CNI plugin on a unix
// socket, never on the agent's TCP port: with the host network every pod of the node
// reaches that port, and a plan holds pods' addresses, MACs and UIDs; and a process
// that took the port while the agent restarts could hand the plugin forged plans. The
// socket is 0600 and owned by the agent's user (root), in a directory the agent creates
// 0700 when it is missing, so only root on the node reaches it.
type planServer struct {
	socket string
	plans  http.Handler
	log    logr.Logger
}

func (p planServer) NeedLeaderElection() bool { return false }

// Start serves until ctx ends, then removes the socket (if it is still the one it
// made).
func (p planServer) Start(ctx context.Context) error {
	ln, release, err := listenSocket(p.socket, p.log)
	if err != nil {
		return err
	}
	defer release()
	mux := http.NewServeMux()
	mux.Handle(podPlanPattern, p.plans)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve the CNI plugin on %s: %w", p.socket, err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// listenSocket binds a unix socket at path, mode 0600. A missing directory is created
// 0700; an existing one is left as it is (the DaemonSet's hostPath makes it 0755). A
// socket at path — an earlier agent's, which died without removing it — is replaced;
// anything else there is an error. The socket exists with the process's umask (0022:
// no one but root may connect) until the chmod, a moment after the bind. release
// closes the listener and removes the socket unless another agent has bound a new one
// there meanwhile.
func listenSocket(path string, log logr.Logger) (net.Listener, func(), error) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("cni-socket %s: create its directory: %w", path, err)
		}
	} else if err != nil {
		return nil, nil, fmt.Errorf("cni-socket %s: %w", path, err)
	}
	switch st, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, fmt.Errorf("cni-socket %s: %w", path, err)
	case st.Mode().Type() != fs.ModeSocket:
		return nil, nil, fmt.Errorf("cni-socket %s exists and is not a socket (%s): remove it, or set cni-socket to another path", path, st.Mode().Type())
	default:
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("cni-socket %s: remove the earlier socket: %w", path, err)
		}
		log.Info("replaced the CNI socket an earlier agent left", "socket", path)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("cni-socket %s: %w", path, err)
	}
	// Removed by release, and only if no one serves there: Go's own unlink on Close
	// would remove a socket another agent bound there since. (Comparing inodes cannot
	// tell: a new socket often gets the inode the removed one had.)
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, nil, fmt.Errorf("cni-socket %s: %w", path, err)
	}
	release := func() {
		ln.Close()
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close() // another agent's, live
			return
		}
		if st, err := os.Lstat(path); err == nil && st.Mode().Type() == fs.ModeSocket {
			os.Remove(path)
		}
	}
	return ln, release, nil
}
