package imageisa

import (
	"context"
	"errors"
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
}

// Inferrer runs [Infer] with fixed limits, a cache by image digest and
// metrics. It is safe for concurrent use; two concurrent calls for the same
// digest both scan (callers that resolve images already coalesce).
type Inferrer struct {
	lim        Limits
	cache      *Cache
	failures   *cache.LRUExpireCache // image digest -> ErrFailedRecently error
	retryAfter time.Duration
	metrics    *Metrics
	now        func() time.Time
}

// NewInferrer returns an Inferrer.
func NewInferrer(o Options) *Inferrer {
	in := &Inferrer{lim: o.Limits.withDefaults(), metrics: o.Metrics, now: o.Now, retryAfter: o.RetryAfter}
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

// Cached answers from the cache alone: ok is false when the image digest dg
// was not scanned (or its outcome was evicted, or there is no cache). Within
// RetryAfter of a read of dg that failed for a passing reason, it answers
// an [ErrFailedRecently] error.
func (in *Inferrer) Cached(dg v1.Hash) (Result, error, bool) {
	if in.cache == nil {
		return Result{}, nil, false
	}
	if r, err, ok := in.cache.Get(dg); ok {
		in.metrics.hit()
		return r, err, true
	}
	if err, ok := in.failedRecently(dg); ok {
		return Result{}, err, true
	}
	return Result{}, nil, false
}

// Limits returns the limits every scan runs with.
func (in *Inferrer) Limits() Limits { return in.lim }

// Infer answers from the cache when img's digest was scanned before, else
// calls [Infer] and stores outcomes that do not depend on the moment.
func (in *Inferrer) Infer(ctx context.Context, img v1.Image) (Result, error) {
	dg, derr := img.Digest()
	if derr == nil && in.cache != nil {
		if r, err, ok := in.cache.Get(dg); ok {
			in.metrics.hit()
			return r, err
		}
	}
	start := in.now()
	r, err := Infer(ctx, img, in.lim)
	outcome := Outcome(r, err)
	in.metrics.scanned(outcome, r.Work, in.now().Sub(start).Seconds())
	if derr == nil && in.cache != nil && cacheable(err) {
		in.cache.Add(dg, r, err)
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
