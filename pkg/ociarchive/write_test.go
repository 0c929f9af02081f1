package ociarchive

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sample is an image with one of each kind of entry, with a file from disk.
func sample(t *testing.T) Image {
	t.Helper()
	src := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho hello\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	return Image{
		Name: "ovnk.local/sample:dev",
		Files: []File{
			FromDisk("/usr/bin/server", src, 0),
			FromBytes("/etc/motd", []byte("hi\n"), 0),
			FromBytes("/etc/secret", []byte("s"), 0o600),
			Dir("/tmp", 0o1777),
			Dir("/var/empty", 0),
			Link("/bin/sh", "busybox"),
			FromDisk("/bin/busybox", src, 0o4755),
		},
		Config: Config{
			Entrypoint: []string{"/usr/bin/server"},
			Cmd:        []string{"--port", "8080"},
			Env:        []string{"PATH=/usr/bin:/bin"},
			WorkingDir: "/tmp",
			User:       "0:0",
		},
	}
}

// entryLine renders a tar entry as one line, for comparing whole layers as text.
func entryLine(h *tar.Header, content []byte) string {
	line := fmt.Sprintf("%c %04o %d:%d %d %s", h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime.Unix(), h.Name)
	switch h.Typeflag {
	case tar.TypeSymlink:
		line += " -> " + h.Linkname
	case tar.TypeReg:
		line += fmt.Sprintf(" %q", content)
	}
	return line
}

// rawArchive reads an archive with archive/tar and encoding/json alone (not Read), so
// the test checks the format rather than this package against itself.
type rawArchive struct {
	names []string
	files map[string][]byte
}

func readRaw(t *testing.T, path string) rawArchive {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw := rawArchive{files: map[string][]byte{}}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return raw
		}
		if err != nil {
			t.Fatalf("archive %s: %v", path, err)
		}
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(Epoch) {
			t.Errorf("archive entry %s: owner %d:%d, time %v; want 0:0 at %v", h.Name, h.Uid, h.Gid, h.ModTime, Epoch)
		}
		raw.names = append(raw.names, h.Name)
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		raw.files[h.Name] = b
	}
}

// blob returns the blob a descriptor names, after checking its digest and size.
func (r rawArchive) blob(t *testing.T, desc map[string]any, mediaType string) []byte {
	t.Helper()
	digest, _ := desc["digest"].(string)
	b, ok := r.files["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")]
	if !ok {
		t.Fatalf("no blob for descriptor %v", desc)
	}
	if desc["mediaType"] != mediaType {
		t.Errorf("descriptor %s: media type %v, want %s", digest, desc["mediaType"], mediaType)
	}
	if size, _ := desc["size"].(float64); int64(size) != int64(len(b)) {
		t.Errorf("descriptor %s: size %v, blob has %d bytes", digest, desc["size"], len(b))
	}
	return b
}

