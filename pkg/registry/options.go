package registry

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
)

// Defaults of the Resolver options.
const (
	DefaultTTL              = 5 * time.Minute
	DefaultDigestTTL        = 24 * time.Hour
	DefaultErrorTTL         = 10 * time.Second
	DefaultFetchTimeout     = 15 * time.Second
	DefaultMaxConcurrent    = 32
	DefaultMaxManifestBytes = 4 << 20
	DefaultMaxCacheEntries  = 10000

	// DefaultMaxPerHost bounds the requests in flight to one registry
	// host, so a slow registry cannot take every slot.
	DefaultMaxPerHost = 8
	// DefaultMaxPerNamespace bounds the requests in flight for the pods
	// of one namespace, so one tenant cannot take every slot.
	DefaultMaxPerNamespace = 8
	// DefaultMaxFlights bounds the registry resolutions in progress at
	// once; DefaultMaxFlightsPerNamespace bounds those started for one
	// namespace. Each runs for at most the fetch timeout.
	DefaultMaxFlights             = 256
	DefaultMaxFlightsPerNamespace = 32
	// DefaultMaxResolutionBytes bounds the response bytes of one
	// resolution (every manifest, index and config of one image).
	DefaultMaxResolutionBytes = 8 << 20
	// DefaultMaxIndexEntries bounds the entries of the image indexes of
	// one image (nested ones included).
	DefaultMaxIndexEntries = 64
	// DefaultMaxCacheBytes bounds the memory of the cache (estimated).
	DefaultMaxCacheBytes = 64 << 20
)

// MaxLabelBytes is the largest "isa.request" image label read; a longer
// one is ignored unparsed (see Platform.LabelIgnored).
const MaxLabelBytes = 256

// MaxConfigBytes is the largest image config fetched and parsed, as the
// manifest states its size. Real configs are a few KiB (their layer history
// and labels); a larger one is not fetched: an index entry keeps the
// platform of its descriptor without the config's label
// (Platform.ConfigIgnored), a single image fails with the kind "tooLarge".
const MaxConfigBytes = 64 << 10

// KeychainFactory builds the credentials a pod with the given PullAuth pulls
// its images with. It is called once per resolution that misses the cache.
type KeychainFactory func(ctx context.Context, auth PullAuth) (authn.Keychain, error)

// AnonymousKeychain is the KeychainFactory used when no other is configured:
// every registry is accessed anonymously.
func AnonymousKeychain(context.Context, PullAuth) (authn.Keychain, error) {
	return anonymousKeychain{}, nil
}

type anonymousKeychain struct{}

func (anonymousKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return authn.Anonymous, nil
}

// Option configures a Resolver.
type Option func(*config)

type config struct {
	rootCAs          *x509.CertPool
	configErr        error
	insecure         map[string]bool
	mirrors          map[string]string // origin registry -> mirror host
	allowHosts       map[string]bool
	allowNets        []netip.Prefix
	clusterNets      []netip.Prefix
	perHost          int
	perNamespace     int
	maxFlights       int
	maxFlightsPerNS  int
	maxResolution    int64
	maxIndexEntries  int
	maxCacheBytes    int64
	maxDigestBytes   int64
	ttl              time.Duration
	digestTTL        time.Duration
	errorTTL         time.Duration
	fetchTimeout     time.Duration
	maxConcurrent    int
	maxManifestBytes int64
	maxCacheEntries  int
	keychains        KeychainFactory // podKeychains, then nodeKeychain
	podKeychains     KeychainFactory
	nodeKeychain     authn.Keychain
	credentialed     bool
	metrics          *Metrics
	transport        http.RoundTripper
	now              func() time.Time
}

// WithRegistryCA trusts the PEM-encoded certificates in pem (in addition to
// the system roots) for registry TLS. A PEM without any certificate makes
// every Resolve fail with a message naming the problem; use [LoadCA] to
// check a file up front.
func WithRegistryCA(pem []byte) Option {
	return func(c *config) {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if c.rootCAs != nil {
			pool = c.rootCAs
		}
		if !pool.AppendCertsFromPEM(pem) {
			c.configErr = fmt.Errorf("registry CA: no PEM certificate found; pass a file with one or more CERTIFICATE blocks")
			return
		}
		c.rootCAs = pool
	}
}

// LoadCA reads a PEM file of CA certificates for [WithRegistryCA] and checks
// that it holds at least one certificate.
func LoadCA(path string) ([]byte, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read registry CA: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("registry CA %s: no PEM certificate found; pass a file with one or more CERTIFICATE blocks", path)
	}
	return pem, nil
}

// WithInsecureRegistries lets the resolver fall back to plain HTTP for the
// given registry hosts ("host:port", as written in image references). Meant
// for tests and labs.
func WithInsecureRegistries(hosts ...string) Option {
	return func(c *config) {
		for _, h := range hosts {
			c.insecure[h] = true
		}
	}
}

// WithAllowedRegistries lets the resolver connect to registries at
// non-public addresses (loopback, link-local, private, CGNAT), which it
// otherwise refuses after DNS resolution. An entry is a host or host:port
// as written in image references (allowing whatever it resolves to), or an
// IP address or CIDR (allowing those addresses for any host name). Hosts
// given to [WithInsecureRegistries] are allowed too.
func WithAllowedRegistries(entries ...string) Option {
	return func(c *config) {
		hosts, nets, err := parseAllowed(entries)
		if err != nil {
			c.configErr = err
			return
		}
		for h := range hosts {
			c.allowHosts[h] = true
		}
		c.allowNets = append(c.allowNets, nets...)
	}
}

