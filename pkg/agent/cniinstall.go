package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/ovnk/ovnk/pkg/agent/config"
)

// The agent installs the CNI plugin on its node as ovnkube-node does: the binary into
// the runtime's plugin directory at once, and the network configuration only once the
// zone is applied, since kubelet reports the node's network ready as soon as a CNI
// configuration exists. The configuration is left in place when the agent stops: the
// runtime needs it to tear pods down (DEL) while the agent is away.
const (
	cniPluginName = "ovnk-cni"
	cniConfFile   = "10-ovnk.conflist"
	cniNetwork    = "ovnk"
	cniVersion    = "1.0.0"
)

// cniInstall puts the plugin and its configuration where the container runtime finds
// them.
type cniInstall struct {
	plugin  string // the binary to copy; "" installs nothing
	binDir  string
	confDir string
	conf    []byte // the conflist
}

// newCNIInstall is the installation cfg asks for, or nil when cni-plugin is empty.
func newCNIInstall(cfg *config.Config) (*cniInstall, error) {
	if cfg.CNIPlugin == "" {
		return nil, nil
	}
	url, err := agentURL(cfg.HTTPAddress)
	if err != nil {
		return nil, err
	}
	conf, err := conflist(url, cfg.OVSEndpoint)
	if err != nil {
		return nil, err
	}
	return &cniInstall{plugin: cfg.CNIPlugin, binDir: cfg.CNIBinDir, confDir: cfg.CNIConfDir, conf: conf}, nil
}

// agentURL is where the plugin, on the same node, reaches the agent's HTTP server
// listening at addr ([host]:port): a wildcard or empty host means 127.0.0.1.
func agentURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("http-address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// conflist is the network configuration list the runtime reads: one plugin.
func conflist(agentURL, ovsAddress string) ([]byte, error) {
	type plugin struct {
		Type       string `json:"type"`
		AgentURL   string `json:"agentURL"`
		OVSAddress string `json:"ovsAddress"`
	}
	b, err := json.MarshalIndent(struct {
		CNIVersion string   `json:"cniVersion"`
		Name       string   `json:"name"`
		Plugins    []plugin `json:"plugins"`
	}{cniVersion, cniNetwork, []plugin{{Type: cniPluginName, AgentURL: agentURL, OVSAddress: ovsAddress}}}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Sync installs the plugin binary and, once ready, the configuration, and returns the
// files it wrote: none when both are in place already. A file is replaced atomically
// (written beside it, then renamed over it), so the runtime never runs a half-copied
// plugin or reads a half-written configuration, and a plugin running meanwhile keeps
// its old binary. The configuration is not written while the binary cannot be put in
// place: pods would only fail on a missing plugin.
func (i *cniInstall) Sync(ready bool) ([]string, error) {
	binary, err := os.ReadFile(i.plugin)
	if err != nil {
		return nil, fmt.Errorf("read the CNI plugin to install (cni-plugin): %w", err)
	}
	var written []string
	path := filepath.Join(i.binDir, cniPluginName)
	changed, err := writeAtomic(path, binary, 0o755)
	if err != nil {
		return nil, fmt.Errorf("install the CNI plugin: %w", err)
	}
	if changed {
		written = append(written, path)
	}
	if !ready {
		return written, nil
	}
	path = filepath.Join(i.confDir, cniConfFile)
	if changed, err = writeAtomic(path, i.conf, 0o644); err != nil {
		return written, fmt.Errorf("install the CNI configuration: %w", err)
	}
	if changed {
		written = append(written, path)
	}
	return written, nil
}

// writeAtomic makes path hold data with mode, and reports whether it wrote.
func writeAtomic(path string, data []byte, mode fs.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm() == mode {
			return false, nil
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return false, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	done = true
	return true, nil
}

// How often the installer looks again: every second until the configuration is in
// place, then rarely, to put back what someone removed.
const (
	cniInstallRetry  = time.Second
	cniInstallResync = time.Minute
)

// run syncs until ctx ends, logging what it writes and why it fails.
func (i *cniInstall) run(ctx context.Context, ready func() bool, log logr.Logger) error {
	installed := false
	lastErr := ""
	for {
		r := ready()
		written, err := i.Sync(r)
		if len(written) > 0 {
			log.Info("installed the CNI plugin", "files", written)
		}
		switch {
		case err != nil && err.Error() != lastErr:
			log.Error(err, "CNI plugin not installed")
			lastErr = err.Error()
		case err == nil:
			lastErr = ""
			installed = installed || r
		}
		wait := cniInstallResync
		if !installed || err != nil {
			wait = cniInstallRetry
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// cniInstaller runs the installation on every replica: each agent installs on its node.
type cniInstaller struct {
	install *cniInstall
	ready   func() bool
	log     logr.Logger
}

func (c cniInstaller) NeedLeaderElection() bool { return false }

func (c cniInstaller) Start(ctx context.Context) error { return c.install.run(ctx, c.ready, c.log) }
