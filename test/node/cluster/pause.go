package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// PausePlatforms are the architectures of the pause image: the node's own
// and two it lacks, so the image is also the suite's multi-arch image.
var PausePlatforms = []string{"amd64", "arm64", "riscv64"}

// PushPause cross-compiles the pause program (source dir src, a main
// package) for every PausePlatforms architecture and pushes one image
// index to ref (a plain-HTTP registry). It returns the index digest.
func PushPause(ctx context.Context, src, workDir, ref string) (v1.Hash, error) {
	tag, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("parse %s: %w", ref, err)
	}
	var idx v1.ImageIndex = empty.Index
	idx = mutate.IndexMediaType(idx, types.OCIImageIndex)
	for _, arch := range PausePlatforms {
		bin := filepath.Join(workDir, "pause-"+arch)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if out, err := cmd.CombinedOutput(); err != nil {
			return v1.Hash{}, fmt.Errorf("go build pause for %s: %w\n%s", arch, err, out)
		}
		// Also /bin/sleep, on the image's PATH: the documentation's pods
		// run `sleep`, and the suite runs them with this image.
		img, err := BinaryImage(bin, "/pause", arch, "/bin/sleep")
		if err != nil {
			return v1.Hash{}, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx)); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return idx.Digest()
}

// BinaryImage is an OCI image for linux/arch of one static binary bin at
// path, its entrypoint, and at each of aliases too (absolute paths; with
// any, the image's PATH is /bin).
func BinaryImage(bin, path, arch string, aliases ...string) (v1.Image, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", bin, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range append([]string{path}, aliases...) {
		if dir := filepath.Dir(p); dir != "/" {
			if err := tw.WriteHeader(&tar.Header{Name: dir[1:] + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
				return nil, fmt.Errorf("tar %s: %w", dir, err)
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: p[1:], Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, fmt.Errorf("tar %s: %w", p, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("tar %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar %s: %w", path, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer of %s: %w", bin, err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, fmt.Errorf("image of %s: %w", bin, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config of %s: %w", bin, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config.Entrypoint = []string{path}
	if len(aliases) > 0 {
		cf.Config.Env = []string{"PATH=/bin"}
	}
	cf.Config.User = "65535"
	return mutate.ConfigFile(img, cf)
}

// PushProgram pushes an image of the one static program bin, built for
// arch, as its entrypoint /program, to ref (a plain-HTTP registry): an
// image of that architecture only.
func PushProgram(ctx context.Context, bin, arch, ref string) error {
	tag, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return fmt.Errorf("parse %s: %w", ref, err)
	}
	img, err := BinaryImage(bin, "/program", arch)
	if err != nil {
		return err
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}