// WithClusterNetworks refuses registries at addresses in the given CIDRs,
// the cluster's pod and Service networks (which may be public addresses),
// unless [WithAllowedRegistries] allows them: a pod must not make the
// webhook reach cluster-internal services. A CIDR that does not parse
// makes every Resolve fail; use [CheckClusterNetworks] up front.
func WithClusterNetworks(cidrs ...string) Option {
	return func(c *config) {
		nets, err := parseClusterNetworks(cidrs)
		if err != nil {
			c.configErr = err
			return
		}
		c.clusterNets = append(c.clusterNets, nets...)
	}
}

// WithMaxPerHost bounds the registry requests in flight to one host
// (default 8).
func WithMaxPerHost(n int) Option {
	return func(c *config) { c.perHost = n }
}

// WithMaxPerNamespace bounds the registry requests in flight for the pods
// of one namespace (default 8).
func WithMaxPerNamespace(n int) Option {
	return func(c *config) { c.perNamespace = n }
}

// WithMaxFlights bounds the registry resolutions in progress at once, in
// all (default 256) and for one namespace (default 32). A resolution waits
// for a slot only while its first caller waits; it then runs for at most
// the fetch timeout.
func WithMaxFlights(total, perNamespace int) Option {
	return func(c *config) { c.maxFlights, c.maxFlightsPerNS = total, perNamespace }
}

// WithResolutionBudget bounds one resolution: at most bytes of registry
// responses (default 8 MiB) and entries image index entries, nested
// indexes included (default 64). Beyond either it fails with Kind
// "tooLarge", naming the limit.
func WithResolutionBudget(bytes int64, entries int) Option {
	return func(c *config) { c.maxResolution, c.maxIndexEntries = bytes, entries }
}

// WithMaxCacheBytes bounds the cache by its estimated memory (default
// 64 MiB); the least recently used entries are evicted first.
func WithMaxCacheBytes(n int64) Option {
	return func(c *config) { c.maxCacheBytes = n }
}

// WithTTL sets how long a resolved tag stays cached (default 5 minutes).
// Digest-pinned references are immutable and stay cached for the digest TTL.
func WithTTL(d time.Duration) Option {
	return func(c *config) { c.ttl = d }
}

// WithDigestTTL sets how long a digest-pinned reference stays cached
// (default 24 hours).
func WithDigestTTL(d time.Duration) Option {
	return func(c *config) { c.digestTTL = d }
}

// WithErrorTTL sets how long a failed resolution is remembered, so a dead
// registry is not asked again for every pod (default 10 seconds).
func WithErrorTTL(d time.Duration) Option {
	return func(c *config) { c.errorTTL = d }
}

// WithFetchTimeout bounds one shared resolution (default 15 seconds). Each
// caller still returns when its own context ends.
func WithFetchTimeout(d time.Duration) Option {
	return func(c *config) { c.fetchTimeout = d }
}

// WithMaxConcurrent bounds the number of registry HTTP requests in flight
// at once across all resolutions (default 32).
func WithMaxConcurrent(n int) Option {
	return func(c *config) { c.maxConcurrent = n }
}

// WithMaxManifestBytes bounds the size of any registry response (manifests,
// indexes, image configs); a larger one fails with Kind "tooLarge"
// (default 4 MiB).
func WithMaxManifestBytes(n int64) Option {
	return func(c *config) { c.maxManifestBytes = n }
}

// WithMaxCacheEntries bounds the number of cached resolutions (default
// 10,000).
func WithMaxCacheEntries(n int) Option {
	return func(c *config) { c.maxCacheEntries = n }
}

// WithKeychainFactory sets where a pod's own pull credentials come from,
// typically [KubernetesKeychain]; results are then cached per pod
// credential identity. The default is anonymous access.
func WithKeychainFactory(f KeychainFactory) Option {
	return func(c *config) {
		c.podKeychains = f
		c.credentialed = f != nil
		c.keychains = c.combinedKeychains()
	}
}

// WithNodeKeychain adds credentials every pod shares, as the kubelet's
// image credential providers serve every pod of a node (typically
// [CredentialProviders]). They are asked after the [WithKeychainFactory]
// ones (the kubelet too tries pull secrets first), for registries those do
// not name; alone, they keep one cache entry per image for all pods.
func WithNodeKeychain(kc authn.Keychain) Option {
	return func(c *config) {
		c.nodeKeychain = kc
		c.keychains = c.combinedKeychains()
	}
}

// combinedKeychains is the KeychainFactory of the pod's keychain, then the
// node's (nil when neither is set: anonymous).
func (c *config) combinedKeychains() KeychainFactory {
	pod, node := c.podKeychains, c.nodeKeychain
	switch {
	case node == nil:
		return pod
	case pod == nil:
		return func(context.Context, PullAuth) (authn.Keychain, error) { return node, nil }
	}
	return func(ctx context.Context, auth PullAuth) (authn.Keychain, error) {
		kc, err := pod(ctx, auth)
		if err != nil {
			return nil, err
		}
		return authn.NewMultiKeychain(kc, node), nil
	}
}

// WithMetrics makes the resolver count into m (see [NewMetrics]).
func WithMetrics(m *Metrics) Option {
	return func(c *config) { c.metrics = m }
}

// WithTransport replaces the base HTTP transport (the default is a clone of
// http.DefaultTransport honouring WithRegistryCA and refusing non-public
// addresses; a replacement does its own dialling, without that check).
func WithTransport(rt http.RoundTripper) Option {
	return func(c *config) { c.transport = rt }
}

// WithClock replaces time.Now for cache expiry (tests).
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}
