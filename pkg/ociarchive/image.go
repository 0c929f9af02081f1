// Package ociarchive writes container images as OCI image-layout archives, with the
// standard library only, so a cluster on this machine gets its images without a
// registry: `ctr -n k8s.io images import FILE` reads them.
//
// An archive holds one image for one platform (linux and the architecture this program
// was built for) with one uncompressed layer: the tar `oci-layout`, `index.json` and
// `blobs/sha256/<digest>` for the layer, the image config and the manifest. The
// manifest's entry in the index carries the annotations containerd and the OCI layout
// name images by, so an import needs no --base-name.
//
// Archives are deterministic: every entry has the same modification time, owner 0:0 and
// a fixed order, so the same inputs give the same bytes and the image's digest changes
// only when its content does. A runtime then sees a rebuilt but unchanged image as the
// image it already has.
package ociarchive

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"time"
)

// Epoch is the modification time of every entry of an archive and of its layer.
var Epoch = time.Unix(0, 0).UTC()

// Image describes an image to write.
type Image struct {
	// Name is the full reference, such as ovnk.local/ovnk-agent:dev. It must carry a
	// domain (a first component with a dot or a port, or localhost) and a tag: CRI
	// expands a short name like pause:dev to docker.io/library/pause:dev and would then
	// not find the image imported under the short one.
	Name string
	// Files are the image's files, directories and symbolic links. Parent directories
	// that are not listed are created with mode 0755.
	Files []File
	// Config is what a runtime starts the image with.
	Config Config
}

// Config is the part of the OCI image configuration that says how to run the image.
// Empty fields are left out.
type Config struct {
	// Entrypoint and Cmd are the command: Kubernetes' command replaces Entrypoint,
	// its args replace Cmd.
	Entrypoint []string
	Cmd        []string
	// Env holds KEY=value pairs. Runtimes add a default PATH when it names none.
	Env []string
	// WorkingDir is the directory the command starts in; "/" when empty.
	WorkingDir string
	// User is the user (and group) to run as, such as "0" or "65534:65534".
	User string
}

// Kind is what a File is.
type Kind int

// The kinds of File.
const (
	Regular Kind = iota
	Directory
	Symlink
)

// String names the kind as errors show it: file, directory, symlink.
func (k Kind) String() string {
	switch k {
	case Regular:
		return "file"
	case Directory:
		return "directory"
	case Symlink:
		return "symlink"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// File is an entry of the image's layer. The constructors FromDisk, FromBytes, Dir and
// Link make the four usual cases.
type File struct {
	// Path is the absolute, clean path in the image, such as /usr/bin/ovs-ofctl.
	Path string
	// Kind says whether this is a file, a directory or a symbolic link.
	Kind Kind
	// Mode is the mode as chmod takes it: permissions with the setuid (0o4000), setgid
	// (0o2000) and sticky (0o1000) bits; Go's fs.ModeSetuid, fs.ModeSetgid and
	// fs.ModeSticky mean the same. Zero means: the source file's mode for a file from
	// disk, 0644 for a file from bytes, 0755 for a directory. Symbolic links are always
	// 0777.
	Mode fs.FileMode
	// Source is the file on disk whose content a Regular file gets; symbolic links on
	// the way are followed. Empty means the content is Data.
	Source string
	// Data is the content of a Regular file without Source.
	Data []byte
	// Target is what a Symlink points to, absolute (resolved inside the image) or
	// relative to the link's directory.
	Target string
}

// FromDisk is a file of the image with the content of the file src on disk; mode 0
// keeps src's permissions.
func FromDisk(imagePath, src string, mode fs.FileMode) File {
	return File{Path: imagePath, Kind: Regular, Source: src, Mode: mode}
}

// FromBytes is a file of the image with the given content; mode 0 means 0644.
func FromBytes(imagePath string, data []byte, mode fs.FileMode) File {
	return File{Path: imagePath, Kind: Regular, Data: data, Mode: mode}
}

// Dir is a directory of the image; mode 0 means 0755. Only directories that need
// another mode (such as /tmp, 01777) or must exist empty need listing.
func Dir(imagePath string, mode fs.FileMode) File {
	return File{Path: imagePath, Kind: Directory, Mode: mode}
}

// Link is a symbolic link of the image at imagePath pointing to target.
func Link(imagePath, target string) File {
	return File{Path: imagePath, Kind: Symlink, Target: target}
}

// modeBits is what a File's Mode may hold: chmod's bits, and Go's names of three.
const modeBits = 0o7777 | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// checkPath refuses paths that are not absolute and clean, the root itself, and
// whiteout names, which a runtime would read as deleting a file of a lower layer.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is not absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean (it would be %q)", p, path.Clean(p))
	case p == "/":
		return fmt.Errorf("path %q is the image's root", p)
	}
	for _, part := range strings.Split(p[1:], "/") {
		if strings.HasPrefix(part, ".wh.") {
			return fmt.Errorf("path %q has a whiteout name (%s)", p, part)
		}
	}
	return nil
}

