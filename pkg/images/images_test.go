package images

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/ociarchive"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain removes the binaries the tests built (testenv.Command) once they are done.
func TestMain(m *testing.M) { os.Exit(testenv.BuildsMain(m)) }

// testInputs builds the project's binaries and finds the OVN root and busybox. The
// agent and the CNI plugin are other packages' commands, under work of their own; a
// static Go program stands in for each (the test app for the agent, the pause program
// for the plugin), since the image only carries them. TestDynamicProgram covers
// programs that need a C library.
func testInputs(t *testing.T) Inputs {
	t.Helper()
	root := testenv.NeedOVN(t)
	if _, err := os.Stat(BusyboxPath); err != nil {
		testenv.Missing(t, "busybox-static: %v", err)
	}
	pause, testApp := testenv.Command(t, "ovnk-pause"), testenv.Command(t, "ovnk-testapp")
	return Inputs{Agent: testApp, CNI: pause, Pause: pause, TestApp: testApp, Busybox: BusyboxPath, OVNRoot: root}
}

// layer is an image's layer as read back: headers by path (without the leading
// slash), and the interpreter and needed libraries of each ELF file.
type layer struct {
	entries map[string]*tar.Header
	interp  map[string]string
	needed  map[string][]string
}

func readLayer(t *testing.T, archive string) (ociarchive.Contents, layer) {
	t.Helper()
	l := layer{entries: map[string]*tar.Header{}, interp: map[string]string{}, needed: map[string][]string{}}
	scratch := filepath.Join(t.TempDir(), "elf")
	c, err := ociarchive.Read(context.Background(), archive, func(h *tar.Header, r io.Reader) error {
		name := strings.TrimSuffix(h.Name, "/")
		l.entries[name] = h
		if h.Typeflag != tar.TypeReg || h.Size < 4 {
			return nil
		}
		// Through a file, so debug/elf can seek without the whole program in memory.
		f, err := os.Create(scratch)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(f, r); err != nil {
			return err
		}
		ef, err := elf.NewFile(f)
		if err != nil {
			return nil // not ELF
		}
		if l.interp[name], err = interpreter(ef); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		l.needed[name], err = ef.ImportedLibraries()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

// resolve follows symbolic links inside the layer as the kernel would inside the
// container, and returns the header of what p names, or an error.
func (l layer) resolve(p string) (*tar.Header, error) {
	rest := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := ""
	for links := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			cur = strings.TrimPrefix(path.Dir("/"+cur), "/")
			continue
		}
		next := strings.TrimPrefix(path.Join(cur, part), "/")
		h, ok := l.entries[next]
		if !ok {
			return nil, fmt.Errorf("%s: no %s in the image", p, next)
		}
		if h.Typeflag == tar.TypeSymlink {
			if links++; links > 40 {
				return nil, fmt.Errorf("%s: too many links", p)
			}
			if path.IsAbs(h.Linkname) {
				cur = ""
			}
			rest = append(strings.Split(h.Linkname, "/"), rest...)
			continue
		}
		cur = next
	}
	h, ok := l.entries[cur]
	if !ok {
		return nil, fmt.Errorf("%s: names the image's root", p)
	}
	return h, nil
}

// checkSelfContained checks that every ELF program of the layer finds its interpreter
// and each library it needs inside the layer, where Debian's loader searches.
func (l layer) checkSelfContained(t *testing.T, image string) {
	t.Helper()
	triplet := machines[runtime.GOARCH].triplet
	dirs := []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"}
	for name, interp := range l.interp {
		if interp != "" {
			if h, err := l.resolve(interp); err != nil || h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
				t.Errorf("%s: /%s: interpreter %s: %v %v", image, name, interp, h, err)
			}
		}
		for _, lib := range l.needed[name] {
			found := false
			for _, d := range dirs {
				if h, err := l.resolve(d + "/" + lib); err == nil && h.Typeflag == tar.TypeReg {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: /%s needs %s, which is not in %v of the image", image, name, lib, dirs)
			}
		}
	}
}

func TestWriteAll(t *testing.T) {
	in := testInputs(t)
	built, err := WriteAll(t.TempDir(), in)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range built {
		names = append(names, b.Name)
	}
	if want := []string{AgentImage, PauseImage, TestAppImage}; !slices.Equal(names, want) {
		t.Fatalf("WriteAll built %v, want %v", names, want)
	}

	// The same inputs, the same images.
	again, err := WriteAll(t.TempDir(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range built {
		a, b := readFile(t, built[i].Archive), readFile(t, again[i].Archive)
		if !bytes.Equal(a, b) || built[i].Written != again[i].Written {
			t.Errorf("%s: two builds differ: %+v, %+v", built[i].Name, built[i].Written, again[i].Written)
		}
	}

	applets := []string{"sh", "ping", "ping6", "ip", "nc", "wget", "cat", "ls", "sleep", "ifconfig", "route", "hostname", "echo", "env", "ps", "kill"}
	for _, b := range built {
		t.Run(strings.Split(path.Base(b.Name), ":")[0], func(t *testing.T) {
			c, l := readLayer(t, b.Archive)
			if c.Name != b.Name || c.Digest != b.Digest {
				t.Errorf("archive says %s %s, WriteAll %s %s", c.Name, c.Digest, b.Name, b.Digest)
			}
			t.Logf("%s: %d entries, layer of %d bytes", b.Name, len(l.entries), c.LayerSize)
			want := map[string]string{} // path → "type mode" or "-> target"
			var entrypoint []string
			switch b.Name {
			case PauseImage:
				entrypoint = []string{"/pause"}
				want["pause"] = "0 0755"
				if len(l.entries) != 1 {
					t.Errorf("pause image holds %d entries, want /pause alone", len(l.entries))
				}
			case TestAppImage:
				entrypoint = []string{TestAppPath}
				want["usr/bin/ovnk-testapp"] = "0 0755"
			case AgentImage:
				want["usr/bin/ovnk-agent"] = "0 0755"
				want["usr/libexec/ovnk/ovnk-cni"] = "0 0755"
				for _, tool := range AgentTools {
					want["usr/bin/"+tool] = "0 0755"
				}
				want["lib64/ld-linux-x86-64.so.2"] = "-> ../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
				want["usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"] = "0 0755"
				want["run/openvswitch"] = "5 0755"
				want["var/run"] = "-> ../run"
				for name := range l.entries {
					if strings.HasPrefix(name, "usr/share") {
						t.Errorf("agent image holds %s: documentation and data have no place in it", name)
					}
				}
			}
			if b.Name != PauseImage {
				want["bin/busybox"] = "0 0755"
				want["tmp"] = "5 1777"
				for _, a := range applets {
					want["bin/"+a] = "-> busybox"
				}
				if !slices.Equal(c.Config.Env, []string{defaultPath}) {
					t.Errorf("Env %v, want %s", c.Config.Env, defaultPath)
				}
			}
			for p, w := range want {
				h, ok := l.entries[p]
				got := "missing"
				switch {
				case !ok:
				case h.Typeflag == tar.TypeSymlink:
					got = "-> " + h.Linkname
				default:
					got = fmt.Sprintf("%c %04o", h.Typeflag, h.Mode)
				}
				if got != w {
					t.Errorf("/%s: %s, want %s", p, got, w)
				}
			}
			if !slices.Equal(c.Config.Entrypoint, entrypoint) {
				t.Errorf("Entrypoint %q, want %q", c.Config.Entrypoint, entrypoint)
			}
			if b.Name != AgentImage {
				for name, interp := range l.interp {
					if interp != "" {
						t.Errorf("/%s is dynamically linked (%s) in an image without a C library", name, interp)
					}
				}
			}
			l.checkSelfContained(t, b.Name)
		})
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
