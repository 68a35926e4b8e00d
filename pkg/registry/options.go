package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/isamatch/isamatch/pkg/registry/netguard"
)

// Options configures a Resolver. The zero value of every field is its
// default (documented on the field), so Options{} resolves anonymously from
// public registries; [Options.Validate] names the first bad field.
type Options struct {
	// RegistryCA is PEM-encoded CA certificates trusted for registry TLS
	// beside the system roots ([LoadCA] reads and checks a file).
	RegistryCA []byte
	// InsecureRegistries are registry hosts ("host:port", as written in
	// image references) spoken to over plain HTTP when HTTPS fails. Meant
	// for tests and labs.
	InsecureRegistries []string
	// AllowedRegistries may be at non-public addresses (loopback,
	// link-local, private, CGNAT), which the resolver otherwise refuses
	// after DNS resolution: a host or host:port as written in image
	// references (allowing whatever it resolves to), or an IP address or
	// CIDR (allowing those addresses for any host name). InsecureRegistries
	// and mirrors are allowed too. See package netguard.
	AllowedRegistries []string
	// ClusterNetworks are the cluster's pod and Service CIDRs (which may be
	// public addresses): registries there are refused unless
	// AllowedRegistries allows them, so a pod cannot make the webhook reach
	// cluster-internal services.
	ClusterNetworks []string
	// Mirrors resolve the images of a registry through a mirror, as
	// containerd's hosts.toml does for the nodes' pulls: each is
	// "REGISTRY=MIRROR" (see [ParseMirrors]), at most 16. A mirror is asked
	// first; when it fails for any reason (unreachable, not found,
	// unauthorized...) the origin registry is asked within what is left of
	// the fetch timeout, as containerd falls back to the upstream server.
	// A mirror may live at a non-public address, and is spoken to over
	// plain HTTP when it is also in InsecureRegistries. Results are cached
	// under the origin reference.
	Mirrors []string
	// Hosts resolves the images of registries through the hosts of a
	// containerd hosts directory ([ReadHostsDir]), as the nodes' containerd
	// pulls them: for a tag, the hosts with the resolve capability in file
	// order, for a digest those with pull, each asked when the one before
	// failed for any reason, then the server. Their hosts may live at
	// non-public addresses, as mirrors may; an http:// host is spoken to
	// over plain HTTP, ca and skip_verify apply to that host alone. A
	// registry may not be in both Mirrors and a directory of its own;
	// Mirrors wins over _default. Nil: none.
	Hosts *Hosts

	// MaxPerHost bounds the registry requests in flight to one host
	// (0: [DefaultMaxPerHost]).
	MaxPerHost int
	// MaxPerNamespace bounds the registry requests in flight for the pods
	// of one namespace (0: [DefaultMaxPerNamespace]).
	MaxPerNamespace int
	// MaxResolutionBytes bounds the registry responses of one resolution
	// (0: [DefaultMaxResolutionBytes]) and MaxIndexEntries its image index
	// entries, nested indexes included (0: [DefaultMaxIndexEntries]).
	// Beyond either it fails with Kind "tooLarge", naming the limit.
	MaxResolutionBytes int64
	MaxIndexEntries    int
	// MaxCacheBytes bounds the cache by its estimated memory (0:
	// [DefaultMaxCacheBytes]); the least recently used entries go first.
	MaxCacheBytes int64
	// MaxDigestCacheBytes bounds the cache of platforms by manifest digest,
	// shared across credentials (0: [DefaultMaxDigestCacheBytes]).
	MaxDigestCacheBytes int64
	// TTL is how long a resolved tag stays cached (0: [DefaultTTL];
	// negative: tags are not cached). Digest-pinned references are
	// immutable and stay cached for a day.
	TTL time.Duration
	// IgnoreBareImageLabel reads an image's request from its label
	// io.isamatch.isa.request only, not from the paper's bare isa.request
	// (for clusters where that label means something else).
	IgnoreBareImageLabel bool

	// Keychains is where a pod's own pull credentials come from, typically
	// [KubernetesKeychain]; results are then cached per pod credential
	// identity. Nil: anonymous access.
	Keychains KeychainFactory
	// NodeKeychain holds credentials every pod shares, as the kubelet's
	// image credential providers serve every pod of a node (typically
	// package credprov's Keychain). It is asked after Keychains (the
	// kubelet too tries pull secrets first), for registries those do not
	// name; alone, it keeps one cache entry per image for all pods.
	NodeKeychain authn.Keychain
	// Metrics, when set, counts into these collectors ([NewMetrics]).
	Metrics *Metrics
	// Transport replaces the base HTTP transport (the default is a clone
	// of http.DefaultTransport honouring RegistryCA and refusing
	// non-public addresses; a replacement does its own dialling, without
	// that check, and its own TLS: RegistryCA and the ca and skip_verify
	// of Hosts do not apply to it).
	Transport http.RoundTripper

	// Tuning knobs only the package's tests change; zero means the default.
	fetchTimeout     time.Duration
	maxConcurrent    int
	maxFlights       int
	maxFlightsPerNS  int
	maxManifestBytes int64
	maxCacheEntries  int
	now              func() time.Time
}

