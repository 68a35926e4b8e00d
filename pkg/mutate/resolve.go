package mutate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/registry"
)

// must return soon after ctx ends: the admission time budget is ctx's
// deadline.
type ImageResolver interface {
	Resolve(ctx context.Context, ref string, auth registry.PullAuth) ([]registry.Platform, error)
}

// cachedResolver is implemented by resolvers that can answer from memory
// without blocking (registry.Resolver): a pod whose images are all cached
// is then resolved without a goroutine or a timer.
type cachedResolver interface {
	Cached(ref string, auth registry.PullAuth) (platforms []registry.Platform, ok bool, err error)
}

// ImageResolverFunc adapts a function to ImageResolver.
type ImageResolverFunc func(ctx context.Context, ref string, auth registry.PullAuth) ([]registry.Platform, error)

// Resolve calls f.
func (f ImageResolverFunc) Resolve(ctx context.Context, ref string, auth registry.PullAuth) ([]registry.Platform, error) {
	return f(ctx, ref, auth)
}

// MaxImages bounds the distinct images of one pod that are resolved: each
// costs registry work, so a pod with more is denied before any lookup.
const MaxImages = 64

// podImages returns the distinct image references of the pod's init
// containers and containers, in pod order. It stops counting at
// MaxImages+1, which is enough to deny.
func podImages(pod *podFields) []string {
	var refs []string
	seen := map[string]bool{}
	for _, cs := range [][]containerImage{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if ref := strings.TrimSpace(c.Image); ref != "" && !seen[ref] {
				seen[ref] = true
				refs = append(refs, ref)
				if len(refs) > MaxImages {
					return refs
				}
			}
		}
	}
	return refs
}

// tooManyImages is the denial for a pod with more than MaxImages images.
func tooManyImages() string {
	return fmt.Sprintf("the pod names more than %d distinct container images; the limit is %d: split it into several pods", MaxImages, MaxImages)
}

// pullAuth is the credentials pod's images are pulled with.
func pullAuth(ns string, pod *podFields) registry.PullAuth {
	auth := registry.PullAuth{Namespace: ns, ServiceAccountName: pod.Spec.ServiceAccountName}
	for _, s := range pod.Spec.ImagePullSecrets {
		auth.ImagePullSecrets = append(auth.ImagePullSecrets, s.Name)
	}
	return auth
}

// resolved is one image of a pod as the resolver answered it: its
// platforms as the resolver gives them (what the inferrer reads by), the
// error when they are unknown, and what inference found (infer).
type resolved struct {
	ref       string
	platforms []registry.Platform
	err       error
	inferred  []*engine.Inferred
}

// engineImages is what the engine is told of images.
func engineImages(images []resolved) []engine.ImageInfo {
	if images == nil {
		return nil
	}
	out := make([]engine.ImageInfo, len(images))
	for k, img := range images {
		out[k] = engine.ImageInfo{Ref: img.ref, Platforms: enginePlatforms(img.platforms), Err: img.err, Inferred: img.inferred}
	}
	return out
}

// enginePlatforms converts the resolver's platforms to the fields the
// decision reads, with the limits an ignored label or config exceeded.
func enginePlatforms(ps []registry.Platform) []engine.Platform {
	if ps == nil {
		return nil
	}
	out := make([]engine.Platform, len(ps))
	for k, p := range ps {
		out[k] = engine.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, ISARequest: p.ISARequest,
			LabelIgnored: p.LabelIgnored, LabelLimit: registry.MaxLabelBytes, ConfigIgnored: p.ConfigIgnored, ConfigLimit: registry.MaxConfigBytes}
	}
	return out
}

// cached answers refs from the resolver's cache; pending are the indexes
// of those it does not hold, reported as engine.ErrBudget until fetched.
func (p *PodMutator) cached(refs []string, auth registry.PullAuth) (out []resolved, pending []int) {
	out = make([]resolved, len(refs))
	cr, _ := p.res.(cachedResolver)
	for k, ref := range refs {
		if cr != nil {
			if ps, ok, err := cr.Cached(ref, auth); ok {
				out[k] = resolved{ref: ref, platforms: ps, err: err}
				continue
			}
		}
		out[k] = resolved{ref: ref, err: engine.ErrBudget}
		pending = append(pending, k)
	}
	return out, pending
}

// resolve looks up the images refs in parallel, within the budget; lookups
// still running when it ends are reported as engine.ErrBudget.
func (p *PodMutator) resolve(ctx context.Context, auth registry.PullAuth, refs []string) []resolved {
	if len(refs) == 0 {
		return nil
	}
	out, pending := p.cached(refs, auth)
	if len(pending) == 0 {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Budget)
	defer cancel()
	p.fetch(ctx, auth, refs, out, pending)
	return out
}

// fetch looks up refs[k] for every k of pending in parallel until ctx
// ends, filling out; lookups still running then stay engine.ErrBudget.
func (p *PodMutator) fetch(ctx context.Context, auth registry.PullAuth, refs []string, out []resolved, pending []int) {
	type result struct {
		k         int
		platforms []registry.Platform
		err       error
	}
	done := make(chan result, len(pending)) // buffered: late lookups never block
	for _, k := range pending[1:] {
		go func() {
			ps, err := p.res.Resolve(ctx, refs[k], auth)
			done <- result{k, ps, err}
		}()
	}
	set := func(r result) {
		out[r.k].platforms, out[r.k].err = r.platforms, r.err
		if r.err != nil && ctx.Err() != nil && !isClassified(r.err) {
			out[r.k].err = fmt.Errorf("%w: %w", engine.ErrBudget, r.err)
		}
	}
	// The first lookup on this goroutine: a pod with one image to look up
	// starts no goroutine.
	ps, err := p.res.Resolve(ctx, refs[pending[0]], auth)
	set(result{pending[0], ps, err})
	for range pending[1:] {
		select {
		case r := <-done:
			set(r)
		case <-ctx.Done():
			for { // take what finished at the same moment
				select {
				case r := <-done:
					set(r)
				default:
					return
				}
			}
		}
	}
}

func isClassified(err error) bool {
	var re *registry.Error
	return errors.As(err, &re)
}
