package credprov

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/authn"
	"golang.org/x/sync/singleflight"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/isamatch/isamatch/pkg/registry/internal/slots"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// globalCacheKey is the cache key of a response with cacheKeyType Global.
const globalCacheKey = "<global>"

// Keychain is an [authn.Keychain] that gets registry
// credentials from the kubelet's image credential provider plugins
// (ecr-credential-provider, gcp-credential-provider, acr-credential-provider
// ...), configured as the kubelet's --image-credential-provider-config and
// --image-credential-provider-bin-dir configure them. Each provider whose
// matchImages match an image is run (at most once at a time per image),
// and its answer is cached per its cacheKeyType and cacheDuration (else the
// provider's defaultCacheDuration). Of the credentials all matching
// providers return, the one whose key matches the image most specifically
// is used; none matching means anonymous access.
//
// Unlike the kubelet, which tries each matching credential in turn and
// logs a failing plugin, Keychain uses one credential per
// image, and a plugin that fails, times out or answers garbage fails the
// resolution with an error naming the provider (never what it printed).
type Keychain struct {
	providers []credentialProvider
	timeout   time.Duration
	now       func() time.Time
	group     singleflight.Group
	cache     *credentialCache
	metrics   *Metrics
	// Plugin processes running, in all and per namespace.
	runs       *slots.Pool
	nsRuns     *slots.Keyed
	failureTTL time.Duration
}

var (
	_ authn.Keychain        = (*Keychain)(nil)
	_ authn.ContextKeychain = (*Keychain)(nil)
)

// New reads the CredentialProviderConfig at o.ConfigPath (a file or a
// directory of them) and checks that each provider's executable is in
// o.BinDir; a plugin is only ever run from there. It returns the error of
// [Options.Validate] first.
func New(o Options) (*Keychain, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	providers, err := loadCredentialProviderConfig(o.ConfigPath, o.BinDir)
	if err != nil {
		return nil, err
	}
	o = o.withDefaults()
	return &Keychain{
		providers:  providers,
		timeout:    o.Timeout,
		now:        o.now,
		cache:      newCredentialCache(o.cacheEntries, o.cacheBytes),
		metrics:    o.Metrics,
		runs:       slots.NewPool(o.MaxRuns, "credential provider plugin processes"),
		nsRuns:     slots.NewKeyed(o.MaxRunsPerNamespace, "credential provider plugin processes of namespace"),
		failureTTL: failureTTL,
	}, nil
}

// Resolve implements [authn.Keychain].
func (k *Keychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), target)
}

// ResolveContext implements [authn.ContextKeychain]: ctx bounds the wait
// for a plugin (which runs for at most the plugin timeout either way).
func (k *Keychain) ResolveContext(ctx context.Context, target authn.Resource) (authn.Authenticator, error) {
	image := imageOfResource(target)
	var entries []authEntry
	for i := range k.providers {
		p := &k.providers[i]
		if !slices.ContainsFunc(p.matchImages, func(m string) bool { return imageMatches(m, image) }) {
			continue
		}
		got, err := k.provide(ctx, i, image)
		if err != nil {
			return nil, err
		}
		entries = append(entries, got...)
	}
	e, ok := pickAuth(image, entries)
	if !ok {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: e.username, Password: e.password}), nil
}

// pickAuth chooses, as the kubelet's keyring orders them, the first entry
// whose key matches image in reverse lexical order of the keys (so
// "r.io/team/app" before "r.io/team" before "r.io"), then an entry for
// index.docker.io if image is on Docker Hub.
func pickAuth(image string, entries []authEntry) (authEntry, bool) {
	sorted := slices.Clone(entries)
	slices.SortStableFunc(sorted, func(a, b authEntry) int { return strings.Compare(b.key, a.key) })
	for _, e := range sorted {
		if imageMatches(e.key, image) {
			return e, true
		}
	}
	if isDockerHubImage(image) {
		for _, e := range sorted {
			if e.key == "index.docker.io" {
				return e, true
			}
		}
	}
	return authEntry{}, false
}

