package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/ovnk/ovnk/pkg/agent/config"
)

// The agent installs the CNI plugin on its node as ovnkube-node does: the binary into
// the runtime's plugin directory at once, and the network configuration only once the
// node can wire pods (its zone applied, its own part in order), since kubelet reports
// the node's network ready as soon as a CNI configuration exists. The configuration is
// left in place when the agent stops: the runtime needs it to tear pods down (DEL)
// while the agent is away.
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
	// swept says the temporary files an earlier agent left have been removed.
	swept bool
}

// newCNIInstall is the installation cfg asks for, or nil when cni-plugin is empty.
func newCNIInstall(cfg *config.Config) (*cniInstall, error) {
	if cfg.CNIPlugin == "" {
		return nil, nil
	}
	conf, err := conflist(cfg.CNISocket, cfg.OVSEndpoint)
	if err != nil {
		return nil, err
	}
	return &cniInstall{plugin: cfg.CNIPlugin, binDir: cfg.CNIBinDir, confDir: cfg.CNIConfDir, conf: conf}, nil
}

// conflist is the network configuration list the runtime reads: one plugin, told the
// agent's socket and the node's OVS database.
func conflist(agentSocket, ovsAddress string) ([]byte, error) {
	type plugin struct {
		Type        string `json:"type"`
		AgentSocket string `json:"agentSocket"`
		OVSAddress  string `json:"ovsAddress"`
	}
	b, err := json.MarshalIndent(struct {
		CNIVersion string   `json:"cniVersion"`
		Name       string   `json:"name"`
		Plugins    []plugin `json:"plugins"`
	}{cniVersion, cniNetwork, []plugin{{Type: cniPluginName, AgentSocket: agentSocket, OVSAddress: ovsAddress}}}, "", "  ")
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
// place: pods would only fail on a missing plugin. Both directories must exist: in a
// pod they are the host's, mounted, and a directory created inside the container would
// install nothing the runtime sees. The first Sync removes the temporary files an
// agent that died while writing left behind.
func (i *cniInstall) Sync(ready bool) ([]string, error) {
	for _, d := range []struct{ setting, dir string }{{"cni-bin-dir", i.binDir}, {"cni-conf-dir", i.confDir}} {
		if err := checkMounted(d.setting, d.dir); err != nil {
			return nil, err
		}
	}
	if !i.swept {
		if err := errors.Join(sweepTemporary(i.binDir, cniPluginName), sweepTemporary(i.confDir, cniConfFile)); err != nil {
			return nil, err
		}
		i.swept = true
	}
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

// checkMounted fails unless dir, the value of setting, is a directory, saying how to
// provide it.
func checkMounted(setting, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s does not exist: mount the host's %s there, as the DaemonSet does", setting, dir, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %w", setting, dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s is not a directory: mount the host's %s there, as the DaemonSet does", setting, dir, dir)
	}
	return nil
}

// temporaryPattern is the name writeAtomic gives the temporary file of base, for
// os.CreateTemp and filepath.Match.
func temporaryPattern(base string) string { return "." + base + ".*" }

// sweepTemporary removes the temporary files of base in dir that a writeAtomic
// interrupted by the agent's death left behind.
func sweepTemporary(dir, base string) error {
	left, err := filepath.Glob(filepath.Join(dir, temporaryPattern(base)))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range left {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove the temporary file %s of an earlier install: %w", f, err))
		}
	}
	return errors.Join(errs...)
}

// writeAtomic makes path hold data with mode, and reports whether it wrote.
func writeAtomic(path string, data []byte, mode fs.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm() == mode {
			return false, nil
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), temporaryPattern(filepath.Base(path)))
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
