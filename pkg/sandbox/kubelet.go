package sandbox

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Each node runs a kubelet inside its network and mount namespaces, on its containerd.
// It registers the Node itself, with the node's underlay address as its InternalIP, and
// reaches the API server at the node's 127.0.0.1:6443 (the forwarder). Its pods' cgroups
// are under a cgroup root of the node's own, so the nodes never take each other's pods'
// cgroups for their own.

// kubeletHealthz is where a node's kubelet serves /healthz, inside the node.
const kubeletHealthz = "127.0.0.1:10248"

// kubeletPort is the port a node's kubelet serves exec, logs and port-forward on, at
// the node's address; the API server reaches it through the forwarder's proxy.
const kubeletPort = 10250

func (s *Sandbox) kubelet(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" kubelet", filepath.Join(n.Dir, "kubelet"))
}

// cgroupRoot is the cgroup node n's kubelet puts its pods under, the same path in every
// cgroup v1 controller: named as the node's network namespace, so unique per sandbox.
func (n Node) cgroupRoot() string { return "/" + n.Netns }

// kubeletConfig is node n's KubeletConfiguration. failCgroupV1: this machine has cgroup
// v1, which kubelet 1.37 refuses unless told; cgroupfs, since there is no systemd.
// Evictions are off: the nodes share one disk and one memory, and a full disk on the host
// must not evict the demo's pods one node at a time.
func (s *Sandbox) kubeletConfig(n Node, caFile string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %q
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
containerRuntimeEndpoint: %q
address: %q
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %q
authorization:
  mode: Webhook
failSwapOn: false
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podLogsDir: /var/log/pods
resolvConf: ""
serializeImagePulls: false
volumePluginDir: /usr/libexec/kubernetes/kubelet-plugins/volume/exec
localStorageCapacityIsolation: false
`, n.cgroupRoot(), "unix://"+s.ContainerdSocket(n), netip.MustParsePrefix(n.Address).Addr(), kubeletPort, caFile)
}

// startKubelet starts node n's kubelet and waits until it is healthy.
func (s *Sandbox) startKubelet(ctx context.Context, path string, n Node) error {
	if err := createCgroup(n.cgroupRoot()); err != nil {
		return fmt.Errorf("node %s: %w", n.Name, err)
	}
	config := filepath.Join(s.nodeDir(n), "kubelet.yaml")
	if err := os.WriteFile(config, []byte(s.kubeletConfig(n, filepath.Join(s.Dir, "pki", "ca.crt"))), 0o644); err != nil {
		return fmt.Errorf("write kubelet configuration of %s: %w", n.Name, err)
	}
	d := s.kubelet(n)
	argv := s.inNodeArgv(n, path,
		"--config="+config,
		"--kubeconfig="+n.Kubeconfig,
		"--hostname-override="+n.Name,
		"--node-ip="+netip.MustParsePrefix(n.Address).Addr().String(),
		"--cert-dir="+filepath.Join(s.nodeRoot(n), "kubelet-pki"),
		"--v=1",
	)
	if err := d.startDetached(s.nodeDir(n), nil, argv...); err != nil {
		return err
	}
	err := waitStarted(ctx, d, kubeletTimeout, "the kubelet of "+n.Name+" to be healthy", httpOKIn(n.Netns, "http://"+kubeletHealthz+"/healthz"))
	if why := kubeletFailure(d.logFile); err != nil && why != "" {
		// One line first that says why, before the log's tail.
		return fmt.Errorf("the kubelet of %s cannot start: %s\n%w", n.Name, why, err)
	}
	return err
}

// kubeletFailure is the reason kubelet gave for exiting, from the last line of its log
// of the form `… "command failed" err="…"`; empty when there is none.
func kubeletFailure(logFile string) string {
	data, err := os.ReadFile(logFile)
	if err != nil {
		return ""
	}
	const marker = `"command failed" err=`
	i := strings.LastIndex(string(data), marker)
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(string(data[i+len(marker):]), "\n")
	if why, err := strconv.Unquote(strings.TrimSpace(line)); err == nil {
		return why
	}
	return strings.TrimSpace(line)
}

// kubeletTimeout bounds a kubelet's start.
const kubeletTimeout = 2 * time.Minute
