package ovnroot

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fakeRoot lays out a root as scripts/ovn-root.sh does, with launchers that print what
// the real programs print for --version, so the checks run without the real root.
func fakeRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, text string, mode os.FileMode) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(".ovnk-root", recipe+"\novn-central 25.03.0-1\nopenvswitch-switch 3.5.0-1+b1\n", 0o644)
	for _, s := range []Schema{NBSchema, SBSchema, VSwitchSchema} {
		write(string(s), "{}", 0o644)
	}
	write("bin/ovn-northd", "#!/bin/sh\nprintf 'ovn-northd 25.03.0\\nOpen vSwitch Library 3.5.0\\n'\n", 0o755)
	write("bin/ovs-vswitchd", "#!/bin/sh\nprintf 'ovs-vswitchd (Open vSwitch) 3.5.0\\n'\n", 0o755)
	write("usr/bin/ovn-northd", "", 0o755)
	write("usr/lib/openvswitch-switch/ovs-vswitchd", "", 0o755)
	write(programsFile, "ovn-northd usr/bin/ovn-northd\novs-vswitchd usr/lib/openvswitch-switch/ovs-vswitchd\n", 0o644)
	return dir
}

func TestOpenCompleteRoot(t *testing.T) {
	dir := fakeRoot(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Schema(SBSchema), filepath.Join(dir, "usr/share/ovn/ovn-sb.ovsschema"); got != want {
		t.Errorf("SB schema at %s, want %s", got, want)
	}
	if p, err := r.Program("ovn-northd"); err != nil || p != filepath.Join(dir, "bin", "ovn-northd") {
		t.Errorf("Program(ovn-northd) = %q, %v", p, err)
	}
	v, err := r.Versions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v != "ovn 25.03.0, ovs 3.5.0" {
		t.Errorf("Versions() = %q", v)
	}
}

// An incomplete or outdated root is refused with the command that rebuilds it, never
// used: an interrupted provisioning leaves no stamp, and a lost file fails the check.
func TestOpenRefusesIncompleteRoots(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
		want  string
	}{
		{"no stamp", func(dir string) error { return os.Remove(filepath.Join(dir, ".ovnk-root")) }, "no OVN 25.03 root at"},
		{"older recipe", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, ".ovnk-root"), []byte("recipe 0\n"), 0o644)
		}, "older recipe"},
		{"schema lost", func(dir string) error { return os.Remove(filepath.Join(dir, string(SBSchema))) }, "incomplete"},
		{"binary lost", func(dir string) error { return os.Remove(filepath.Join(dir, "usr/bin/ovn-northd")) }, "incomplete"},
		{"no program list", func(dir string) error { return os.Remove(filepath.Join(dir, programsFile)) }, "incomplete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeRoot(t)
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "scripts/ovn-root.sh") {
				t.Errorf("Open = %v, want an error naming %s, %q and scripts/ovn-root.sh", err, dir, tc.want)
			}
		})
	}
}

func TestProgramMissingOrNotExecutable(t *testing.T) {
	dir := fakeRoot(t)
	if err := os.Chmod(filepath.Join(dir, "bin", "ovn-northd"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ovn-trace", "ovn-northd"} {
		if _, err := r.Program(name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Program(%s) = %v, want an error naming it", name, err)
		}
	}
	if _, err := r.Versions(context.Background()); err == nil {
		t.Error("Versions succeeded without a runnable ovn-northd")
	}
}

func TestFindPrefersTheEnvironment(t *testing.T) {
	dir := fakeRoot(t)
	t.Setenv(Env, dir)
	r, err := Find()
	if err != nil || r.Dir != dir {
		t.Errorf("Find() = %+v, %v; want the root at %s", r, err, dir)
	}
	t.Setenv(Env, "")
	t.Setenv("OVNK_CACHE_DIR", "/cache")
	if got, err := DefaultDir(); err != nil || got != "/cache/ovn-trixie" {
		t.Errorf("DefaultDir() = %q, %v with OVNK_CACHE_DIR=/cache", got, err)
	}
	t.Setenv("OVNK_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "OVNK_CACHE_DIR") {
		t.Errorf("Find() without HOME = %v, want an error naming what to set", err)
	}
}

// The script that makes roots and this package must agree on the recipe, the
// programs and the schemas: each is written in both, and this holds them together.
func TestScriptAgrees(t *testing.T) {
	b, err := os.ReadFile("../../scripts/ovn-root.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	if m := regexp.MustCompile(`(?m)^RECIPE=(\d+)$`).FindStringSubmatch(script); m == nil || "recipe "+m[1] != recipe {
		t.Errorf("scripts/ovn-root.sh has RECIPE %v, pkg/ovnroot wants %q", m, recipe)
	}
	m := regexp.MustCompile(`(?s)\nPROGRAMS=\(([^)]*)\)`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("no PROGRAMS=(…) in scripts/ovn-root.sh")
	}
	if got := strings.Fields(m[1]); !slices.Equal(got, Programs) {
		t.Errorf("scripts/ovn-root.sh PROGRAMS %v, pkg/ovnroot Programs %v", got, Programs)
	}
	for _, want := range []string{string(NBSchema), string(SBSchema), string(VSwitchSchema), stampFile, programsFile} {
		if !strings.Contains(script, want) {
			t.Errorf("scripts/ovn-root.sh never names %s", want)
		}
	}
}
