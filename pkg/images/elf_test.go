package images

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ociarchive"
	"github.com/ovnk/ovnk/pkg/ovnroot"
	"github.com/ovnk/ovnk/test/testenv"
)

// mkTree makes a root file system in a temporary directory: files (path → content) and
// symbolic links (path → "-> target").
func mkTree(t *testing.T, entries map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, v := range entries {
		host := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(v, "-> "); ok {
			err = os.Symlink(target, host)
		} else {
			err = os.WriteFile(host, []byte(v), 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTreeRealStaysInside(t *testing.T) {
	tr := tree{dir: mkTree(t, map[string]string{
		"/usr/lib/openvswitch-switch/ovs-vswitchd": "real",
		"/etc/alternatives/ovs-vswitchd":           "-> /usr/lib/openvswitch-switch/ovs-vswitchd",
		"/usr/sbin/ovs-vswitchd":                   "-> /etc/alternatives/ovs-vswitchd",
		"/usr/lib/x86_64-linux-gnu/ld.so":          "loader",
		"/usr/lib64/ld.so":                         "-> ../lib/x86_64-linux-gnu/ld.so",
		"/usr/lib/x86_64-linux-gnu/libz.so.1":      "-> libz.so.1.3",
		"/usr/lib/x86_64-linux-gnu/libz.so.1.3":    "z",
		"/escape":                                  "-> ../../../../etc/passwd",
		"/loop/a":                                  "-> b",
		"/loop/b":                                  "-> a",
	})}
	for p, want := range map[string]string{
		// An absolute target is the tree's, not the host's (where it may not exist).
		"/usr/sbin/ovs-vswitchd":              "/usr/lib/openvswitch-switch/ovs-vswitchd",
		"/usr/lib64/ld.so":                    "/usr/lib/x86_64-linux-gnu/ld.so",
		"/usr/lib/x86_64-linux-gnu/libz.so.1": "/usr/lib/x86_64-linux-gnu/libz.so.1.3",
		"/usr/lib/../lib64/ld.so":             "/usr/lib/x86_64-linux-gnu/ld.so",
	} {
		if got, err := tr.real(p); err != nil || got != want {
			t.Errorf("real(%s) = %q, %v; want %s", p, got, err, want)
		}
	}
	// ".." stops at the tree's root, as it does at /, so the host's /etc is not reached.
	if got, err := tr.real("/escape"); err == nil {
		t.Errorf("real(/escape) = %s, want an error: the tree has no /etc/passwd", got)
	}
	if _, err := tr.real("/loop/a"); err == nil || !strings.Contains(err.Error(), "more than 40 symbolic links") {
		t.Errorf("real(/loop/a) = %v, want too many links", err)
	}
}

// dynamicHostProgram returns a program of the host linked against its C library.
func dynamicHostProgram(t *testing.T) string {
	t.Helper()
	p := testenv.NeedBinaries(t, "true")["true"]
	f, err := elf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if interp, _ := interpreter(f); interp == "" {
		testenv.Missing(t, "%s is static; a dynamic program is needed", p)
	}
	return p
}

// TestDynamicProgram puts a program of the host (Debian bookworm, glibc 2.36) into the
// agent image: it gets the C library of the OVN root (trixie, newer, so compatible),
// from the root, not from the host.
func TestDynamicProgram(t *testing.T) {
	in := testInputs(t)
	in.Agent = dynamicHostProgram(t)
	img, err := Agent(in)
	if err != nil {
		t.Fatal(err)
	}
	libc := findFile(img, "/usr/lib/x86_64-linux-gnu/libc.so.6")
	if libc == nil || !strings.HasPrefix(libc.Source, in.OVNRoot.Dir+"/") {
		t.Errorf("libc.so.6 in the image: %+v, want the OVN root's", libc)
	}
	if f := findFile(img, AgentPath); f == nil || f.Source != in.Agent {
		t.Errorf("%s in the image: %+v, want %s", AgentPath, f, in.Agent)
	}
}

func findFile(img ociarchive.Image, p string) *ociarchive.File {
	for i := range img.Files {
		if img.Files[i].Path == p {
			return &img.Files[i]
		}
	}
	return nil
}

func TestRecipesRefuseBadInputs(t *testing.T) {
	in := testInputs(t)
	dynamic := dynamicHostProgram(t)
	ofctl, err := os.ReadFile(filepath.Join(in.OVNRoot.Dir, "usr/bin/ovs-ofctl"))
	if err != nil {
		t.Fatal(err)
	}
	loader, err := os.ReadFile(filepath.Join(in.OVNRoot.Dir, "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"))
	if err != nil {
		t.Fatal(err)
	}
	noLoader := mkTree(t, map[string]string{"/usr/bin/ovs-ofctl": string(ofctl)})
	noLibraries := mkTree(t, map[string]string{
		"/usr/bin/ovs-ofctl":                             string(ofctl),
		"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2": string(loader),
		"/usr/lib64/ld-linux-x86-64.so.2":                "-> ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	})
	for _, tc := range []struct {
		name   string
		change func(*Inputs)
		recipe func(Inputs) (ociarchive.Image, error)
		want   string
	}{
		{"busybox missing", func(in *Inputs) { in.Busybox = "/nonexistent/busybox" }, TestApp,
			"image ovnk.local/ovnk-testapp:dev: busybox /nonexistent/busybox does not exist: install Debian's busybox-static"},
		{"busybox dynamic", func(in *Inputs) { in.Busybox = dynamic }, Agent, "busybox " + dynamic + " is dynamically linked"},
		{"pause dynamic", func(in *Inputs) { in.Pause = dynamic }, Pause,
			"image ovnk.local/pause:dev: pause binary " + dynamic + " is dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2), and its image has no C library: build it static (CGO_ENABLED=0)"},
		{"test app missing", func(in *Inputs) { in.TestApp = "/nonexistent/testapp" }, TestApp, "test app binary /nonexistent/testapp: open"},
		{"agent missing", func(in *Inputs) { in.Agent = "/nonexistent/agent" }, Agent, "agent binary: /usr/bin/ovnk-agent: open /nonexistent/agent"},
		{"no CNI plugin", func(in *Inputs) { in.CNI = "" }, Agent, "no CNI plugin binary given"},
		{"CNI plugin dynamic", func(in *Inputs) { in.CNI = dynamic }, Agent,
			"CNI plugin binary " + dynamic + " is dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2), and it runs on the node, outside the image and its libraries"},
		{"no OVN root", func(in *Inputs) { in.OVNRoot = ovnroot.Root{} }, Agent, "no OVN root given"},
		{"root without the tools", func(in *Inputs) { in.OVNRoot = ovnroot.Root{Dir: t.TempDir()} }, Agent, "/usr/bin/ovs-ofctl in the OVN root"},
		{"root without the loader", func(in *Inputs) { in.OVNRoot = ovnroot.Root{Dir: noLoader} }, Agent,
			"interpreter /lib64/ld-linux-x86-64.so.2 of /usr/bin/ovs-ofctl, in the OVN root " + noLoader},
		{"root without the libraries", func(in *Inputs) { in.OVNRoot = ovnroot.Root{Dir: noLibraries} }, Agent,
			"library libbpf.so.1, needed by /usr/bin/ovs-ofctl: not in [/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib /usr/lib] of the OVN root " + noLibraries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := in
			tc.change(&bad)
			_, err := tc.recipe(bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("recipe = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// WriteAll stops at the first bad image and writes nothing for it.
	bad := in
	bad.Busybox = "/nonexistent/busybox"
	dir := t.TempDir()
	if _, err := WriteAll(dir, bad); err == nil {
		t.Error("WriteAll with a missing busybox succeeded")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("WriteAll failed and left %v", left)
	}
}
