package registry

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

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Bounds of the credentials cached from plugins; one namespace may fill a
// quarter of each.
const (
	DefaultCredentialCacheEntries = 1024
	DefaultCredentialCacheBytes   = 4 << 20
)

// Bounds of the plugin processes: each calls its cloud's API, and images
// on many hosts one provider matches (any AWS account's ECR host) would
// otherwise start one each.
const (
	// DefaultMaxPluginRuns bounds the plugin processes running at once.
	DefaultMaxPluginRuns = 8
	// DefaultMaxPluginRunsPerNamespace bounds those started for the
	// resolutions of one namespace.
	DefaultMaxPluginRunsPerNamespace = 2
	// DefaultCredentialFailureTTL is how long a plugin failure is
	// remembered per provider and registry, so a failing plugin is not run
	// again for every pod.
	DefaultCredentialFailureTTL = 10 * time.Second
)

// globalCacheKey is the cache key of a response with cacheKeyType Global.
const globalCacheKey = "<global>"

// CredentialProviders is an [authn.Keychain] that gets registry
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
// logs a failing plugin, CredentialProviders uses one credential per
// image, and a plugin that fails, times out or answers garbage fails the
// resolution with an error naming the provider (never what it printed).
type CredentialProviders struct {
	providers []credentialProvider
	timeout   time.Duration
	now       func() time.Time
	group     singleflight.Group
	cache     *credentialCache
	metrics   *Metrics
	// Plugin processes running, in all and per namespace.
	runs       *slots
	nsRuns     *keyedSlots
	maxRuns    int
	maxNSRuns  int
	failureTTL time.Duration
}

var (
	_ authn.Keychain        = (*CredentialProviders)(nil)
	_ authn.ContextKeychain = (*CredentialProviders)(nil)
)

// CredentialProviderOption configures [NewCredentialProviders].
type CredentialProviderOption func(*CredentialProviders)

// WithPluginTimeout bounds one plugin run (default
// [DefaultCredentialProviderTimeout]); its process group is killed past it.
func WithPluginTimeout(d time.Duration) CredentialProviderOption {
	return func(k *CredentialProviders) { k.timeout = d }
}

// WithCredentialCacheLimits bounds the cached plugin answers by number and
// by their estimated bytes (defaults [DefaultCredentialCacheEntries] and
// [DefaultCredentialCacheBytes]). One namespace may fill a quarter of
// each: past it, its own entries closest to expiry are evicted; when the
// cache is full, those of the namespace holding the most bytes.
func WithCredentialCacheLimits(entries int, bytes int64) CredentialProviderOption {
	return func(k *CredentialProviders) { k.cache.setLimits(entries, bytes) }
}

// WithPluginConcurrency bounds the plugin processes running at once, in
// all (default [DefaultMaxPluginRuns]) and for the resolutions of one
// namespace (default [DefaultMaxPluginRunsPerNamespace]). A run waits for
// its slots for at most the plugin timeout.
func WithPluginConcurrency(total, perNamespace int) CredentialProviderOption {
	return func(k *CredentialProviders) { k.maxRuns, k.maxNSRuns = total, perNamespace }
}

// WithCredentialFailureTTL sets how long a failed plugin run is
// remembered for its provider and registry (default
// [DefaultCredentialFailureTTL]; 0 disables).
func WithCredentialFailureTTL(d time.Duration) CredentialProviderOption {
	return func(k *CredentialProviders) { k.failureTTL = d }
}

// WithCredentialProviderMetrics counts plugin runs by result, their
// duration and the answers served from the cache, in m's
// isamatch_registry_credential_provider_* collectors (those of the
// resolver's [WithMetrics], usually).
func WithCredentialProviderMetrics(m *Metrics) CredentialProviderOption {
	return func(k *CredentialProviders) { k.metrics = m }
}

// withCredentialClock replaces time.Now (tests).
func withCredentialClock(now func() time.Time) CredentialProviderOption {
	return func(k *CredentialProviders) { k.now = now }
}

// NewCredentialProviders reads the CredentialProviderConfig at configPath
// (a file or a directory of them) and checks that each provider's
// executable is in binDir. A plugin is only ever run from binDir.
func NewCredentialProviders(configPath, binDir string, opts ...CredentialProviderOption) (*CredentialProviders, error) {
	providers, err := loadCredentialProviderConfig(configPath, binDir)
	if err != nil {
		return nil, err
	}
	k := &CredentialProviders{
		providers:  providers,
		timeout:    DefaultCredentialProviderTimeout,
		now:        time.Now,
		cache:      newCredentialCache(DefaultCredentialCacheEntries, DefaultCredentialCacheBytes),
		maxRuns:    DefaultMaxPluginRuns,
		maxNSRuns:  DefaultMaxPluginRunsPerNamespace,
		failureTTL: DefaultCredentialFailureTTL,
	}
	for _, o := range opts {
		o(k)
	}
	if k.maxRuns < 1 || k.maxNSRuns < 1 || k.maxNSRuns > k.maxRuns {
		return nil, fmt.Errorf("plugin concurrency %d in all, %d per namespace: want 1 <= per namespace <= in all", k.maxRuns, k.maxNSRuns)
	}
	if k.failureTTL < 0 {
		return nil, fmt.Errorf("credential failure TTL %v: want a duration >= 0", k.failureTTL)
	}
	k.runs = newSlots(k.maxRuns, "credential provider plugin processes")
	k.nsRuns = newKeyedSlots(k.maxNSRuns, "credential provider plugin processes of namespace")
	if k.timeout <= 0 {
		return nil, fmt.Errorf("credential provider timeout %v: want a duration > 0", k.timeout)
	}
	if k.cache.maxEntries < 1 || k.cache.maxBytes < 1 {
		return nil, fmt.Errorf("credential cache limits %d entries, %d bytes: want both >= 1", k.cache.maxEntries, k.cache.maxBytes)
	}
	return k, nil
}

// Resolve implements [authn.Keychain].
func (k *CredentialProviders) Resolve(target authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), target)
}

// ResolveContext implements [authn.ContextKeychain]: ctx bounds the wait
// for a plugin (which runs for at most the plugin timeout either way).
func (k *CredentialProviders) ResolveContext(ctx context.Context, target authn.Resource) (authn.Authenticator, error) {
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
func (k *CredentialProviders) provide(ctx context.Context, i int, image string) ([]authEntry, error) {
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
	namespace := resolutionOf(ctx).namespace
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
func (k *CredentialProviders) run(ctx context.Context, i int, image, namespace string) ([]authEntry, error) {
	p := &k.providers[i]
	log := logr.FromContextOrDiscard(ctx).WithValues("credentialProvider", p.name, "image", image)
	// The wait for a slot is bounded like a run; a wait that ends is not
	// the plugin's failure and is not cached.
	wctx, cancel := context.WithTimeout(ctx, k.timeout)
	release, err := acquireAll(wctx, k.runs.acquire,
		func(ctx context.Context) (func(), error) { return k.nsRuns.acquire(ctx, namespace) })
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
