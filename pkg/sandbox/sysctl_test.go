package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKernelSettingsOverlappingSandboxes starts two sandboxes one after the other and
// takes them down in the same order: the values from before the first one's kubelets
// come back only when the last one goes, whatever its kubelets changed meanwhile.
func TestKernelSettingsOverlappingSandboxes(t *testing.T) {
	oldState, oldProc := kernelStateDir, procSys
	t.Cleanup(func() { kernelStateDir, procSys = oldState, oldProc })
	kernelStateDir, procSys = t.TempDir(), t.TempDir()
	set := func(value string) {
		for _, k := range kernelSettings {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(procSys, k)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(procSys, k), []byte(value+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when, want string) {
		t.Helper()
		for _, k := range kernelSettings {
			data, err := os.ReadFile(filepath.Join(procSys, k))
			if err != nil || string(data) != want+"\n" {
				t.Errorf("%s: %s = %q (%v), want %q", when, k, data, err, want)
			}
		}
	}
	sandboxAt := func() *Sandbox {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, markerFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return &Sandbox{Dir: dir}
	}
	set("0")
	first, second := sandboxAt(), sandboxAt()
	if err := first.saveKernelSettings(); err != nil {
		t.Fatal(err)
	}
	set("10") // the first sandbox's kubelets
	if err := second.saveKernelSettings(); err != nil {
		t.Fatal(err)
	}
	if err := restoreKernelSettings(first.Dir); err != nil {
		t.Fatal(err)
	}
	check("the first sandbox down, the second running", "10")
	if err := restoreKernelSettings(second.Dir); err != nil {
		t.Fatal(err)
	}
	check("both down", "0")

	// A sandbox whose directory was removed by hand no longer counts.
	set("0")
	gone := sandboxAt()
	if err := gone.saveKernelSettings(); err != nil {
		t.Fatal(err)
	}
	set("10")
	if err := os.Remove(filepath.Join(gone.Dir, markerFile)); err != nil {
		t.Fatal(err)
	}
	last := sandboxAt()
	if err := last.saveKernelSettings(); err != nil {
		t.Fatal(err)
	}
	if err := restoreKernelSettings(last.Dir); err != nil {
		t.Fatal(err)
	}
	check("the last live sandbox down", "0") // the removed one's record: from before any kubelet
}
