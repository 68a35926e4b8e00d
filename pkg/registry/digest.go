package registry

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// fetchFrom reads the platforms of target (ref itself or its mirror, whose
// origin repository is origin) with kc.
//
// It first asks for the manifest's digest with a HEAD, with the caller's
// own credentials: an answer proves the caller may pull the image, and the
// platforms of a digest are content, the same for every caller, so they
// are shared across credentials under origin's repository and the digest.
// Only a miss GETs the manifest (by that digest, so what is shared is what
// the digest names) and its image configs; callers with other credentials
// who miss at once, each after its own HEAD, share that GET. A registry's
// pull quota counts manifest GETs, not HEADs.
//
// A HEAD answered 401, 403, 404 or 429, or failing on the network or a
// limit, is the caller's own error (a GET would fail alike): nothing
// shared reaches a caller whose HEAD failed. A registry that answers HEAD
// otherwise (405, 5xx, no Docker-Content-Digest) is read with a GET, as
// if HEAD did not exist, and what it returns is shared under the digest
// of the manifest read.
func (r *Resolver) fetchFrom(ctx context.Context, target name.Reference, origin name.Repository, kc authn.Keychain) ([]Platform, error) {
	// One puller: the HEAD and the GETs share one ping and token.
	p, err := remote.NewPuller(r.remoteOptions(ctx, markingKeychain{kc})...)
	if err != nil {
		return nil, err
	}
	desc, err := p.Head(ctx, target)
	if err != nil {
		if headIsAnswer(err) {
			return nil, err
		}
		platforms, digest, err := r.getPlatforms(ctx, p, target)
		if err == nil {
			r.share(digestKey(origin, digest), platforms)
		}
		return platforms, err
	}
	key := digestKey(origin, desc.Digest)
	if e, ok := r.digests.get(key); ok {
		r.cfg.metrics.digestHit()
		return e.platforms, nil
	}
	byDigest := target.Context().Digest(desc.Digest.String())
	get := func() ([]Platform, error) {
		platforms, _, err := r.getPlatforms(ctx, p, byDigest)
		if err == nil {
			r.share(key, platforms)
		}
		return platforms, err
	}
	leader := false
	ch := r.digestFlights.DoChan(key, func() (any, error) {
		leader = true
		return get()
	})
	select {
	case res := <-ch:
		switch {
		case res.Err == nil:
			if !leader {
				r.cfg.metrics.digestHit()
			}
			return res.Val.([]Platform), nil
		case leader:
			return nil, res.Err
		}
		// The GET that failed was made with another caller's credentials
		// and within its budget: make our own.
		return get()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// digestKey names the platforms of manifest digest d of repo in the
// digest cache.
func digestKey(repo name.Repository, d v1.Hash) string {
	return repo.Name() + "@" + d.String()
}

// share keeps platforms in the digest cache for the digest TTL. Entries are
// never modified: every caller gets a copy (cacheEntry.result).
func (r *Resolver) share(key string, platforms []Platform) {
	if r.cfg.digestTTL <= 0 || len(platforms) == 0 {
		return
	}
	r.digests.add(key, cacheEntry{platforms: platforms, expires: r.cfg.now().Add(r.cfg.digestTTL)})
}

// headIsAnswer reports whether a failed HEAD is the resolution's answer
// rather than a registry that does not answer HEAD usefully. A keychain
// that failed (a credential provider plugin that exited 1) fails a GET
// alike: asking again would run the plugin twice.
func headIsAnswer(err error) bool {
	var ke *keychainError
	if errors.As(err, &ke) {
		return true
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode == http.StatusTooManyRequests || kindOfStatus(te) != KindOther
	}
	return kindOf(err) != KindOther
}

// keychainError is an error of the keychain, not of the registry.
type keychainError struct{ err error }

func (e *keychainError) Error() string { return e.err.Error() }

func (e *keychainError) Unwrap() error { return e.err }

// markingKeychain marks the errors of its keychain as keychainErrors.
type markingKeychain struct{ kc authn.Keychain }

var _ authn.ContextKeychain = markingKeychain{}

func (m markingKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	return m.ResolveContext(context.Background(), target)
}

func (m markingKeychain) ResolveContext(ctx context.Context, target authn.Resource) (authn.Authenticator, error) {
	a, err := authn.Resolve(ctx, m.kc, target)
	if err != nil {
		return nil, &keychainError{err}
	}
	return a, nil
}
