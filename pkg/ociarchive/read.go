package ociarchive

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Contents is what Read found in an archive.
type Contents struct {
	// Name is the image's full name (the io.containerd.image.name annotation) and Tag
	// the OCI layout's name for it.
	Name, Tag string
	// Platform is os/architecture, such as linux/amd64.
	Platform string
	// Config is how the image runs.
	Config Config
	// Written holds the digests, as WriteFile returned them.
	Written
}

// maxJSON bounds the documents Read holds in memory; an index, manifest or config of
// this package is a few hundred bytes.
const maxJSON = 1 << 20

// Read checks an archive of one image with one uncompressed layer (what WriteFile
// writes): every blob's content against its digest, every descriptor's size and media
// type against its blob, the layer against the config's diff ID. Then, when each is
// not nil, it calls each for every entry of the layer in order, with a reader of the
// entry's content. The first error, the archive's or each's, ends it.
func Read(ctx context.Context, path string, each func(h *tar.Header, content io.Reader) error) (Contents, error) {
	c, err := read(ctx, path, each)
	if err != nil {
		return Contents{}, fmt.Errorf("archive %s: %w", path, err)
	}
	return c, nil
}

func read(ctx context.Context, path string, each func(*tar.Header, io.Reader) error) (Contents, error) {
	sizes := map[string]int64{}  // blob digest → size
	small := map[string][]byte{} // blob digest or file name → content, when small
	err := walkArchive(path, func(h *tar.Header, r io.Reader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case h.Typeflag == tar.TypeDir:
			return nil
		case h.Typeflag != tar.TypeReg:
			return fmt.Errorf("entry %s: type %q is neither a file nor a directory", h.Name, h.Typeflag)
		case h.Name == layoutFile || h.Name == indexFile:
			b, err := io.ReadAll(io.LimitReader(r, maxJSON+1))
			if err != nil {
				return fmt.Errorf("entry %s: %w", h.Name, err)
			}
			if len(b) > maxJSON {
				return fmt.Errorf("entry %s: larger than %d bytes", h.Name, maxJSON)
			}
			small[h.Name] = b
			return nil
		case strings.HasPrefix(h.Name, blobsPrefix):
			want := "sha256:" + strings.TrimPrefix(h.Name, blobsPrefix)
			sum := sha256.New()
			var kept []byte
			var dst io.Writer = sum
			if h.Size <= maxJSON {
				kept = make([]byte, 0, h.Size)
				dst = io.MultiWriter(sum, (*appender)(&kept))
			}
			if _, err := io.Copy(dst, r); err != nil {
				return fmt.Errorf("blob %s: %w", want, err)
			}
			if got := "sha256:" + hex.EncodeToString(sum.Sum(nil)); got != want {
				return fmt.Errorf("blob %s: its content has digest %s", want, got)
			}
			sizes[want] = h.Size
			if kept != nil {
				small[want] = kept
			}
			return nil
		}
		return fmt.Errorf("unexpected entry %s", h.Name)
	})
	if err != nil {
		return Contents{}, err
	}

	var layout struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := decode(small, layoutFile, &layout); err != nil {
		return Contents{}, err
	}
	if layout.Version != "1.0.0" {
		return Contents{}, fmt.Errorf("%s: imageLayoutVersion %q, want 1.0.0", layoutFile, layout.Version)
	}
	var idx index
	if err := decode(small, indexFile, &idx); err != nil {
		return Contents{}, err
	}
	if idx.SchemaVersion != 2 || len(idx.Manifests) != 1 {
		return Contents{}, fmt.Errorf("%s: schemaVersion %d with %d manifests, want 2 with one", indexFile, idx.SchemaVersion, len(idx.Manifests))
	}
	manDesc := idx.Manifests[0]
	var man manifest
	if err := checkBlob(sizes, manDesc, mediaTypeManifest); err != nil {
		return Contents{}, err
	}
	if err := decode(small, manDesc.Digest, &man); err != nil {
		return Contents{}, err
	}
	if man.SchemaVersion != 2 || man.MediaType != mediaTypeManifest || len(man.Layers) != 1 {
		return Contents{}, fmt.Errorf("manifest %s: schemaVersion %d, media type %q, %d layers; want 2, %s, one layer",
			manDesc.Digest, man.SchemaVersion, man.MediaType, len(man.Layers), mediaTypeManifest)
	}
	if err := checkBlob(sizes, man.Config, mediaTypeConfig); err != nil {
		return Contents{}, err
	}
	layer := man.Layers[0]
	if err := checkBlob(sizes, layer, mediaTypeLayer); err != nil {
		return Contents{}, err
	}
	var cfg imageConfig
	if err := decode(small, man.Config.Digest, &cfg); err != nil {
		return Contents{}, err
	}
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != layer.Digest {
		return Contents{}, fmt.Errorf("config %s: diff IDs %v, want the uncompressed layer's digest %s", man.Config.Digest, cfg.RootFS.DiffIDs, layer.Digest)
	}
	platform := cfg.OS + "/" + cfg.Architecture
	if p := manDesc.Platform; p != nil && p.OS+"/"+p.Architecture != platform {
		return Contents{}, fmt.Errorf("%s says platform %s/%s, the config %s", indexFile, p.OS, p.Architecture, platform)
	}
	c := Contents{
		Name:     manDesc.Annotations[AnnotationImageName],
		Tag:      manDesc.Annotations[AnnotationRefName],
		Platform: platform,
		Config: Config{
			Entrypoint: cfg.Config.Entrypoint,
			Cmd:        cfg.Config.Cmd,
			Env:        cfg.Config.Env,
			WorkingDir: cfg.Config.WorkingDir,
			User:       cfg.Config.User,
		},
		Written: Written{Digest: manDesc.Digest, ID: man.Config.Digest, Layer: layer.Digest, LayerSize: layer.Size},
	}
	if each == nil {
		return c, nil
	}
	errFound := errors.New("found")
	err = walkArchive(path, func(h *tar.Header, r io.Reader) error {
		if h.Name != blobsPrefix+hexOf(layer.Digest) {
			return nil
		}
		lr := tar.NewReader(r)
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			lh, err := lr.Next()
			if err == io.EOF {
				return errFound
			}
			if err != nil {
				return fmt.Errorf("layer %s: %w", layer.Digest, err)
			}
			if err := each(lh, lr); err != nil {
				return err
			}
		}
	})
	if err != nil && !errors.Is(err, errFound) {
		return Contents{}, err
	}
	return c, nil
}

// walkArchive calls fn for every entry of the tar at path.
func walkArchive(path string, fn func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}

// checkBlob checks that a descriptor has the media type and names a blob of its size.
func checkBlob(sizes map[string]int64, d descriptor, mediaType string) error {
	if d.MediaType != mediaType {
		return fmt.Errorf("descriptor %s: media type %q, want %q", d.Digest, d.MediaType, mediaType)
	}
	size, ok := sizes[d.Digest]
	if !ok {
		return fmt.Errorf("descriptor %s: no such blob", d.Digest)
	}
	if size != d.Size {
		return fmt.Errorf("descriptor %s: size %d, the blob has %d bytes", d.Digest, d.Size, size)
	}
	return nil
}

// decode parses the small document stored under key.
func decode(small map[string][]byte, key string, v any) error {
	b, ok := small[key]
	if !ok {
		return fmt.Errorf("%s: missing", key)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// appender is an io.Writer that appends to a byte slice.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}
