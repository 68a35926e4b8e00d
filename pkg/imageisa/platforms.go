package imageisa

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/singleflight"

	"github.com/isamatch/isamatch/pkg/registry"
)

// Registry gives the image of one platform of a reference, read with a
// pod's pull credentials and at most maxBytes of registry responses:
// [registry.Resolver.Image].
type Registry interface {
	Image(ctx context.Context, ref string, auth registry.PullAuth, p registry.Platform, maxBytes int64) (v1.Image, error)
}

var _ Registry = (*registry.Resolver)(nil)

// registryOverhead is what the registry may send beyond the layer bytes
// Limits.MaxBytes allows: manifests, the config, token and ping answers.
// Compressed layer bytes are at most a little more than the uncompressed
// bytes they decode to.
const registryOverhead = 4 << 20

// Platforms infers what the platforms registry.Resolver found need: an
// [Inferrer] (its limits, cache and metrics) over images read from a
// [Registry]. A platform whose digest was scanned before in the same
// repository costs no registry request; concurrent scans of one digest in
// one repository are shared. Nothing read from one repository answers for
// another (see [Key]). It is safe for concurrent use.
type Platforms struct {
	in      *Inferrer
	reg     Registry
	flights singleflight.Group
}

// NewPlatforms returns a Platforms reading images from reg.
func NewPlatforms(in *Inferrer, reg Registry) *Platforms {
	return &Platforms{in: in, reg: reg}
}

// Cached answers from the inferrer's cache alone, by ref's repository and
// p.Digest: ok is false when that image was not scanned there, or p has no
// digest. Within the inferrer's RetryAfter of a read that failed for a
// passing reason it answers an [ErrFailedRecently] error, so that callers
// go on without the image.
func (ps *Platforms) Cached(ref string, p registry.Platform) (Result, error, bool) {
	k, ok := keyOf(ref, p)
	if !ok {
		return Result{}, nil, false
	}
	return ps.in.Cached(k)
}

// keyOf is the cache and flight key of platform p of ref: the registry and
// repository ref names (not any mirror read instead: the operator's own)
// and p's digest. ok is false when either cannot be parsed.
func keyOf(ref string, p registry.Platform) (Key, bool) {
	h, err := v1.NewHash(p.Digest)
	if err != nil {
		return Key{}, false
	}
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		return Key{}, false
	}
	return Key{Repo: r.Context().Name(), Digest: h}, true
}

// Infer returns what platform p of ref needs, by its entrypoint binary:
// from the cache when p.Digest was scanned (or an [ErrFailedRecently]
// error), else by reading the image within the inferrer's limits (and
// ctx). A read that fails for a passing reason (its time limit, a registry
// or transport error) is remembered for the inferrer's RetryAfter; ctx
// ending first is not. Errors wrap the Err* values, or are the registry's.
func (ps *Platforms) Infer(ctx context.Context, ref string, auth registry.PullAuth, p registry.Platform) (Result, error) {
	k, ok := keyOf(ref, p)
	if !ok {
		// Without a digest nothing is shared or cached by content.
		release, err := ps.in.acquire(ctx)
		if err != nil {
			return Result{}, err
		}
		defer release()
		return ps.scan(ctx, ref, auth, p, nil)
	}
	if r, err, ok := ps.in.Cached(k); ok {
		return r, err
	}
	type outcome struct {
		r   Result
		err error
	}
	ch := ps.flights.DoChan(k.String(), func() (any, error) {
		// A slot is waited for as long as the first caller waits; the
		// scan is then shared: its own time limit, not that caller's
		// cancellation. The slots bound what detached scans hold.
		release, err := ps.in.acquire(ctx)
		if err != nil {
			return outcome{Result{}, err}, nil
		}
		defer release()
		r, err := ps.scan(context.WithoutCancel(ctx), ref, auth, p, &k)
		if err != nil {
			ps.in.failed(k, err)
		}
		return outcome{r, err}, nil
	})
	select {
	case res := <-ch:
		o := res.Val.(outcome)
		return o.r, o.err
	case <-ctx.Done():
		return Result{}, fmt.Errorf("infer %s: %w", p.Digest, context.Cause(ctx))
	}
}

// scan reads the image of p and infers, all within the time limit, holding
// a slot; it stores the outcome under k when not nil.
func (ps *Platforms) scan(ctx context.Context, ref string, auth registry.PullAuth, p registry.Platform, k *Key) (Result, error) {
	lim := ps.in.Limits()
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Timeout, errTimeout)
	defer cancel() // ends the layer streams the image opened
	img, err := ps.reg.Image(ctx, ref, auth, p, lim.MaxBytes+registryOverhead)
	if err != nil {
		return Result{}, fmt.Errorf("read image: %w", err)
	}
	return ps.in.scan(ctx, k, img)
}
