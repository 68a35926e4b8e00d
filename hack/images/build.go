package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/isamatch/isamatch/internal/gobuild"
)

// App is one binary and the image it goes into.
type App struct {
	// Name is the image name under --repo and the binary's path in the
	// image: /<Name>.
	Name string
	// Module is the directory of the Go module that holds Package,
	// relative to the repository root; empty for the root module.
	// rebalance/ is a module of its own (descheduler's libraries).
	Module string
	// Package is the Go package to build, relative to its module
	// (./cmd/labeler).
	Package string
	// User is the image config's User: "0" or "65532".
	User string
	// WorkingDir is the image config's WorkingDir.
	WorkingDir string
	// ProbePrograms adds a second layer with the probe programs the
	// labeler runs through QEMU binfmt_misc handlers (probeLayer).
	ProbePrograms bool
}

// defaultApps are the images isamatch ships. The labeler runs as root: it
// chroots into the host root to run the host's gcc (config/daemonset).
var defaultApps = []App{
	{Name: "labeler", Package: "./cmd/labeler", User: "0", WorkingDir: "/", ProbePrograms: true},
	{Name: "webhook", Package: "./cmd/webhook", User: nonrootID, WorkingDir: "/home/nonroot"},
	{Name: "rebalancer", Module: "rebalance", Package: "./cmd/rebalancer", User: nonrootID, WorkingDir: "/home/nonroot"},
}

// nonrootID is the UID and GID of the unprivileged user, as in distroless.
const nonrootID = "65532"

// Platform is an OS/architecture pair an image is built for.
type Platform struct {
	OS, Arch string
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// supportedPlatforms are those isamatch runs on (pkg/isa's architectures
// that Go can build for).
var supportedPlatforms = []Platform{
	{OS: "linux", Arch: "amd64"},
	{OS: "linux", Arch: "arm64"},
	{OS: "linux", Arch: "riscv64"},
}

// Image config label keys (OCI annotations spec, pre-defined keys).
const (
	labelSource   = "org.opencontainers.image.source"
	labelRevision = "org.opencontainers.image.revision"
	labelVersion  = "org.opencontainers.image.version"
	labelTitle    = "org.opencontainers.image.title"
	caBundlePath  = "etc/ssl/certs/ca-certificates.crt"
)

// buildConfig is what buildIndex needs besides the App.
type buildConfig struct {
	// ModuleDir is the repository root (the root module); go build runs
	// there or in an App's Module below it.
	ModuleDir string
	// WorkDir holds the compiled binaries and layer tarballs.
	WorkDir   string
	Platforms []Platform
	// Epoch is every timestamp in the image: tar entries, config, history.
	Epoch time.Time
	// CABundle is copied to /etc/ssl/certs/ca-certificates.crt.
	CABundle []byte
	// Source, Revision and Version become the org.opencontainers.image.*
	// labels (empty ones are left out).
	Source, Revision, Version string
	// Progress receives one line per step; nil discards.
	Progress io.Writer
}

// buildIndex compiles app for every platform and returns the image index
// with one image per platform, in cfg.Platforms order.
func buildIndex(ctx context.Context, cfg buildConfig, app App) (v1.ImageIndex, error) {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	adds := make([]mutate.IndexAddendum, 0, len(cfg.Platforms))
	var extra v1.Layer
	if app.ProbePrograms {
		var err error
		if extra, err = probeLayer(ctx, cfg); err != nil {
			return nil, fmt.Errorf("assemble %s: %w", app.Name, err)
		}
	}
	for _, p := range cfg.Platforms {
		start := time.Now()
		bins, err := gobuild.Binaries(ctx, filepath.Join(cfg.ModuleDir, app.Module), filepath.Join(cfg.WorkDir, app.Name+"-"+p.OS+"-"+p.Arch),
			gobuild.Options{AsImage: true, GOOS: p.OS, GOARCH: p.Arch, Version: cfg.Version, Revision: cfg.Revision}, app.Package)
		if err != nil {
			return nil, err
		}
		bin := bins[0]
		img, err := platformImage(cfg, app, p, bin, extra)
		if err != nil {
			return nil, fmt.Errorf("assemble %s for %s: %w", app.Name, p, err)
		}
		st, err := os.Stat(bin)
		if err != nil {
			return nil, fmt.Errorf("assemble %s for %s: %w", app.Name, p, err)
		}
		compressed, err := compressedSize(img)
		if err != nil {
			return nil, fmt.Errorf("assemble %s for %s: %w", app.Name, p, err)
		}
		fmt.Fprintf(progress, "built %s %s: binary %s, layer %s gzipped, %.1fs\n",
			app.Name, p, mib(st.Size()), mib(compressed), time.Since(start).Seconds())
		adds = append(adds, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{
				Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch},
			},
		})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	annotated, ok := mutate.Annotations(idx, cfg.labels(app)).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("annotate %s index: not an image index", app.Name)
	}
	return annotated, nil
}

// labels are the image config labels and index annotations of app.
func (cfg buildConfig) labels(app App) map[string]string {
	l := map[string]string{labelTitle: "isamatch-" + app.Name}
	for k, v := range map[string]string{labelSource: cfg.Source, labelRevision: cfg.Revision, labelVersion: cfg.Version} {
		if v != "" {
			l[k] = v
		}
	}
	return l
}

// platformImage assembles the image of app for p around the binary at bin,
// with extra, when not nil, as a second layer.
func platformImage(cfg buildConfig, app App, p Platform, bin string, extra v1.Layer) (v1.Image, error) {
	tarPath := bin + ".tar"
	if err := writeLayerTar(tarPath, cfg, app, bin); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return os.Open(tarPath) },
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.DefaultCompression),
		tarball.WithCompressedCaching,
	)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	created := v1.Time{Time: cfg.Epoch}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   created,
			CreatedBy: "go run ./hack/images",
			Comment:   "/" + app.Name + " (" + app.Package + "), /etc/passwd, /etc/group, CA bundle",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	if extra != nil {
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     extra,
			MediaType: types.OCILayer,
			History:   v1.History{Created: created, CreatedBy: "go run ./hack/images", Comment: "/probes: probe programs (hack/probes)"},
		})
		if err != nil {
			return nil, fmt.Errorf("append probe programs layer: %w", err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS = p.OS
	cf.Architecture = p.Arch
	cf.Config = v1.Config{
		Entrypoint: []string{"/" + app.Name},
		User:       app.User,
		WorkingDir: app.WorkingDir,
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"SSL_CERT_FILE=/" + caBundlePath,
		},
		Labels: cfg.labels(app),
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}

// writeLayerTar writes the image's only layer, uncompressed, to path:
// every entry owned by root unless noted, every time cfg.Epoch.
func writeLayerTar(path string, cfg buildConfig, app App, bin string) error {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("read binary: %w", err)
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
	group := "root:x:0:\nnonroot:x:65532:\nnobody:x:65534:\n"
	type entry struct {
		name     string
		mode     int64
		uid, gid int
		data     []byte // nil for a directory
	}
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: caBundlePath, mode: 0o644, data: cfg.CABundle},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: 65532, gid: 65532},
		{name: "tmp/", mode: 0o1777},
		{name: app.Name, mode: 0o755, data: binary},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := cfg.Epoch.UTC().Truncate(time.Second)
	for _, e := range entries {
		hdr := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: mtime,
		}
		if strings.HasSuffix(e.name, "/") {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("tar %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("tar %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write layer: %w", err)
	}
	return nil
}

// compressedSize is the sum of the compressed layer sizes of img.
func compressedSize(img v1.Image) (int64, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
