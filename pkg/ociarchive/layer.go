package ociarchive

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// entry is a File ready for the layer: its mode filled in and, from disk, its size.
type entry struct {
	File
	size int64
}

// plan checks the image's files and returns the layer's entries sorted by path, which
// puts every directory before what it holds, with the parent directories nobody listed
// added. Sources on disk are checked here, before anything is written, so a missing
// one fails the build at once and by name.
func plan(files []File) ([]entry, error) {
	byPath := make(map[string]File, len(files))
	for _, f := range files {
		if err := checkFile(f); err != nil {
			return nil, err
		}
		if prev, ok := byPath[f.Path]; ok {
			return nil, fmt.Errorf("%s is listed twice (as a %v and as a %v)", f.Path, prev.Kind, f.Kind)
		}
		byPath[f.Path] = f
	}
	for _, f := range files {
		for dir := path.Dir(f.Path); dir != "/"; dir = path.Dir(dir) {
			parent, ok := byPath[dir]
			if !ok {
				byPath[dir] = Dir(dir, 0)
				continue
			}
			if parent.Kind != Directory {
				return nil, fmt.Errorf("%s: its parent %s is a %v, not a directory", f.Path, dir, parent.Kind)
			}
		}
	}
	entries := make([]entry, 0, len(byPath))
	for _, f := range byPath {
		e := entry{File: f}
		switch {
		case f.Kind == Directory && f.Mode == 0:
			e.Mode = 0o755
		case f.Kind == Symlink:
			e.Mode = fs.ModePerm
		case f.Kind == Regular && f.Source != "":
			fi, err := os.Stat(f.Source)
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err // the path is named below, once
				}
				return nil, fmt.Errorf("%s: source %s: %w", f.Path, f.Source, err)
			}
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s: source %s is not a regular file (%v)", f.Path, f.Source, fi.Mode().Type())
			}
			e.size = fi.Size()
			if f.Mode == 0 {
				e.Mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
			}
		case f.Kind == Regular:
			e.size = int64(len(f.Data))
			if f.Mode == 0 {
				e.Mode = 0o644
			}
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries, nil
}

// tarMode turns a Mode into the mode field of a tar header, chmod's bits.
func tarMode(m fs.FileMode) int64 {
	mode := int64(m & 0o7777)
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

// writeLayer writes the entries as an uncompressed layer tar: names relative to the
// image's root, directories with a trailing slash, owner 0:0, every time Epoch.
func writeLayer(ctx context.Context, w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := &tar.Header{
			Name:    strings.TrimPrefix(e.Path, "/"),
			Mode:    tarMode(e.Mode),
			ModTime: Epoch,
		}
		switch e.Kind {
		case Directory:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case Symlink:
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Target
		case Regular:
			h.Typeflag, h.Size = tar.TypeReg, e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("layer entry %s: %w", e.Path, err)
		}
		if e.Kind == Regular {
			if err := copyContent(tw, e); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("finish layer: %w", err)
	}
	return nil
}

// copyContent streams a file's content into the layer: exactly the size plan saw, so a
// source that changes size meanwhile fails instead of writing a corrupt tar.
func copyContent(w io.Writer, e entry) error {
	if e.Source == "" {
		_, err := w.Write(e.Data)
		return err
	}
	f, err := os.Open(e.Source)
	if err != nil {
		return fmt.Errorf("%s: %w", e.Path, err)
	}
	defer f.Close()
	n, err := io.CopyN(w, f, e.size)
	if err != nil {
		return fmt.Errorf("%s: copy %s (%d of %d bytes): %w", e.Path, e.Source, n, e.size, err)
	}
	var one [1]byte
	if m, _ := f.Read(one[:]); m > 0 {
		return fmt.Errorf("%s: source %s grew while it was being written (beyond %d bytes)", e.Path, e.Source, e.size)
	}
	return nil
}