// checkFile checks one File on its own (not its source on disk, which writing opens).
func checkFile(f File) error {
	if err := checkPath(f.Path); err != nil {
		return err
	}
	if f.Mode&^modeBits != 0 {
		return fmt.Errorf("%s: mode %v has bits beyond chmod's 0o7777", f.Path, f.Mode)
	}
	switch f.Kind {
	case Regular:
		if f.Source != "" && f.Data != nil {
			return fmt.Errorf("%s: both a source (%s) and data", f.Path, f.Source)
		}
	case Directory:
		if f.Source != "" || f.Data != nil || f.Target != "" {
			return fmt.Errorf("%s: a directory has no source, data or target", f.Path)
		}
	case Symlink:
		if f.Target == "" {
			return fmt.Errorf("%s: symlink without a target", f.Path)
		}
		if f.Source != "" || f.Data != nil {
			return fmt.Errorf("%s: a symlink has no source or data", f.Path)
		}
	default:
		return fmt.Errorf("%s: unknown kind %v", f.Path, f.Kind)
	}
	return nil
}

// A reference's parts (after the grammar of github.com/distribution/reference): a
// domain, lowercase path components, and a tag.
var (
	domainRe    = regexp.MustCompile(`^(localhost|[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*)(:[0-9]+)?$`)
	componentRe = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)
	tagRe       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// SplitName splits a full image name into its repository and tag
// ("ovnk.local/pause:dev" → "ovnk.local/pause", "dev"). It fails unless the name has a
// domain, valid path components and a tag.
func SplitName(name string) (repo, tag string, err error) {
	slash := strings.LastIndex(name, "/")
	colon := strings.LastIndex(name, ":")
	if slash < 0 {
		return "", "", fmt.Errorf("image name %q has no domain (such as ovnk.local/): runtimes would look for it on docker.io", name)
	}
	if colon < slash {
		return "", "", fmt.Errorf("image name %q has no tag (such as :dev)", name)
	}
	repo, tag = name[:colon], name[colon+1:]
	if strings.Contains(name, "@") {
		return "", "", fmt.Errorf("image name %q has a digest: name the image by a tag", name)
	}
	if !tagRe.MatchString(tag) {
		return "", "", fmt.Errorf("image name %q: bad tag %q", name, tag)
	}
	parts := strings.Split(repo, "/")
	domain := parts[0]
	if !domainRe.MatchString(domain) || (domain != "localhost" && !strings.ContainsAny(domain, ".:")) {
		return "", "", fmt.Errorf("image name %q: %q is not a domain (it needs a dot or a port, or is localhost): runtimes would look for it on docker.io", name, domain)
	}
	if len(parts) < 2 {
		return "", "", fmt.Errorf("image name %q has a domain but no repository", name)
	}
	for _, c := range parts[1:] {
		if !componentRe.MatchString(c) {
			return "", "", fmt.Errorf("image name %q: bad path component %q (lowercase letters, digits and separators)", name, c)
		}
	}
	return repo, tag, nil
}
