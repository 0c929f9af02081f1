package ociarchive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
)

// Written describes an archive that was written.
type Written struct {
	// Digest is the manifest's digest ("sha256:…"): the image's digest in containerd,
	// what `ctr images ls` shows.
	Digest string
	// ID is the image config's digest, which CRI reports as the image's ID.
	ID string
	// Layer is the digest of the uncompressed layer, which is also its diff ID.
	Layer string
	// LayerSize is the layer's size in bytes.
	LayerSize int64
}

// WriteFile writes img as an archive at path. The archive appears there only once
// complete (it is written beside and renamed), so a reader never sees half of one. The
// layer passes through a temporary file in the same directory.
func WriteFile(ctx context.Context, path string, img Image) (Written, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return Written{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	written, err := write(ctx, tmp, img, dir)
	if err == nil {
		// CreateTemp makes the file private; an archive is for anyone to import.
		if err = tmp.Chmod(0o644); err != nil {
			err = fmt.Errorf("image %s: %w", img.Name, err)
		}
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("image %s: write %s: %w", img.Name, tmp.Name(), cerr)
	}
	if err != nil {
		return Written{}, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return Written{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	return written, nil
}

// Write writes img as an archive to w. The layer passes through a temporary file (in
// os.TempDir) while its digest is computed, so no file of the image is held in memory.
func Write(ctx context.Context, w io.Writer, img Image) (Written, error) {
	return write(ctx, w, img, "")
}

func write(ctx context.Context, w io.Writer, img Image, tmpDir string) (Written, error) {
	written, err := writeImage(ctx, w, img, tmpDir)
	if err != nil {
		return Written{}, fmt.Errorf("image %s: %w", img.Name, err)
	}
	return written, nil
}

func writeImage(ctx context.Context, w io.Writer, img Image, tmpDir string) (Written, error) {
	_, tag, err := SplitName(img.Name)
	if err != nil {
		return Written{}, err
	}
	entries, err := plan(img.Files)
	if err != nil {
		return Written{}, err
	}
	layerFile, err := os.CreateTemp(tmpDir, "ociarchive-layer-*")
	if err != nil {
		return Written{}, fmt.Errorf("temporary file for the layer: %w", err)
	}
	defer func() {
		layerFile.Close()
		os.Remove(layerFile.Name())
	}()
	layer, err := writeHashed(layerFile, func(w io.Writer) error { return writeLayer(ctx, w, entries) })
	if err != nil {
		return Written{}, err
	}
	layer.MediaType = mediaTypeLayer

	config, configJSON, err := blob(mediaTypeConfig, imageConfig{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Config: runConfig{
			User:       img.Config.User,
			Env:        img.Config.Env,
			Entrypoint: img.Config.Entrypoint,
			Cmd:        img.Config.Cmd,
			WorkingDir: img.Config.WorkingDir,
		},
		RootFS: rootFS{Type: "layers", DiffIDs: []string{layer.Digest}},
	})
	if err != nil {
		return Written{}, err
	}
	man, manJSON, err := blob(mediaTypeManifest, manifest{
		SchemaVersion: 2,
		MediaType:     mediaTypeManifest,
		Config:        config,
		Layers:        []descriptor{layer},
	})
	if err != nil {
		return Written{}, err
	}
	man.Annotations = map[string]string{AnnotationImageName: img.Name, AnnotationRefName: tag}
	man.Platform = &platform{Architecture: runtime.GOARCH, OS: "linux"}
	_, indexJSON, err := blob(mediaTypeIndex, index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []descriptor{man}})
	if err != nil {
		return Written{}, err
	}

	if _, err := layerFile.Seek(0, io.SeekStart); err != nil {
		return Written{}, fmt.Errorf("rewind the layer: %w", err)
	}
	blobs := []struct {
		d       descriptor
		content io.Reader
	}{
		{config, bytes.NewReader(configJSON)},
		{layer, layerFile},
		{man, bytes.NewReader(manJSON)},
	}
	// Blobs in the order of their names, like every other list in the archive.
	sort.Slice(blobs, func(i, j int) bool { return blobs[i].d.Digest < blobs[j].d.Digest })

	bw := bufio.NewWriterSize(w, 1<<20)
	tw := tar.NewWriter(bw)
	put := func(name string, size int64, content io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: Epoch}); err != nil {
			return fmt.Errorf("archive entry %s: %w", name, err)
		}
		if _, err := io.CopyN(tw, content, size); err != nil {
			return fmt.Errorf("archive entry %s: %w", name, err)
		}
		return nil
	}
	mkdir := func(name string) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: Epoch}); err != nil {
			return fmt.Errorf("archive entry %s: %w", name, err)
		}
		return nil
	}
	if err := mkdir("blobs/"); err != nil {
		return Written{}, err
	}
	if err := mkdir(blobsPrefix); err != nil {
		return Written{}, err
	}
	for _, b := range blobs {
		if err := ctx.Err(); err != nil {
			return Written{}, err
		}
		if err := put(blobsPrefix+hexOf(b.d.Digest), b.d.Size, b.content); err != nil {
			return Written{}, err
		}
	}
	if err := put(indexFile, int64(len(indexJSON)), bytes.NewReader(indexJSON)); err != nil {
		return Written{}, err
	}
	if err := put(layoutFile, int64(len(layoutJSON)), bytes.NewReader([]byte(layoutJSON))); err != nil {
		return Written{}, err
	}
	if err := tw.Close(); err != nil {
		return Written{}, fmt.Errorf("finish archive: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return Written{}, fmt.Errorf("write archive: %w", err)
	}
	return Written{Digest: man.Digest, ID: config.Digest, Layer: layer.Digest, LayerSize: layer.Size}, nil
}

// writeHashed runs fill on a buffered writer into f that also hashes and counts, and
// returns the descriptor (without media type) of what was written.
func writeHashed(f *os.File, fill func(io.Writer) error) (descriptor, error) {
	h := sha256.New()
	counter := &countingWriter{h: h}
	bw := bufio.NewWriterSize(io.MultiWriter(f, counter), 1<<20)
	if err := fill(bw); err != nil {
		return descriptor{}, err
	}
	if err := bw.Flush(); err != nil {
		return descriptor{}, fmt.Errorf("write the layer to %s: %w", f.Name(), err)
	}
	return descriptor{Digest: "sha256:" + hex.EncodeToString(h.Sum(nil)), Size: counter.n}, nil
}

type countingWriter struct {
	h hash.Hash
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// blob encodes v as JSON and returns its descriptor and bytes.
func blob(mediaType string, v any) (descriptor, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return descriptor{}, nil, fmt.Errorf("encode %s: %w", mediaType, err)
	}
	sum := sha256.Sum256(b)
	return descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(b))}, b, nil
}

// hexOf is the hex part of a "sha256:…" digest.
func hexOf(digest string) string { return digest[len("sha256:"):] }
