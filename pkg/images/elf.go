package images

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/ovnk/ovnk/pkg/ociarchive"
)

// An image with programs of the OVN root needs what the root's launchers give them:
// the root's dynamic loader, at the path the programs name as their interpreter, and
// every library they need, found where that loader looks (the multiarch directories).
// debug/elf reads both from the programs themselves, so nothing runs to find them
// and the image carries exactly the closure, not the whole root.

// machines is the ELF machine and the Debian multiarch triplet of each architecture
// an image can be built for.
var machines = map[string]struct {
	machine elf.Machine
	triplet string
}{
	"amd64": {elf.EM_X86_64, "x86_64-linux-gnu"},
	"arm64": {elf.EM_AARCH64, "aarch64-linux-gnu"},
}

// tree is an unpacked root file system, such as the OVN root.
type tree struct{ dir string }

// maxLinks bounds the symbolic links followed for one path, as the kernel's ELOOP does.
const maxLinks = 40

// real returns the path inside the tree that p (absolute) names once every symbolic
// link is followed. Absolute link targets are resolved inside the tree, not on the
// host: a Debian root has links like /usr/sbin/ovs-vswitchd → /etc/alternatives/….
func (t tree) real(p string) (string, error) {
	rest := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	links := 0
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part)
		fi, err := os.Lstat(filepath.Join(t.dir, next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: more than %d symbolic links in the root %s", p, maxLinks, t.dir)
		}
		target, err := os.Readlink(filepath.Join(t.dir, next))
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur, nil
}

// host is where the tree's path p is on the host.
func (t tree) host(p string) string { return filepath.Join(t.dir, p) }

// closure gathers programs with the loader and libraries they need from a tree.
type closure struct {
	tree    tree
	machine elf.Machine
	libDirs []string                   // where the loader looks, in its order
	files   map[string]ociarchive.File // by path in the image
	walked  map[string]bool            // host paths of ELF files whose needs are in
	found   map[string]bool            // library names resolved
}

func newClosure(dir string) (*closure, error) {
	m, ok := machines[runtime.GOARCH]
	if !ok {
		return nil, fmt.Errorf("no ELF machine known for architecture %s", runtime.GOARCH)
	}
	return &closure{
		tree:    tree{dir: dir},
		machine: m.machine,
		// The system search path of Debian's loader (`ld.so --help` lists it); an
		// image has no ld.so.cache, so this is all it searches.
		libDirs: []string{"/lib/" + m.triplet, "/usr/lib/" + m.triplet, "/lib", "/usr/lib"},
		files:   map[string]ociarchive.File{},
		walked:  map[string]bool{},
		found:   map[string]bool{},
	}, nil
}

// add puts a file into the image unless a file is already at its path.
func (c *closure) add(f ociarchive.File) {
	if _, ok := c.files[f.Path]; !ok {
		c.files[f.Path] = f
	}
}

// addProgram puts the program at src (on the host) into the image at imagePath, with
// everything it needs from the tree. A static program needs nothing.
func (c *closure) addProgram(imagePath, src string) error {
	c.add(ociarchive.FromDisk(imagePath, src, 0))
	return c.walk(src, imagePath)
}

// addTreeProgram puts the tree's program at p into the image at the same path.
func (c *closure) addTreeProgram(p string) error {
	real, err := c.tree.real(p)
	if err != nil {
		return fmt.Errorf("%s in the OVN root %s: %w", p, c.tree.dir, err)
	}
	return c.addProgram(p, c.tree.host(real))
}