func unmarshal(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

func TestWriteFileStructure(t *testing.T) {
	ctx := context.Background()
	img := sample(t)
	out := filepath.Join(t.TempDir(), "sample.tar")
	w, err := WriteFile(ctx, out, img)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("archive %s: %v, %v; want mode 0644", out, fi, err)
	}
	raw := readRaw(t, out)

	// Every blob is named by the digest of its content.
	var blobs int
	for name, b := range raw.files {
		if hexDigest, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && hexDigest != "" {
			blobs++
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexDigest {
				t.Errorf("blob %s has digest %x", name, sum)
			}
		}
	}
	if blobs != 3 {
		t.Errorf("%d blobs, want 3 (layer, config, manifest): %v", blobs, raw.names)
	}
	if got := string(raw.files["oci-layout"]); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %s", got)
	}
	if len(raw.names) != 7 || raw.names[0] != "blobs/" || raw.names[1] != "blobs/sha256/" || !sortedStrings(raw.names) ||
		raw.names[5] != "index.json" || raw.names[6] != "oci-layout" {
		t.Errorf("archive entries %v, want the directories, the blobs in order, index.json, oci-layout", raw.names)
	}

	idx := unmarshal(t, raw.files["index.json"])
	manifests, _ := idx["manifests"].([]any)
	if idx["schemaVersion"] != 2.0 || idx["mediaType"] != mediaTypeIndex || len(manifests) != 1 {
		t.Fatalf("index.json = %s", raw.files["index.json"])
	}
	manDesc := manifests[0].(map[string]any)
	annotations, _ := manDesc["annotations"].(map[string]any)
	if annotations["io.containerd.image.name"] != "ovnk.local/sample:dev" || annotations["org.opencontainers.image.ref.name"] != "dev" {
		t.Errorf("manifest annotations %v", annotations)
	}
	if p, _ := manDesc["platform"].(map[string]any); p["os"] != "linux" || p["architecture"] != runtime.GOARCH {
		t.Errorf("manifest platform %v", manDesc["platform"])
	}
	if manDesc["digest"] != w.Digest {
		t.Errorf("index names manifest %v, WriteFile returned %s", manDesc["digest"], w.Digest)
	}
	man := unmarshal(t, raw.blob(t, manDesc, mediaTypeManifest))
	layers, _ := man["layers"].([]any)
	if man["schemaVersion"] != 2.0 || len(layers) != 1 {
		t.Fatalf("manifest = %v", man)
	}
	cfgDesc := man["config"].(map[string]any)
	layerDesc := layers[0].(map[string]any)
	layer := raw.blob(t, layerDesc, mediaTypeLayer)
	if cfgDesc["digest"] != w.ID || layerDesc["digest"] != w.Layer || int64(len(layer)) != w.LayerSize {
		t.Errorf("WriteFile returned %+v; archive has config %v, layer %v of %d bytes", w, cfgDesc["digest"], layerDesc["digest"], len(layer))
	}

	wantConfig := `{"architecture":"` + runtime.GOARCH + `","os":"linux","config":{"User":"0:0","Env":["PATH=/usr/bin:/bin"],` +
		`"Entrypoint":["/usr/bin/server"],"Cmd":["--port","8080"],"WorkingDir":"/tmp"},"rootfs":{"type":"layers","diff_ids":["` + w.Layer + `"]}}`
	if got := string(raw.blob(t, cfgDesc, mediaTypeConfig)); got != wantConfig {
		t.Errorf("config:\n got %s\nwant %s", got, wantConfig)
	}

	// The layer: sorted, parents made, modes as asked or defaulted, owner 0:0, Epoch.
	var lines []string
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		lines = append(lines, entryLine(h, b))
	}
	want := strings.Join([]string{
		`5 0755 0:0 0 bin/`,
		`0 4755 0:0 0 bin/busybox "#!/bin/sh\necho hello\n"`,
		`2 0777 0:0 0 bin/sh -> busybox`,
		`5 0755 0:0 0 etc/`,
		`0 0644 0:0 0 etc/motd "hi\n"`,
		`0 0600 0:0 0 etc/secret "s"`,
		`5 1777 0:0 0 tmp/`,
		`5 0755 0:0 0 usr/`,
		`5 0755 0:0 0 usr/bin/`,
		`0 0750 0:0 0 usr/bin/server "#!/bin/sh\necho hello\n"`,
		`5 0755 0:0 0 var/`,
		`5 0755 0:0 0 var/empty/`,
	}, "\n")
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("layer:\n%s\nwant:\n%s", got, want)
	}

	// Read agrees with the raw reading.
	var readLines []string
	c, err := Read(ctx, out, func(h *tar.Header, r io.Reader) error {
		b, err := io.ReadAll(r)
		readLines = append(readLines, entryLine(h, b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != img.Name || c.Tag != "dev" || c.Platform != "linux/"+runtime.GOARCH || c.Written != w ||
		fmt.Sprint(c.Config) != fmt.Sprint(img.Config) {
		t.Errorf("Read = %+v, want name %s, tag dev, config %+v, %+v", c, img.Name, img.Config, w)
	}
	if got := strings.Join(readLines, "\n"); got != want {
		t.Errorf("Read's layer:\n%s\nwant:\n%s", got, want)
	}
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}

func TestWriteIsDeterministic(t *testing.T) {
	ctx := context.Background()
	img := sample(t)
	dir := t.TempDir()
	write := func(name string, img Image) ([]byte, Written) {
		t.Helper()
		var buf bytes.Buffer
		w, err := Write(ctx, &buf, img)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		fw, err := WriteFile(ctx, p, img)
		if err != nil {
			t.Fatal(err)
		}
		fromFile, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), fromFile) || w != fw {
			t.Fatalf("Write and WriteFile of %s differ", name)
		}
		return fromFile, w
	}
	first, w1 := write("first.tar", img)

	// The source's times, the order of Files and the time of day play no part.
	src := img.Files[0].Source
	if err := os.Chtimes(src, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	reordered := img
	reordered.Files = append([]File(nil), img.Files...)
	for i, j := 0, len(reordered.Files)-1; i < j; i, j = i+1, j-1 {
		reordered.Files[i], reordered.Files[j] = reordered.Files[j], reordered.Files[i]
	}
	second, w2 := write("second.tar", reordered)
	if !bytes.Equal(first, second) || w1 != w2 {
		t.Errorf("two writes of the same image differ: %+v, %+v", w1, w2)
	}

	// Content does.
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho changed\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	_, w3 := write("third.tar", img)
	if w3.Digest == w1.Digest || w3.Layer == w1.Layer {
		t.Errorf("changed content kept digest %s, layer %s", w3.Digest, w3.Layer)
	}
	// And so does the config alone, leaving the layer as it was.
	changed := img
	changed.Config.Cmd = []string{"--port", "9090"}
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho hello\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	_, w4 := write("fourth.tar", changed)
	if w4.Layer != w1.Layer || w4.ID == w1.ID || w4.Digest == w1.Digest {
		t.Errorf("a changed Cmd: %+v, was %+v; want the same layer, a new config and manifest", w4, w1)
	}
}

func TestWriteStreamsLargeFiles(t *testing.T) {
	// A 64 MiB file (sparse, so cheap to make) must pass through without being held in
	// memory: the heap grows by buffers, not by the file.
	const size = 64 << 20
	src := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	img := Image{Name: "ovnk.local/big:dev", Files: []File{FromDisk("/big", src, 0)}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := WriteFile(context.Background(), filepath.Join(t.TempDir(), "big.tar"), img)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size/4 {
		t.Errorf("writing a %d-byte file allocated %d bytes: it is held in memory", size, allocated)
	}
	if w.LayerSize < size {
		t.Errorf("layer of %d bytes for a %d-byte file", w.LayerSize, size)
	}
}
