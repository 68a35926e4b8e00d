package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/singleflight"

	"github.com/isamatch/isamatch/pkg/registry/internal/slots"
	"github.com/isamatch/isamatch/pkg/registry/netguard"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Resolver resolves image references to their platforms, with a cache per
// (reference, credential identity), a cache per manifest digest shared by
// every caller who has proved access to it (see fetchFrom), and concurrent
// identical lookups collapsed into one registry resolution. It is safe for
// concurrent use.
type Resolver struct {
	cfg       config
	transport http.RoundTripper
	flights   singleflight.Group
	// Slots of resolutions in progress, in all and per namespace.
	allFlights *slots.Pool
	nsFlights  *slots.Keyed
	cache      *byteCache
	// digests holds platforms by repository and manifest digest, across
	// credential identities; digestFlights collapses their GETs.
	digests       *byteCache
	digestFlights singleflight.Group
}

// result returns a copy of the entry for a caller who spelled the image ref.
func (e cacheEntry) result(ref string) ([]Platform, *Error) {
	if e.err != nil {
		if e.err.Ref != ref {
			// Same image spelled differently: name the caller's spelling.
			return nil, &Error{Kind: e.err.Kind, Ref: ref, Err: e.err.Err}
		}
		return nil, e.err
	}
	return slices.Clone(e.platforms), nil
}

// NewResolver returns a Resolver configured by o, or the error of
// [Options.Validate].
func NewResolver(o Options) (*Resolver, error) {
	c, err := o.config()
	if err != nil {
		return nil, err
	}
	base := c.transport
	if base == nil {
		guard, err := netguard.New(c.guard)
		if err != nil {
			return nil, fmt.Errorf("registry options: %w", err)
		}
		base = defaultBaseTransport(&c, guard)
	}
	return &Resolver{
		cfg: c,
		transport: &boundedTransport{
			next:       base,
			insecure:   c.insecure,
			global:     slots.NewPool(c.maxConcurrent, "registry request slots"),
			hosts:      slots.NewKeyed(c.perHost, "registry host"),
			namespaces: slots.NewKeyed(c.perNamespace, "namespace"),
			maxBytes:   c.maxManifestBytes,
			metrics:    c.metrics,
			limits:     newRateLimits(c.now),
		},
		allFlights: slots.NewPool(c.maxFlights, "resolutions in progress"),
		nsFlights:  slots.NewKeyed(c.maxFlightsPerNS, "resolutions of namespace"),
		cache:      newByteCache(c.maxCacheBytes, c.maxCacheEntries, c.now),
		digests:    newByteCache(c.maxDigestBytes, c.maxCacheEntries, c.now),
	}, nil
}

// Resolve returns the platforms of ref (attestation and unknown/unknown
// entries skipped), each with its image config's isa.request label. It
// returns when ctx ends even if the shared registry resolution goes on (its
// result is cached for the next caller). Errors are *Error values.
func (r *Resolver) Resolve(ctx context.Context, ref string, auth PullAuth) ([]Platform, error) {
	platforms, err := r.resolve(ctx, ref, auth)
	if err != nil {
		r.cfg.metrics.failed(err.Kind)
		return nil, err
	}
	return platforms, nil
}

// Cached answers from the cache alone and never blocks: ok is false when
// ref, spelled this way, has no live entry for auth's credentials (then call
// Resolve). A cached failure is returned as Resolve returns it.
func (r *Resolver) Cached(ref string, auth PullAuth) (platforms []Platform, ok bool, err error) {
	e, ok := r.lookup(ref + "\x00" + r.identity(auth))
	if !ok {
		return nil, false, nil
	}
	r.cfg.metrics.hit()
	platforms, rerr := e.result(ref)
	if rerr != nil {
		r.cfg.metrics.failed(rerr.Kind)
		return nil, true, rerr
	}
	return platforms, true, nil
}

func (r *Resolver) resolve(ctx context.Context, ref string, auth PullAuth) ([]Platform, *Error) {
	id := r.identity(auth)
	// Fast path: the reference exactly as spelled before (no parsing).
	rawKey := ref + "\x00" + id
	if e, ok := r.lookup(rawKey); ok {
		r.cfg.metrics.hit()
		return e.result(ref)
	}
	parsed, err := r.parse(ref)
	if err != nil {
		return nil, &Error{Kind: KindOther, Ref: ref, Err: errors.New(sanitize.Line("invalid image reference: "+err.Error(), maxMessageBytes))}
	}
	key := parsed.Name() + "\x00" + id
	if e, ok := r.lookup(key); ok {
		r.cfg.metrics.hit()
		r.store(rawKey, parsed, e)
		return e.result(ref)
	}

	for {
		leader := false
		ch := r.flights.DoChan(key, func() (any, error) {
			leader = true
			return r.flight(ctx, flightKeys{key, rawKey}, ref, parsed, auth), nil
		})
		select {
		case res := <-ch:
			e := res.Val.(cacheEntry)
			if e.slotWait && !leader && ctx.Err() == nil {
				// The wait that ended was another caller's: wait our own.
				continue
			}
			if !leader {
				r.cfg.metrics.coalesced()
			}
			return e.result(ref)
		case <-ctx.Done():
			return nil, &Error{Kind: KindTimeout, Ref: ref, Err: fmt.Errorf("waiting for the registry: %w", ctx.Err())}
		}
	}
}

