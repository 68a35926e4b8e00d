package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/krew"
)

// pluginTags are kubectl's own build tags: they keep Go's plugin package
// (through cli-runtime's kustomize) out, without which the linker keeps
// every exported method (71 MB instead of 33).
const pluginTags = "kustomize_disable_go_plugin_support"

// release builds an archive per platform into o.Out and the manifest
// rendered from tmpl with their digests, and returns the files' names.
func release(ctx context.Context, o options, tmpl []byte) ([]string, error) {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(o.Root, "LICENSE"))
	if err != nil {
		return nil, fmt.Errorf("the archives carry LICENSE: %w", err)
	}
	work, err := os.MkdirTemp("", "isamatch-plugin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	digests := map[string]string{}
	var files []string
	for _, p := range o.Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		bins, err := gobuild.Binaries(ctx, o.Root, filepath.Join(work, goos+"_"+goarch),
			gobuild.Options{AsImage: true, GOOS: goos, GOARCH: goarch, Version: o.Version, Tags: pluginTags}, "./cmd/kubectl-isa")
		if err != nil {
			return nil, err
		}
		bin, err := os.ReadFile(bins[0])
		if err != nil {
			return nil, err
		}
		name := krew.Archive(goos, goarch)
		data, err := archive(name, filepath.Base(bins[0]), bin, license, o.Epoch)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(o.Out, name), data, 0o644); err != nil {
			return nil, err
		}
		digests[name] = fmt.Sprintf("%x", sha256.Sum256(data))
		files = append(files, name)
	}
	manifest, err := krew.Render(tmpl, o.Version, func(a string) (string, bool) {
		d, ok := digests[a]
		return d, ok
	})
	if err != nil {
		return nil, err
	}
	if _, err := krew.Check(manifest, o.Version); err != nil {
		return nil, fmt.Errorf("the rendered manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.Out, krew.ManifestName), manifest, 0o644); err != nil {
		return nil, err
	}
	return append(files, krew.ManifestName), nil
}

// archive is a .zip (by name) or .tar.gz holding the executable bin as
// binName and LICENSE, every time epoch.
func archive(name, binName string, bin, license []byte, epoch time.Time) ([]byte, error) {
	entries := []struct {
		name string
		mode int64
		data []byte
	}{{binName, 0o755, bin}, {"LICENSE", 0o644, license}}
	var buf bytes.Buffer
	if strings.HasSuffix(name, ".zip") {
		zw := zip.NewWriter(&buf)
		for _, e := range entries {
			h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: epoch}
			h.SetMode(os.FileMode(e.mode))
			w, err := zw.CreateHeader(h)
			if err != nil {
				return nil, err
			}
			if _, err := w.Write(e.data); err != nil {
				return nil, err
			}
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	gz.ModTime = epoch
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
