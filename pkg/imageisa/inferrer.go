package imageisa

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/apimachinery/pkg/util/cache"
)

// Options configure an [Inferrer]. The zero value means: default limits, no
// cache, no metrics.
type Options struct {
	Limits Limits
	// CacheBytes bounds the outcome cache; 0 disables it (and RetryAfter).
	CacheBytes int64
	// RetryAfter is how long [Inferrer.Cached] answers [ErrFailedRecently]
	// for a digest whose read by [Platforms.Infer] failed for a passing
	// reason, before one read tries again: 0 means [DefaultRetryAfter], a
	// negative value remembers no failure.
	RetryAfter time.Duration
	// Metrics, when set, counts scans, cache hits, bytes and layers.
	Metrics *Metrics
	// Now is the clock for durations (tests); nil means time.Now.
	Now func() time.Time
	// MaxScans bounds the scans that run at once, across every caller; 0
	// means [DefaultMaxScans]. With Limits.MaxMemory it bounds the memory
	// all scans hold together, whatever images they read.
	MaxScans int
}

// DefaultMaxScans is the scans run at once when Options.MaxScans is 0:
// with the default MaxMemory of 16 MiB, 64 MiB of scan state at most.
const DefaultMaxScans = 4

// errBusy: no scan slot came free before the caller gave up. It says
// nothing of the image, so it is neither cached nor remembered.
var errBusy = errors.New("no ELF scan slot free")

// Inferrer runs [Infer] with fixed limits, a cache by [Key] and metrics, at
// most MaxScans at once. Unlike Infer it reads every layer stream to its
// end, within a budget, so that its digest is checked (Work.Unverified
// counts those left before). It is safe for concurrent use; two concurrent
// calls for the same digest both scan (callers that resolve images already
// coalesce).
type Inferrer struct {
	lim        Limits
	slots      chan struct{}
	cache      *Cache
	failures   *cache.LRUExpireCache // Key -> ErrFailedRecently error
	retryAfter time.Duration
	metrics    *Metrics
	now        func() time.Time
}

// NewInferrer returns an Inferrer.
func NewInferrer(o Options) *Inferrer {
	in := &Inferrer{lim: o.Limits.withDefaults(), metrics: o.Metrics, now: o.Now, retryAfter: o.RetryAfter}
	if o.MaxScans <= 0 {
		o.MaxScans = DefaultMaxScans
	}
	in.slots = make(chan struct{}, o.MaxScans)
	if in.now == nil {
		in.now = time.Now
	}
	if in.retryAfter == 0 {
		in.retryAfter = DefaultRetryAfter
	}
	if o.CacheBytes > 0 {
		in.cache = NewCache(o.CacheBytes)
		in.failures = newFailures(in.retryAfter, in.now)
	}
	return in
}

// Cached answers from the cache alone: ok is false when k was not scanned
// (or its outcome was evicted, or there is no cache). Within RetryAfter of
// a read of k that failed for a passing reason, it answers an
// [ErrFailedRecently] error.
func (in *Inferrer) Cached(k Key) (Result, error, bool) {
	if in.cache == nil {
		return Result{}, nil, false
	}
	if r, err, ok := in.cache.Get(k); ok {
		in.metrics.hit()
		return r, err, true
	}
	if err, ok := in.failedRecently(k); ok {
		return Result{}, err, true
	}
	return Result{}, nil, false
}

// Limits returns the limits every scan runs with.
func (in *Inferrer) Limits() Limits { return in.lim }

// acquire waits for a scan slot until ctx ends; release it when done.
func (in *Inferrer) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-in.slots }
	select {
	case in.slots <- struct{}{}: // a free slot is taken even when ctx has ended
		return release, nil
	default:
	}
	select {
	case in.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (%d scans running): %w", errBusy, cap(in.slots), context.Cause(ctx))
	}
}

// Infer answers from the cache when img's digest was scanned before, else
// waits for a scan slot (until ctx ends), scans and stores outcomes that do
// not depend on the moment. The cache key has no repository: use it for
// images the caller vouches for; [Platforms] keys by repository.
func (in *Inferrer) Infer(ctx context.Context, img v1.Image) (Result, error) {
	dg, derr := img.Digest()
	k := Key{Digest: dg}
	if derr == nil && in.cache != nil {
		if r, err, ok := in.cache.Get(k); ok {
			in.metrics.hit()
			return r, err
		}
	}
	release, err := in.acquire(ctx)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if derr != nil {
		return in.scan(ctx, nil, img)
	}
	return in.scan(ctx, &k, img)
}

// scan reads img, holding a slot, and stores the outcome under k (if not
// nil) when it does not depend on the moment.
func (in *Inferrer) scan(ctx context.Context, k *Key, img v1.Image) (Result, error) {
	start := in.now()
	r, err := infer(ctx, img, in.lim, true)
	outcome := Outcome(r, err)
	in.metrics.scanned(outcome, r.Work, in.now().Sub(start).Seconds())
	if k != nil && in.cache != nil && cacheable(err) {
		in.cache.Add(*k, r, err)
	}
	return r, err
}

// cacheable says whether an outcome is a property of the image alone (with
// these limits): a time limit, a transport error or a cancelled context is
// not.
func cacheable(err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrLimit):
		return !errors.Is(err, errTimeout)
	}
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotELF) || errors.Is(err, ErrNoEntrypoint) ||
		errors.Is(err, ErrMalformed) || errors.Is(err, ErrArchMismatch)
}

// Outcome names an Infer outcome for metrics and logs: "isa", "none",
// "not-found", "not-elf", "no-entrypoint", "malformed", "arch-mismatch",
// "limit", "failed-recently" (never a scan) or "error".
func Outcome(r Result, err error) string {
	switch {
	case err == nil && r.ISA != nil:
		return "isa"
	case err == nil:
		return "none"
	case errors.Is(err, ErrLimit):
		return "limit"
	case errors.Is(err, ErrNotFound):
		return "not-found"
	case errors.Is(err, ErrNotELF):
		return "not-elf"
	case errors.Is(err, ErrNoEntrypoint):
		return "no-entrypoint"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.Is(err, ErrArchMismatch):
		return "arch-mismatch"
	case errors.Is(err, ErrFailedRecently):
		return "failed-recently"
	}
	return "error"
}