// Defaults of the Options fields.
const (
	DefaultTTL = 5 * time.Minute
	// DefaultMaxPerHost bounds the requests in flight to one registry
	// host, so a slow registry cannot take every slot.
	DefaultMaxPerHost = 8
	// DefaultMaxPerNamespace bounds the requests in flight for the pods
	// of one namespace, so one tenant cannot take every slot.
	DefaultMaxPerNamespace = 8
	// DefaultMaxResolutionBytes bounds the response bytes of one
	// resolution (every manifest, index and config of one image).
	DefaultMaxResolutionBytes = 8 << 20
	// DefaultMaxIndexEntries bounds the entries of the image indexes of
	// one image (nested ones included).
	DefaultMaxIndexEntries = 64
	// DefaultMaxCacheBytes bounds the memory of the cache (estimated).
	DefaultMaxCacheBytes = 64 << 20
	// DefaultMaxDigestCacheBytes bounds the memory of the cache of
	// platforms by manifest digest (estimated).
	DefaultMaxDigestCacheBytes = 16 << 20
)

// Settings of the resolver no user changes.
const (
	digestTTL        = 24 * time.Hour
	errorTTL         = 10 * time.Second
	fetchTimeout     = 15 * time.Second
	maxConcurrent    = 32
	maxManifestBytes = 4 << 20
	maxCacheEntries  = 10000
	// maxFlights bounds the registry resolutions in progress at once;
	// maxFlightsPerNamespace those started for one namespace. Each runs
	// for at most the fetch timeout.
	maxFlights             = 256
	maxFlightsPerNamespace = 32
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

// anonymousKeychains is the KeychainFactory used when no other is configured:
// every registry is accessed anonymously.
func anonymousKeychains(context.Context, PullAuth) (authn.Keychain, error) {
	return anonymousKeychain{}, nil
}

type anonymousKeychain struct{}

func (anonymousKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return authn.Anonymous, nil
}

// Validate reports the first field of o that is out of range or does not
// parse, naming the field, the value and what is wanted.
func (o Options) Validate() error {
	_, err := o.config()
	return err
}

// config is what a Resolver runs with: o with its defaults filled in and
// its text parsed.
type config struct {
	rootCAs          *x509.CertPool
	insecure         map[string]bool
	mirrors          map[string]string // origin registry -> mirror host
	hosts            *Hosts
	hostTLS          map[string]*tls.Config // hosts with ca or skip_verify of their own
	guard            netguard.Options
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
	keychains        KeychainFactory // the pod's, then the node's
	credentialed     bool
	bareLabel        bool
	metrics          *Metrics
	transport        http.RoundTripper
	now              func() time.Time
}

// config checks o and fills in its defaults.
func (o Options) config() (config, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxPerHost", int64(o.MaxPerHost)}, {"MaxPerNamespace", int64(o.MaxPerNamespace)},
		{"MaxResolutionBytes", o.MaxResolutionBytes}, {"MaxIndexEntries", int64(o.MaxIndexEntries)},
		{"MaxCacheBytes", o.MaxCacheBytes}, {"MaxDigestCacheBytes", o.MaxDigestCacheBytes},
	} {
		if f.v < 0 {
			return config{}, fmt.Errorf("registry options: %s %d: want a number >= 1, or 0 for the default", f.name, f.v)
		}
	}
	c := config{
		insecure:         map[string]bool{},
		perHost:          or(o.MaxPerHost, DefaultMaxPerHost),
		perNamespace:     or(o.MaxPerNamespace, DefaultMaxPerNamespace),
		maxFlights:       or(o.maxFlights, maxFlights),
		maxFlightsPerNS:  or(o.maxFlightsPerNS, maxFlightsPerNamespace),
		maxResolution:    or(o.MaxResolutionBytes, DefaultMaxResolutionBytes),
		maxIndexEntries:  or(o.MaxIndexEntries, DefaultMaxIndexEntries),
		maxCacheBytes:    or(o.MaxCacheBytes, DefaultMaxCacheBytes),
		maxDigestBytes:   or(o.MaxDigestCacheBytes, DefaultMaxDigestCacheBytes),
		ttl:              or(o.TTL, DefaultTTL),
		digestTTL:        digestTTL,
		errorTTL:         errorTTL,
		fetchTimeout:     or(o.fetchTimeout, fetchTimeout),
		maxConcurrent:    or(o.maxConcurrent, maxConcurrent),
		maxManifestBytes: or(o.maxManifestBytes, maxManifestBytes),
		maxCacheEntries:  or(o.maxCacheEntries, maxCacheEntries),
		keychains:        combinedKeychains(o.Keychains, o.NodeKeychain),
		credentialed:     o.Keychains != nil,
		bareLabel:        !o.IgnoreBareImageLabel,
		metrics:          o.Metrics,
		transport:        o.Transport,
		now:              o.now,
	}
	if c.now == nil {
		c.now = time.Now
	}
	for i, h := range o.InsecureRegistries {
		if h == "" || strings.Contains(h, "/") {
			return config{}, fmt.Errorf("registry options: InsecureRegistries[%d] %q: want HOST:PORT without scheme or path", i, h)
		}
		c.insecure[h] = true
	}
	if len(o.RegistryCA) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(o.RegistryCA) {
			return config{}, errors.New("registry options: RegistryCA: no PEM certificate found; pass a file with one or more CERTIFICATE blocks")
		}
		c.rootCAs = pool
	}
	mirrors, err := ParseMirrors(o.Mirrors)
	if err != nil {
		return config{}, fmt.Errorf("registry options: Mirrors: %w", err)
	}
	c.mirrors = mirrors
	for _, r := range o.Hosts.Registries() {
		if m, ok := mirrors[r]; ok {
			return config{}, fmt.Errorf("registry options: registry %s is mirrored by %s in Mirrors (--registry-mirror) and has a directory in the hosts dir (--registry-hosts-dir); configure it in one place", r, m)
		}
	}
	c.hosts = o.Hosts
	eps := o.Hosts.all()
	if c.hostTLS, err = hostTLS(eps, c.rootCAs); err != nil {
		return config{}, fmt.Errorf("registry options: Hosts: %w", err)
	}
	// Insecure registries and mirrors are named by the operator: the
	// guard dials them wherever they are.
	c.guard = netguard.Options{Allowed: o.AllowedRegistries, ClusterNetworks: o.ClusterNetworks}
	c.guard.Hosts = append(c.guard.Hosts, o.InsecureRegistries...)
	for _, m := range mirrors {
		c.guard.Hosts = append(c.guard.Hosts, m)
	}
	// The hosts of a hosts directory are named by the operator, as
	// mirrors are; an http:// one is plain HTTP as an insecure registry.
	for _, e := range eps {
		if e.scheme == "http" {
			c.insecure[e.host] = true
		}
		if !e.origin {
			c.guard.Hosts = append(c.guard.Hosts, e.host)
		}
	}
	if err := c.guard.Validate(); err != nil {
		return config{}, fmt.Errorf("registry options: %w", err)
	}
	return c, nil
}

// or is v, or def when v is zero.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// LoadCA reads a PEM file of CA certificates for Options.RegistryCA and
// checks that it holds at least one certificate.
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

// combinedKeychains is the KeychainFactory of the pod's keychain, then the
// node's (anonymous when neither is set).
func combinedKeychains(pod KeychainFactory, node authn.Keychain) KeychainFactory {
	switch {
	case pod == nil && node == nil:
		return anonymousKeychains
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
