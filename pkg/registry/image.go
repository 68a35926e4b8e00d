package registry

import (
	"context"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Image returns the image of platform p of ref (p as [Resolver.Resolve]
// returned it: by p.Digest when set, else picked from ref's index by OS,
// architecture and variant), read with auth's credentials through the
// resolver's transport: the same TLS trust, address guard, slots and
// mirrors and hosts directory. It is for reading the image's layers (pkg/imageisa) off the
// admission path. Layer bodies are not capped per response as manifests
// are (a reader stops early), but every byte read through the returned
// image, manifests, config and compressed layers, counts against maxBytes.
// The image reads with ctx: it must last as long as the image is read, and
// when it ends open layer streams give back their slots. Nothing is cached
// here. Errors are *Error values.
func (r *Resolver) Image(ctx context.Context, ref string, auth PullAuth, p Platform, maxBytes int64) (v1.Image, error) {
	parsed, err := r.parse(ref)
	if err != nil {
		return nil, &Error{Kind: KindOther, Ref: ref, Err: errors.New(sanitize.Line("invalid image reference: "+err.Error(), maxMessageBytes))}
	}
	if p.Digest != "" {
		if _, err := v1.NewHash(p.Digest); err != nil {
			return nil, &Error{Kind: KindOther, Ref: ref, Err: errors.New(sanitize.Line("invalid platform digest: "+err.Error(), maxMessageBytes))}
		}
		parsed = parsed.Context().Digest(p.Digest)
	}
	kc, err := r.cfg.keychains(ctx, auth)
	if err != nil {
		return nil, classify(ref, err)
	}
	ctx = withResolution(ctx, &resolution{namespace: auth.Namespace, layers: true,
		budget: &budget{maxBytes: maxBytes, maxEntries: int64(r.cfg.maxIndexEntries)}})
	opts := func(ctx context.Context) []remote.Option {
		return []remote.Option{
			remote.WithContext(ctx),
			remote.WithTransport(r.transport),
			remote.WithAuthFromKeychain(kc),
			remote.WithUserAgent("isamatch-webhook"),
			remote.WithPlatform(v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}),
		}
	}
	// The endpoints in order, as Resolve reads them; the last one's error.
	err = fmt.Errorf("no host of registry %s can serve it in the registry hosts dir", parsed.Context().RegistryStr())
	for i, e := range r.endpointsOf(parsed) {
		if i == 1 {
			r.cfg.metrics.mirrorFallback()
		}
		target, terr := r.refAt(parsed, e)
		if terr != nil {
			err = terr
			continue
		}
		var img v1.Image
		if img, err = remote.Image(target, opts(withEndpoint(ctx, e))...); err == nil {
			return img, nil
		}
	}
	return nil, classify(ref, fmt.Errorf("platform %s/%s image: %w", p.OS, p.Architecture, err))
}
