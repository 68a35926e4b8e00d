package registry

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/isamatch/isamatch/pkg/isa"
)

// attestationAnnotation marks BuildKit attestation manifests in an index.
const attestationAnnotation = "vnd.docker.reference.type"

// maxIndexDepth bounds nested image indexes.
const maxIndexDepth = 2

// getPlatforms GETs ref's manifest with p and reads the platforms it
// lists; digest is the manifest's.
func (r *Resolver) getPlatforms(ctx context.Context, p *remote.Puller, ref name.Reference) (platforms []Platform, digest v1.Hash, err error) {
	desc, err := p.Get(ctx, ref)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	platforms, err = r.platformsOf(ctx, desc)
	return platforms, desc.Digest, err
}

// platformsOf reads the platforms desc lists.
func (r *Resolver) platformsOf(ctx context.Context, desc *remote.Descriptor) ([]Platform, error) {
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, err
		}
		platforms, err := r.fromIndex(ctx, idx, 0)
		if err != nil {
			return nil, err
		}
		if len(platforms) == 0 {
			return nil, malformed("the image index lists no runnable platform (only attestations or unknown/unknown)")
		}
		return platforms, nil
	case desc.MediaType.IsSchema1():
		return nil, malformed("docker schema 1 manifest (%s) is not supported; push the image with a current client", desc.MediaType)
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			return nil, err
		}
		p, err := platformOf(img, nil, r.cfg.bareLabel)
		if err != nil {
			return nil, err
		}
		p.Digest = desc.Digest.String()
		return []Platform{p}, nil
	default:
		return nil, malformed("media type %q is neither an image nor an image index", desc.MediaType)
	}
}

// fromIndex reads every runnable platform of idx, fetching the image configs
// in parallel (bounded by the transport's slots).
func (r *Resolver) fromIndex(ctx context.Context, idx v1.ImageIndex, depth int) ([]Platform, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		// The bytes are already here: a failure is a parse failure.
		return nil, fmt.Errorf("%w: parse image index: %w", errMalformed, err)
	}
	if err := resolutionOf(ctx).budget.index(len(im.Manifests)); err != nil {
		return nil, err
	}
	results := make([][]Platform, len(im.Manifests))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.cfg.perHost)
	for i, d := range im.Manifests {
		if skipDescriptor(d) {
			continue
		}
		switch {
		case d.MediaType.IsIndex():
			if depth+1 >= maxIndexDepth {
				return nil, malformed("image indexes nested deeper than %d levels", maxIndexDepth)
			}
			g.Go(func() error {
				child, err := idx.ImageIndex(d.Digest)
				if err != nil {
					return fmt.Errorf("nested index %s: %w", d.Digest, err)
				}
				results[i], err = r.fromIndex(gctx, child, depth+1)
				return err
			})
		case d.MediaType.IsImage() && !d.MediaType.IsSchema1():
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				img, err := idx.Image(d.Digest)
				if err != nil {
					return fmt.Errorf("platform image %s: %w", d.Digest, err)
				}
				p, err := platformOf(img, d.Platform, r.cfg.bareLabel)
				if err != nil {
					return fmt.Errorf("platform image %s: %w", d.Digest, err)
				}
				if p.OS == "unknown" && p.Architecture == "unknown" {
					return nil
				}
				p.Digest = d.Digest.String()
				results[i] = []Platform{p}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []Platform
	for _, ps := range results {
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func skipDescriptor(d v1.Descriptor) bool {
	if d.Annotations[attestationAnnotation] == "attestation-manifest" {
		return true
	}
	return d.Platform != nil && d.Platform.OS == "unknown" && d.Platform.Architecture == "unknown"
}

// platformOf reads img's config: the platform (from the index descriptor
// when it has one, else from the config) and the request label (with
// bareLabel, the paper's isa.request too). A config over MaxConfigBytes is
// not fetched.
func platformOf(img v1.Image, fromIndex *v1.Platform, bareLabel bool) (Platform, error) {
	m, err := img.Manifest()
	if err != nil {
		return Platform{}, fmt.Errorf("read image manifest: %w", err)
	}
	if size := m.Config.Size; size > MaxConfigBytes {
		if fromIndex == nil || fromIndex.Architecture == "" {
			return Platform{}, fmt.Errorf("%w: image config is %d bytes; the limit is %d bytes", errTooLarge, size, MaxConfigBytes)
		}
		return Platform{OS: fromIndex.OS, Architecture: fromIndex.Architecture, Variant: fromIndex.Variant, ConfigIgnored: size}, nil
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Platform{}, fmt.Errorf("read image config: %w", err)
	}
	// The reverse-DNS label wins over the paper's bare one.
	label, ok := cf.Config.Labels[isa.ImageRequestLabel]
	if !ok && bareLabel {
		label = cf.Config.Labels[isa.BareImageRequestLabel]
	}
	p := Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant, ISARequest: label}
	if n := len(p.ISARequest); n > MaxLabelBytes {
		// Too long to be an ISA request; not parsed, not cached.
		p.ISARequest, p.LabelIgnored = "", n
	}
	if fromIndex != nil && fromIndex.Architecture != "" {
		p.OS, p.Architecture, p.Variant = fromIndex.OS, fromIndex.Architecture, fromIndex.Variant
	}
	if p.Architecture == "" {
		return Platform{}, malformed("the image config names no architecture")
	}
	return p, nil
}