// flightKeys are the cache keys of one resolution: the normalised
// reference and the caller's spelling of it.
type flightKeys struct{ key, raw string }

// flight is one shared registry resolution, started by the caller whose
// context is ctx.
func (r *Resolver) flight(ctx context.Context, keys flightKeys, ref string, parsed name.Reference, auth PullAuth) cacheEntry {
	if e, ok := r.lookup(keys.key); ok {
		r.cfg.metrics.hit()
		return e
	}
	// A resolution waits for its slots only while its first caller waits;
	// a wait that ends is not the registry's fault and is not cached.
	release, err := slots.AcquireAll(ctx, r.allFlights.Acquire,
		func(ctx context.Context) (func(), error) { return r.nsFlights.Acquire(ctx, auth.Namespace) })
	if err != nil {
		return cacheEntry{err: classify(ref, err), slotWait: true}
	}
	defer release()
	r.cfg.metrics.miss()
	// The shared resolution outlives any one caller: its own deadline, not
	// the first caller's cancellation.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.fetchTimeout)
	defer cancel()
	fctx = withResolution(fctx, &resolution{namespace: auth.Namespace,
		budget: &budget{maxBytes: r.cfg.maxResolution, maxEntries: int64(r.cfg.maxIndexEntries)}})
	start := time.Now()
	platforms, err := r.fetch(fctx, parsed, auth)
	r.cfg.metrics.observe(time.Since(start).Seconds())
	e := cacheEntry{platforms: platforms, err: classify(ref, err)}
	if errors.Is(err, slots.ErrWait) {
		e.slotWait = true
		return e
	}
	e = r.store(keys.key, parsed, e)
	if keys.raw != keys.key && !e.expires.IsZero() {
		r.store(keys.raw, parsed, e)
	}
	return e
}

func (r *Resolver) parse(ref string) (name.Reference, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	if r.cfg.insecure[parsed.Context().RegistryStr()] {
		return name.ParseReference(ref, name.Insecure)
	}
	return parsed, nil
}

// identity names the credentials a pod pulls with; equal identities share
// cache entries.
func (r *Resolver) identity(auth PullAuth) string {
	if !r.cfg.credentialed {
		return "anonymous"
	}
	sa := auth.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	secrets := auth.ImagePullSecrets
	if !sortedUnique(secrets) {
		// Never reorder the caller's slice.
		secrets = slices.Clone(secrets)
		slices.Sort(secrets)
		secrets = slices.Compact(secrets)
	}
	return auth.Namespace + "/" + sa + "/" + strings.Join(secrets, ",")
}

func sortedUnique(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

func (r *Resolver) lookup(key string) (cacheEntry, bool) {
	return r.cache.get(key)
}

// store caches e under key and returns it with its expiry. An entry that
// already has an expiry (an alias of a cached entry) keeps it.
func (r *Resolver) store(key string, ref name.Reference, e cacheEntry) cacheEntry {
	if e.expires.IsZero() {
		ttl := r.cfg.ttl
		if _, ok := ref.(name.Digest); ok {
			ttl = r.cfg.digestTTL
		}
		if e.err != nil {
			ttl = r.cfg.errorTTL
		}
		if ttl <= 0 {
			return e
		}
		e.expires = r.cfg.now().Add(ttl)
	}
	r.cache.add(key, e)
	return e
}

// fetch performs one registry resolution.
func (r *Resolver) fetch(ctx context.Context, ref name.Reference, auth PullAuth) ([]Platform, error) {
	kc, err := r.cfg.keychains(ctx, auth)
	if err != nil {
		return nil, err
	}
	return r.fetchMirrored(ctx, ref, kc)
}

// remoteOptions are the options of every registry read of one resolution.
func (r *Resolver) remoteOptions(ctx context.Context, kc authn.Keychain) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(r.transport),
		remote.WithAuthFromKeychain(kc),
		remote.WithUserAgent("isamatch-webhook"),
		remote.WithJobs(r.cfg.perHost),
		remote.WithRetryBackoff(remote.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 2}),
	}
}

// MustNewResolver is [NewResolver] for options known to be valid (tests,
// constants): it panics on the error NewResolver would return.
func MustNewResolver(o Options) *Resolver {
	r, err := NewResolver(o)
	if err != nil {
		panic(err)
	}
	return r
}
