package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
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
	return waitStarted(ctx, d, kubeletTimeout, "the kubelet of "+n.Name+" to be healthy", httpOKIn(n.Netns, "http://"+kubeletHealthz+"/healthz"))
}

// kubeletTimeout bounds a kubelet's start.
const kubeletTimeout = 2 * time.Minute

// kernelSettings are the sysctls kubelet sets for itself on start (they are the
// machine's, not a namespace's); the sandbox puts them back when it goes.
var kernelSettings = []string{"kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory"}

// kernelSettingsFile keeps their values from before the first kubelet started.
const kernelSettingsFile = "sysctls.json"

// saveKernelSettings records kernelSettings' values in the sandbox directory.
func (s *Sandbox) saveKernelSettings() error {
	values := map[string]string{}
	for _, k := range kernelSettings {
		data, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			return fmt.Errorf("read sysctl %s: %w", k, err)
		}
		values[k] = strings.TrimSpace(string(data))
	}
	data, err := json.Marshal(values)
	if err != nil {
		return fmt.Errorf("encode sysctls: %w", err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, kernelSettingsFile), data, 0o644); err != nil {
		return fmt.Errorf("record sysctls: %w", err)
	}
	return nil
}

// restoreKernelSettings writes back the values saveKernelSettings recorded in dir, if
// it did.
func restoreKernelSettings(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, kernelSettingsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read recorded sysctls: %w", err)
	}
	values := map[string]string{}
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("recorded sysctls %s: %w", filepath.Join(dir, kernelSettingsFile), err)
	}
	var errs []error
	for _, k := range kernelSettings {
		if v, ok := values[k]; ok {
			if err := os.WriteFile("/proc/sys/"+k, []byte(v+"\n"), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, v, err))
			}
		}
	}
	return errors.Join(errs...)
}
