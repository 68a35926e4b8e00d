package mutate

import (
	"context"
	"slices"
	"sync"

	"github.com/go-logr/logr"

	"github.com/isamatch/isamatch/pkg/imageisa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/registry"
)

// PlatformInferrer reads what a platform of an image needs from the image
// itself, its entrypoint's ELF records ([imageisa.Platforms]). It reads
// layers, so it runs only off the admission path: admission asks Cached,
// the gate controller Infer.
type PlatformInferrer interface {
	// Cached answers from memory alone: ok is false when p of ref was not read.
	Cached(ref string, p registry.Platform) (r imageisa.Result, err error, ok bool)
	// Infer reads p's image (ref, with auth's credentials) until ctx ends.
	Infer(ctx context.Context, ref string, auth registry.PullAuth, p registry.Platform) (imageisa.Result, error)
}

var _ PlatformInferrer = (*imageisa.Platforms)(nil)

// maxInferScans bounds the images one pod's release reads at once.
const maxInferScans = 4

// inferable reports whether platform p carries no ISA of its own: no
// variant, no label (nor one ignored for its size), its config read, and a
// digest to read it by.
func inferable(p registry.Platform) bool {
	return p.Variant == "" && p.ISARequest == "" && p.LabelIgnored == 0 && p.ConfigIgnored == 0 && p.Digest != ""
}

// infers reports whether the decision for in may use inferred ISAs: an
// inferrer is set, a gating mode, and the pod asks nothing itself.
func (p *PodMutator) infers(in engine.Input) bool {
	return p.opts.Infer != nil && p.opts.Resolve != ResolveSync && in.Request == nil && in.QEMU == nil
}

// infer fills in the Inferred of images for their platforms that carry no
// ISA of their own. With scan it reads those not in the inferrer's cache
// (the gate controller, until ctx ends); without, it answers from the cache
// alone. It returns the indexes of the images with a platform not read
// yet: not in the cache, or (with scan) whose read ctx cut short (the read
// goes on in the background). A platform whose binary says nothing, or
// that cannot be read, keeps no requirement: it is treated as without
// inference.
func (p *PodMutator) infer(ctx context.Context, auth registry.PullAuth, images []resolved, scan bool) (unread []int) {
	type job struct{ k, j int }
	var jobs []job
	for k := range images {
		img := &images[k]
		if img.err != nil {
			continue
		}
		for j, pl := range img.platforms {
			if !inferable(pl) {
				continue
			}
			r, err, ok := p.opts.Infer.Cached(img.ref, pl)
			if !ok {
				jobs = append(jobs, job{k, j})
				continue
			}
			setInferred(img, j, r, err)
		}
	}
	if !scan {
		for _, jb := range jobs {
			if !slices.Contains(unread, jb.k) {
				unread = append(unread, jb.k)
			}
		}
		return unread
	}
	log := logr.FromContextOrDiscard(ctx)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxInferScans)
	for _, jb := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			img := &images[jb.k]
			r, err := p.opts.Infer.Infer(ctx, img.ref, auth, img.platforms[jb.j])
			cut := err != nil && ctx.Err() != nil
			if err != nil && !cut {
				log.V(1).Info("image ISA not inferred", "image", img.ref, "platform", platformString(img.platforms[jb.j]),
					"outcome", imageisa.Outcome(r, err), "error", err.Error())
			}
			mu.Lock()
			defer mu.Unlock()
			setInferred(img, jb.j, r, err)
			if cut && !slices.Contains(unread, jb.k) {
				unread = append(unread, jb.k)
			}
		}()
	}
	wg.Wait()
	slices.Sort(unread)
	return unread
}

// setInferred records r as platform j's requirement when it is one.
func setInferred(img *resolved, j int, r imageisa.Result, err error) {
	if err != nil || r.ISA == nil || string(r.ISA.Arch) != img.platforms[j].Architecture {
		return
	}
	if img.inferred == nil {
		img.inferred = make([]*engine.Inferred, len(img.platforms))
	}
	i := *r.ISA
	i.Unknown = nil
	img.inferred[j] = &engine.Inferred{ISA: i, Source: r.Source()}
}

// platformString names p for logs: os/architecture[/variant].
func platformString(p registry.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}