// failureKey is the cache key of provider i's failure for registry.
func failureKey(i int, registry string) string {
	return strconv.Itoa(i) + "\x01" + registry
}

// provide returns provider i's credentials for image: cached under the
// image, its registry or globally, else from one run of the plugin shared
// by concurrent callers. A recent failure for the image's registry is
// returned as it was.
func (k *Keychain) provide(ctx context.Context, i int, image string) ([]authEntry, error) {
	prefix := strconv.Itoa(i) + "\x00"
	now := k.now()
	for _, key := range []string{image, registryOfImage(image), globalCacheKey} {
		if got, _, ok := k.cache.get(prefix+key, now); ok {
			k.metrics.pluginCacheHit(k.providers[i].name)
			return got, nil
		}
	}
	if _, err, ok := k.cache.get(failureKey(i, registryOfImage(image)), now); ok {
		k.metrics.pluginCacheHit(k.providers[i].name)
		return nil, err
	}
	namespace := slots.Namespace(ctx)
	ch := k.group.DoChan(prefix+image, func() (any, error) {
		// Shared by every caller: no single caller's cancellation ends it.
		return k.run(context.WithoutCancel(ctx), i, image, namespace)
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("credential provider %s: %w", k.providers[i].name, ctx.Err())
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.([]authEntry), nil
	}
}

// run runs provider i's plugin for image, in a slot of all plugin runs
// and of namespace's, and caches its answer or its failure.
func (k *Keychain) run(ctx context.Context, i int, image, namespace string) ([]authEntry, error) {
	p := &k.providers[i]
	log := logr.FromContextOrDiscard(ctx).WithValues("credentialProvider", p.name, "image", image)
	// The wait for a slot is bounded like a run; a wait that ends is not
	// the plugin's failure and is not cached.
	wctx, cancel := context.WithTimeout(ctx, k.timeout)
	release, err := slots.AcquireAll(wctx, k.runs.Acquire,
		func(ctx context.Context) (func(), error) { return k.nsRuns.Acquire(ctx, namespace) })
	cancel()
	if err != nil {
		return nil, fmt.Errorf("credential provider %s: %w", p.name, err)
	}
	start := time.Now()
	resp, stderr, err := runPlugin(ctx, p, image, k.timeout)
	release()
	k.metrics.pluginRun(p.name, pluginResult(err), time.Since(start).Seconds())
	if err != nil {
		// The plugin's stderr goes to the webhook's log (as the kubelet
		// logs it), never into the error users see.
		log.Error(err, "Credential provider failed", "stderr", sanitize.Line(string(stderr), maxPluginStderr))
		if k.failureTTL > 0 {
			k.cache.add(namespace, failureKey(i, registryOfImage(image)), nil, err, k.now().Add(k.failureTTL))
		}
		return nil, err
	}
	log.V(1).Info("Credential provider answered", "cacheKeyType", resp.cacheKeyType, "credentials", len(resp.auth))
	ttl := p.defaultCache
	if resp.cacheFor != nil {
		ttl = *resp.cacheFor
	}
	if ttl > 0 {
		key := image
		switch resp.cacheKeyType {
		case credentialproviderv1.RegistryPluginCacheKeyType:
			key = registryOfImage(image)
		case credentialproviderv1.GlobalPluginCacheKeyType:
			key = globalCacheKey
		}
		k.cache.add(namespace, strconv.Itoa(i)+"\x00"+key, resp.auth, nil, k.now().Add(ttl))
	}
	return resp.auth, nil
}

// pluginResult is the result label of a plugin run that returned err.
func pluginResult(err error) string {
	switch {
	case err == nil:
		return pluginOK
	case errors.Is(err, context.DeadlineExceeded):
		return pluginTimeout
	}
	return pluginError
}
