package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/isamatch/isamatch/hack/probes"
	"github.com/isamatch/isamatch/pkg/probe"
)

// probeLayer builds the probe programs (hack/probes: every architecture,
// with Debian's cross binutils) and returns the layer that puts them at
// /probes/<arch>/<name> (probe.DefaultProgramsDir), root-owned, mode 0755,
// every time cfg.Epoch. Every platform's image gets the same layer: a node
// emulates architectures other than its own.
func probeLayer(ctx context.Context, cfg buildConfig) (v1.Layer, error) {
	dir := filepath.Join(cfg.WorkDir, "probes")
	if err := probes.Build(ctx, dir); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := cfg.Epoch.UTC().Truncate(time.Second)
	root := probe.DefaultProgramsDir[1:]
	add := func(hdr *tar.Header, data []byte) error {
		hdr.ModTime = mtime
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("tar %s: %w", hdr.Name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("tar %s: %w", hdr.Name, err)
		}
		return nil
	}
	if err := add(&tar.Header{Name: root + "/", Mode: 0o755, Typeflag: tar.TypeDir}, nil); err != nil {
		return nil, err
	}
	// WalkDir visits in lexical order: the layer's bytes depend only on
	// the programs.
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := root + "/" + filepath.ToSlash(rel)
		if d.IsDir() {
			return add(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir}, nil)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return add(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}, data)
	})
	if err != nil {
		return nil, fmt.Errorf("probe programs layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("probe programs layer: %w", err)
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithCompressedCaching)
}
