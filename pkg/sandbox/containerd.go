package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ovnk/ovnk/pkg/images"
)

// Each node runs a containerd of its own (one containerd serving several kubelets would
// let each kubelet take the others' pods for orphans), inside the node's network and
// mount namespaces, with its files in the node's directory. Its socket is there too, so
// the host's tools reach it: ctr -a <node dir>/containerd.sock -n k8s.io ….

// containerdSocket is the containerd socket's name in the node's directory.
const containerdSocket = "containerd.sock"

// containerdNamespace is the containerd namespace of kubelet's pods (CRI's).
const containerdNamespace = "k8s.io"

func (s *Sandbox) containerd(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" containerd", filepath.Join(n.Dir, "containerd"))
}

// ContainerdSocket is node n's containerd socket, on the host.
func (s *Sandbox) ContainerdSocket(n Node) string {
	return filepath.Join(s.nodeDir(n), containerdSocket)
}

// containerdConfig is node n's containerd configuration: its files in the node's
// directory (the opt plugin's default is the host's /opt/containerd), the CRI plugin with runc on
// cgroupfs (this machine has cgroup v1 and no systemd), our pause image, and the CNI
// directories kubelet's CNI plugin is installed into (the node's, by its mount
// namespace). restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, and runc fails
// to create a sandbox whose OOM score it may not lower.
func (s *Sandbox) containerdConfig(n Node) string {
	return fmt.Sprintf(`version = 2
root = %q
state = "/run/containerd"

[grpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/opt/cni/bin"
    conf_dir = "/etc/cni/net.d"
`, filepath.Join(s.nodeRoot(n), "containerd"), s.ContainerdSocket(n), filepath.Join(s.nodeRoot(n), "containerd-opt"), images.PauseImage)
}

// startContainerd starts node n's containerd and waits until it answers.
func (s *Sandbox) startContainerd(ctx context.Context, n Node) error {
	config := filepath.Join(s.nodeDir(n), "containerd.toml")
	if err := os.WriteFile(config, []byte(s.containerdConfig(n)), 0o644); err != nil {
		return fmt.Errorf("write containerd configuration of %s: %w", n.Name, err)
	}
	d := s.containerd(n)
	if err := d.startDetached(s.nodeDir(n), nil, s.inNodeArgv(n, "containerd", "--config", config)...); err != nil {
		return err
	}
	return waitStarted(ctx, d, containerdTimeout, "containerd of "+n.Name, func(ctx context.Context) error {
		_, err := s.ctr(ctx, n, "version")
		return err
	})
}

// ctr runs ctr against node n's containerd in kubelet's namespace.
func (s *Sandbox) ctr(ctx context.Context, n Node, args ...string) (string, error) {
	return run(ctx, nil, append([]string{"ctr", "--address", s.ContainerdSocket(n), "--namespace", containerdNamespace}, args...)...)
}

// importImages loads the image archives into node n's containerd, as a registry pull
// would have.
func (s *Sandbox) importImages(ctx context.Context, n Node, archives []images.Built) error {
	for _, a := range archives {
		if _, err := s.ctr(ctx, n, "images", "import", a.Archive); err != nil {
			return fmt.Errorf("import image %s into the containerd of %s: %w", a.Name, n.Name, err)
		}
	}
	return nil
}

// inNodeArgv runs argv inside node n's network and mount namespaces.
func (s *Sandbox) inNodeArgv(n Node, argv ...string) []string {
	return append([]string{"nsenter", "--net=" + netnsPath(n.Netns), "--mount=" + s.mountNS(n), "--"}, argv...)
}

// containerdTimeout bounds containerd's start.
const containerdTimeout = time.Minute
