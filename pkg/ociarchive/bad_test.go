package ociarchive

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-binary")
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := FromBytes("/ok", nil, 0)
	for _, tc := range []struct {
		name  string
		image string // default ovnk.local/t:dev
		files []File
		want  string // in the error
	}{
		{name: "missing source", files: []File{FromDisk("/usr/bin/x", missing, 0)}, want: "/usr/bin/x: source " + missing + ": no such file or directory"},
		{name: "source is a directory", files: []File{FromDisk("/x", dir, 0)}, want: "source " + dir + " is not a regular file"},
		{name: "relative", files: []File{FromBytes("usr/bin/x", nil, 0)}, want: `path "usr/bin/x" is not absolute`},
		{name: "escaping", files: []File{FromBytes("/../etc/passwd", nil, 0)}, want: `path "/../etc/passwd" is not clean`},
		{name: "dot-dot inside", files: []File{FromBytes("/usr/../../x", nil, 0)}, want: "is not clean"},
		{name: "trailing slash", files: []File{Dir("/tmp/", 0)}, want: "is not clean"},
		{name: "root", files: []File{Dir("/", 0)}, want: "is the image's root"},
		{name: "empty path", files: []File{FromBytes("", nil, 0)}, want: "empty path"},
		{name: "whiteout", files: []File{FromBytes("/etc/.wh.passwd", nil, 0)}, want: "whiteout"},
		{name: "twice", files: []File{ok, Dir("/ok", 0)}, want: "/ok is listed twice (as a file and as a directory)"},
		{name: "parent is a file", files: []File{ok, FromBytes("/ok/x", nil, 0)}, want: "/ok/x: its parent /ok is a file"},
		{name: "parent is a symlink", files: []File{Link("/lib", "usr/lib"), FromBytes("/lib/x", nil, 0)}, want: "its parent /lib is a symlink"},
		{name: "symlink without target", files: []File{Link("/x", "")}, want: "symlink without a target"},
		{name: "source and data", files: []File{{Path: "/x", Source: file, Data: []byte("y")}}, want: "both a source"},
		{name: "file type in mode", files: []File{FromBytes("/x", nil, os.ModeDevice|0o644)}, want: "beyond chmod's"},
		{name: "short name", image: "pause:dev", files: []File{ok}, want: "has no domain"},
		{name: "no domain", image: "library/pause:dev", files: []File{ok}, want: `"library" is not a domain`},
		{name: "no tag", image: "ovnk.local/pause", files: []File{ok}, want: "has no tag"},
		{name: "port but no tag", image: "localhost:5000/pause", files: []File{ok}, want: "has no tag"},
		{name: "digest", image: "ovnk.local/pause@sha256:abc", files: []File{ok}, want: "has a digest"},
		{name: "uppercase", image: "ovnk.local/Pause:dev", files: []File{ok}, want: `bad path component "Pause"`},
		{name: "bad tag", image: "ovnk.local/pause:-dev", files: []File{ok}, want: `bad tag "-dev"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := Image{Name: "ovnk.local/t:dev", Files: tc.files}
			if tc.image != "" {
				img.Name = tc.image
			}
			out := filepath.Join(t.TempDir(), "out.tar")
			_, err := WriteFile(context.Background(), out, img)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteFile = %v, want an error containing %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "image "+img.Name+": ") {
				t.Errorf("error %q does not name the image", err)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*"))
			hidden, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*"))
			if len(left)+len(hidden) != 0 {
				t.Errorf("a failed write left %v %v", left, hidden)
			}
		})
	}
}

func TestSplitNameAccepts(t *testing.T) {
	for name, want := range map[string]string{
		"ovnk.local/ovnk-agent:dev":      "ovnk.local/ovnk-agent dev",
		"localhost/pause:3.10":           "localhost/pause 3.10",
		"localhost:5000/a/b_c:v1.2-rc.1": "localhost:5000/a/b_c v1.2-rc.1",
		"registry.k8s.io/pause:3.10":     "registry.k8s.io/pause 3.10",
	} {
		repo, tag, err := SplitName(name)
		if err != nil || repo+" "+tag != want {
			t.Errorf("SplitName(%q) = %q, %q, %v; want %s", name, repo, tag, err, want)
		}
	}
}

// rewrite copies the archive at path, passing each entry's content through change.
func rewrite(t *testing.T, path string, change func(name string, b []byte) []byte) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		b = change(h.Name, b)
		h.Size = int64(len(b))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	out := path + ".changed"
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadRefusesDamage(t *testing.T) {
	ctx := context.Background()
	good := filepath.Join(t.TempDir(), "good.tar")
	w, err := WriteFile(ctx, good, sample(t))
	if err != nil {
		t.Fatal(err)
	}
	layerName := "blobs/sha256/" + hexOf(w.Layer)
	for _, tc := range []struct {
		name   string
		change func(name string, b []byte) []byte
		want   string
	}{
		{"a layer byte flipped", func(name string, b []byte) []byte {
			if name == layerName {
				b[len(b)/2] ^= 1
			}
			return b
		}, "blob " + w.Layer + ": its content has digest"},
		{"the index names another manifest", func(name string, b []byte) []byte {
			if name == "index.json" {
				return bytes.ReplaceAll(b, []byte(hexOf(w.Digest)), []byte(strings.Repeat("0", 64)))
			}
			return b
		}, "no such blob"},
		{"another layout version", func(name string, b []byte) []byte {
			if name == "oci-layout" {
				return []byte(`{"imageLayoutVersion":"2.0.0"}`)
			}
			return b
		}, "imageLayoutVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(ctx, rewrite(t, good, tc.change), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// The unchanged copy reads: the damage, not the copying, is what Read refused.
	if _, err := Read(ctx, rewrite(t, good, func(_ string, b []byte) []byte { return b }), nil); err != nil {
		t.Errorf("Read of an unchanged copy: %v", err)
	}
}