// walk adds the interpreter and the libraries the ELF file at src needs.
func (c *closure) walk(src, name string) error {
	if c.walked[src] {
		return nil
	}
	c.walked[src] = true
	f, err := elf.Open(src)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	if f.Machine != c.machine {
		return fmt.Errorf("%s (%s) is for %v, the image for %v", name, src, f.Machine, c.machine)
	}
	interp, err := interpreter(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if interp != "" {
		if err := c.addInterpreter(interp, name); err != nil {
			return err
		}
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%s: dynamic section: %w", name, err)
	}
	sort.Strings(needed)
	for _, lib := range needed {
		if err := c.addLibrary(lib, name); err != nil {
			return err
		}
	}
	return nil
}

// addInterpreter adds the tree's loader at its path in the tree and, when a program
// names it elsewhere (/lib64/ld-linux-x86-64.so.2, which a merged-/usr root keeps in
// /usr/lib/<triplet>), a relative symbolic link at that name, as the tree has.
func (c *closure) addInterpreter(interp, neededBy string) error {
	real, err := c.tree.real(interp)
	if errors.Is(err, fs.ErrNotExist) && !strings.HasPrefix(interp, "/usr/") {
		real, err = c.tree.real("/usr" + interp) // merged /usr, its top-level links not kept
	}
	if err != nil {
		return fmt.Errorf("interpreter %s of %s, in the OVN root %s: %w", interp, neededBy, c.tree.dir, err)
	}
	c.addAt(interp, real)
	return c.walk(c.tree.host(real), interp)
}

// addAt adds the tree's file real at its own path and, when alias differs, a link to
// it at alias.
func (c *closure) addAt(alias, real string) {
	c.add(ociarchive.FromDisk(real, c.tree.host(real), 0))
	if alias != real {
		c.add(ociarchive.Link(alias, relativeLink(alias, real)))
	}
}

// addLibrary finds a DT_NEEDED library as the loader would: the first file of that
// name for the same machine in its search path. The image gets it at the real path of
// the directory it was found in; when that name is a link (libcap-ng.so.0 →
// libcap-ng.so.0.0.0), the link too.
func (c *closure) addLibrary(lib, neededBy string) error {
	if c.found[lib] {
		return nil
	}
	if strings.Contains(lib, "/") {
		return fmt.Errorf("%s needs %s by path: only names in the search path are supported", neededBy, lib)
	}
	for _, dir := range c.libDirs {
		realDir, err := c.tree.real(dir)
		if err != nil {
			continue // not in this tree
		}
		real, err := c.tree.real(path.Join(realDir, lib))
		if err != nil || !c.sameMachine(c.tree.host(real)) {
			continue
		}
		c.found[lib] = true
		c.addAt(path.Join(realDir, lib), real)
		return c.walk(c.tree.host(real), lib)
	}
	return fmt.Errorf("library %s, needed by %s: not in %v of the OVN root %s", lib, neededBy, c.libDirs, c.tree.dir)
}

// sameMachine reports whether the file is an ELF file for the image's machine; the
// loader skips others of the same name.
func (c *closure) sameMachine(p string) bool {
	f, err := elf.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Machine == c.machine
}

// interpreter returns the program interpreter an ELF file names (PT_INTERP), or "" for
// a static one.
func interpreter(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			return "", fmt.Errorf("read PT_INTERP: %w", err)
		}
		return strings.TrimRight(string(b), "\x00"), nil
	}
	return "", nil
}

// checkStatic fails unless the file at p is a static ELF program for the image's
// architecture; why says what a dynamic one would lack.
func checkStatic(what, p, why string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, p, err)
	}
	defer f.Close()
	if m := machines[runtime.GOARCH].machine; f.Machine != m {
		return fmt.Errorf("%s %s is for %v, the image for %v", what, p, f.Machine, m)
	}
	interp, err := interpreter(f)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, p, err)
	}
	if interp != "" {
		return fmt.Errorf("%s %s is dynamically linked (interpreter %s), and %s: build it static (CGO_ENABLED=0)", what, p, interp, why)
	}
	return nil
}

// relativeLink is the target of a link at from that points to to, relative to from's
// directory, so the link resolves the same inside the image and in a copy of it.
func relativeLink(from, to string) string {
	rel, err := filepath.Rel(path.Dir(from), to)
	if err != nil {
		return to // both absolute: cannot happen; an absolute target still works in the image
	}
	return filepath.ToSlash(rel)
}
