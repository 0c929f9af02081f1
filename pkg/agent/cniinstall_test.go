package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/poll"
)

// inode is a file's inode number: a file replaced by rename gets a new one, a file
// written in place keeps it.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// mkdirs creates directories, as the DaemonSet's host mounts provide them.
func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCNIInstall installs into a temporary directory: the binary at once, atomically
// and only when it differs; the configuration only once the agent is ready, and with
// what the plugin needs to reach the agent and OVS.
func TestCNIInstall(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(dir, "image", "ovnk-cni")
	if err := os.MkdirAll(filepath.Dir(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\necho v1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		HTTPAddress: ":9476", OVSEndpoint: "unix:/var/run/openvswitch/db.sock", CNISocket: "/var/run/ovnk/cni.sock",
		CNIPlugin: plugin, CNIBinDir: filepath.Join(dir, "opt/cni/bin"), CNIConfDir: filepath.Join(dir, "etc/cni/net.d"),
	}
	mkdirs(t, cfg.CNIBinDir, cfg.CNIConfDir)
	// What an agent killed while installing leaves: its temporary files, which the
	// runtime ignores (no .conflist or plugin name) and the first Sync removes.
	leftovers := []string{filepath.Join(cfg.CNIBinDir, ".ovnk-cni.123456"), filepath.Join(cfg.CNIConfDir, ".10-ovnk.conflist.654321")}
	for _, f := range leftovers {
		if err := os.WriteFile(f, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	loopback := filepath.Join(cfg.CNIBinDir, "loopback")
	if err := os.WriteFile(loopback, []byte("not ours"), 0o755); err != nil {
		t.Fatal(err)
	}
	install, err := newCNIInstall(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(cfg.CNIBinDir, "ovnk-cni")
	conf := filepath.Join(cfg.CNIConfDir, "10-ovnk.conflist")

	// Not ready: the binary, no configuration (kubelet would call the node's network
	// ready).
	written, err := install.Sync(false)
	if err != nil || !slices.Equal(written, []string{bin}) {
		t.Fatalf("Sync before ready wrote %v, %v; want the binary only", written, err)
	}
	if _, err := os.Stat(conf); !os.IsNotExist(err) {
		t.Errorf("the configuration exists before the agent is ready: %v", err)
	}
	for _, f := range leftovers {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("the temporary file %s of an earlier install is still there: %v", f, err)
		}
	}
	if _, err := os.Stat(loopback); err != nil {
		t.Errorf("the sweep removed another plugin: %v", err)
	}
	if got, err := os.ReadFile(bin); err != nil || string(got) != "#!/bin/sh\necho v1\n" {
		t.Errorf("installed binary %q, %v", got, err)
	}
	if st, err := os.Stat(bin); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("installed binary's mode: %v, %v; want 0755", st.Mode(), err)
	}
	before := inode(t, bin)
	if written, err := install.Sync(false); err != nil || len(written) != 0 {
		t.Errorf("Sync with nothing to do wrote %v, %v", written, err)
	}
	if inode(t, bin) != before {
		t.Error("an identical binary was written again")
	}

	// Ready: the configuration.
	written, err = install.Sync(true)
	if err != nil || !slices.Equal(written, []string{conf}) {
		t.Fatalf("Sync once ready wrote %v, %v; want the configuration only", written, err)
	}
	var got map[string]any
	raw, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("configuration %s: %v", raw, err)
	}
	want := map[string]any{
		"cniVersion": "1.0.0", "name": "ovnk",
		"plugins": []any{map[string]any{"type": "ovnk-cni", "agentSocket": "/var/run/ovnk/cni.sock", "ovsAddress": "unix:/var/run/openvswitch/db.sock"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configuration %s\nwant %v", raw, want)
	}
	if written, err := install.Sync(true); err != nil || len(written) != 0 {
		t.Errorf("second Sync once ready wrote %v, %v", written, err)
	}

	// A new plugin replaces the old one by rename: a plugin running from the old file
	// keeps it, and the runtime never runs half a file. No temporary file is left.
	old, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\necho v2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if written, err := install.Sync(true); err != nil || !slices.Equal(written, []string{bin}) {
		t.Fatalf("Sync after an upgrade wrote %v, %v; want the binary", written, err)
	}
	if inode(t, bin) == before {
		t.Error("the binary was rewritten in place, not replaced")
	}
	oldContent := make([]byte, 64)
	n, _ := old.Read(oldContent)
	if string(oldContent[:n]) != "#!/bin/sh\necho v1\n" {
		t.Errorf("the old binary, still open, reads %q", oldContent[:n])
	}
	for d, want := range map[string]int{cfg.CNIBinDir: 2, cfg.CNIConfDir: 1} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != want {
			t.Errorf("%s holds %v; want only the installed file (and loopback)", d, entries)
		}
	}

	// A plugin that cannot be read: an error naming it, and no configuration written.
	if err := os.Remove(conf); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(plugin); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Sync(true); err == nil {
		t.Error("Sync without the plugin binary: no error")
	}
	if _, err := os.Stat(conf); !os.IsNotExist(err) {
		t.Errorf("the configuration was written without the plugin: %v", err)
	}

	cfg.CNIPlugin = ""
	if install, err := newCNIInstall(cfg); err != nil || install != nil {
		t.Errorf("cni-plugin empty: %v, %v; want no installation", install, err)
	}
}

// A directory that is not there is not created: in the agent's pod it would be the
// container's own, which the runtime never reads. The error says what to mount.
func TestCNIInstallNeedsTheHostsDirectories(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(dir, "ovnk-cni")
	if err := os.WriteFile(plugin, []byte("plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{OVSEndpoint: "unix:/run/ovs/db.sock", CNISocket: "/var/run/ovnk/cni.sock",
		CNIPlugin: plugin, CNIBinDir: filepath.Join(dir, "opt/cni/bin"), CNIConfDir: filepath.Join(dir, "etc/cni/net.d")}
	install, err := newCNIInstall(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = install.Sync(true)
	want := "cni-bin-dir " + cfg.CNIBinDir + " does not exist: mount the host's " + cfg.CNIBinDir + " there, as the DaemonSet does"
	if err == nil || err.Error() != want {
		t.Errorf("Sync without the bin directory: %v; want %q", err, want)
	}
	mkdirs(t, cfg.CNIBinDir, filepath.Dir(cfg.CNIConfDir))
	if err := os.WriteFile(cfg.CNIConfDir, nil, 0o644); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	want = "cni-conf-dir " + cfg.CNIConfDir + " is not a directory: mount the host's " + cfg.CNIConfDir + " there"
	if _, err := install.Sync(true); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Sync with a file in the way of the configuration directory: %v; want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(cfg.CNIBinDir, "ovnk-cni")); err == nil {
		t.Error("the plugin was installed although a directory is missing")
	}
}

// The installer's loop writes the configuration as soon as the zone is ready, not
// before, and stops with its context.
func TestCNIInstallerWaitsForReady(t *testing.T) {
	dir := t.TempDir()
	plugin := filepath.Join(dir, "ovnk-cni")
	if err := os.WriteFile(plugin, []byte("plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	install, err := newCNIInstall(&config.Config{HTTPAddress: ":9476", OVSEndpoint: "unix:/run/ovs/db.sock", CNISocket: "/run/ovnk/cni.sock",
		CNIPlugin: plugin, CNIBinDir: filepath.Join(dir, "bin"), CNIConfDir: filepath.Join(dir, "net.d")})
	if err != nil {
		t.Fatal(err)
	}
	mkdirs(t, filepath.Join(dir, "bin"), filepath.Join(dir, "net.d"))
	var ready atomic.Bool
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- cniInstaller{install: install, ready: ready.Load, log: logr.Discard()}.Start(ctx) }()
	exists := func(path string) func(context.Context) error {
		return func(context.Context) error { _, err := os.Stat(path); return err }
	}
	if err := poll.Until(ctx, 10*time.Second, "the plugin binary", exists(filepath.Join(dir, "bin", "ovnk-cni"))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "net.d", "10-ovnk.conflist")); !os.IsNotExist(err) {
		t.Errorf("the configuration is there before the zone is ready: %v", err)
	}
	ready.Store(true)
	if err := poll.Until(ctx, 10*time.Second, "the configuration", exists(filepath.Join(dir, "net.d", "10-ovnk.conflist"))); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the installer ended with %v", err)
	}
}
