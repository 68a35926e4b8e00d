package testbed

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platform describes one image of a test index: what its config and the
// index descriptor say.
type Platform struct {
	OS      string // "linux" when empty
	Arch    string // config "architecture": riscv64, amd64, arm64
	Variant string // config and descriptor "variant": "v3", "rva23u64"
	// Features goes to the descriptor's platform.features.
	Features []string
	// Labels are the image config labels (Config.Labels).
	Labels map[string]string
}

// String is "os/arch[/variant]".
func (p Platform) String() string {
	s := p.os() + "/" + p.Arch
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

func (p Platform) os() string {
	if p.OS == "" {
		return "linux"
	}
	return p.OS
}

func (p Platform) v1() *v1.Platform {
	return &v1.Platform{OS: p.os(), Architecture: p.Arch, Variant: p.Variant, Features: p.Features}
}

// layerSize keeps test images small: the platforms, variants and labels are
// what the suites look at.
const layerSize = 512

// Image builds an OCI image for p: one small random layer and a config
// carrying p's os, architecture, variant and labels.
func (p Platform) Image() (v1.Image, error) {
	layer, err := random.Layer(layerSize, types.OCILayer)
	if err != nil {
		return nil, fmt.Errorf("random layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS = p.os()
	cf.Architecture = p.Arch
	cf.Variant = p.Variant
	cf.Config.Labels = maps.Clone(p.Labels)
	cf.Config.Cmd = []string{"/bin/true"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config for %s: %w", p, err)
	}
	return img, nil
}

// Index builds an OCI image index with one image per platform, each
// descriptor carrying its platform.
func Index(platforms []Platform) (v1.ImageIndex, error) {
	if len(platforms) == 0 {
		return nil, fmt.Errorf("build index: no platforms")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	adds := make([]mutate.IndexAddendum, 0, len(platforms))
	for _, p := range platforms {
		img, err := p.Image()
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p.v1()}})
	}
	return mutate.AppendManifests(idx, adds...), nil
}

// PushIndex pushes a multi-platform index to reg as repo:tag and returns
// its digest.
func PushIndex(ctx context.Context, reg *Registry, repo, tag string, platforms []Platform) (v1.Hash, error) {
	ref, err := name.NewTag(reg.Ref(repo, tag), name.StrictValidation)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("parse reference %s: %w", reg.Ref(repo, tag), err)
	}
	idx, err := Index(platforms)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("build index %s: %w", ref, err)
	}
	if err := remote.WriteIndex(ref, idx, reg.RemoteOptions(ctx)...); err != nil {
		return v1.Hash{}, fmt.Errorf("push index %s (%s): %w", ref, platformList(platforms), err)
	}
	return idx.Digest()
}

// PushImage pushes a single-manifest image for p to reg as repo:tag and
// returns its digest.
func PushImage(ctx context.Context, reg *Registry, repo, tag string, p Platform) (v1.Hash, error) {
	ref, err := name.NewTag(reg.Ref(repo, tag), name.StrictValidation)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("parse reference %s: %w", reg.Ref(repo, tag), err)
	}
	img, err := p.Image()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("build image %s: %w", ref, err)
	}
	if err := remote.Write(ref, img, reg.RemoteOptions(ctx)...); err != nil {
		return v1.Hash{}, fmt.Errorf("push image %s (%s): %w", ref, p, err)
	}
	return img.Digest()
}

func platformList(ps []Platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
