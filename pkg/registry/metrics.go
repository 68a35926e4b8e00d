package registry

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the resolver's Prometheus collectors. Create them with
// [NewMetrics], register them with [Metrics.Register] (for example into
// controller-runtime's metrics.Registry) and pass them with [WithMetrics].
type Metrics struct {
	// CacheHits counts Resolve calls answered from the cache.
	CacheHits prometheus.Counter
	// CacheMisses counts resolutions that went to the registry.
	CacheMisses prometheus.Counter
	// DigestCacheHits counts resolutions answered by a manifest HEAD with
	// the caller's credentials and the platforms already read for that
	// digest (by any caller), without a GET. They are cache misses too.
	DigestCacheHits prometheus.Counter
	// Coalesced counts Resolve calls that joined a resolution already in
	// flight for the same image and credentials.
	Coalesced prometheus.Counter
	// Requests counts HTTP requests sent to registries, by type
	// ("ping", "token", "head" for a manifest HEAD, "manifest" for a
	// manifest GET, "blob").
	Requests *prometheus.CounterVec
	// Errors counts failed Resolve calls by error kind.
	Errors *prometheus.CounterVec
	// Duration observes the time of resolutions that went to the registry.
	Duration prometheus.Histogram
	// MirrorFallbacks counts resolutions that fell back to the origin
	// registry after its mirror failed (see WithMirrors).
	MirrorFallbacks prometheus.Counter
	// CredentialProviderRuns counts runs of credential provider plugins
	// (see [NewCredentialProviders]) by provider name and result: "ok",
	// "error" (exit status, garbage, too much output) or "timeout".
	// Provider names come from the admin's config, at most 64.
	CredentialProviderRuns *prometheus.CounterVec
	// CredentialProviderDuration observes the time of each plugin run, by
	// provider name (as the kubelet's
	// kubelet_credential_provider_plugin_duration does).
	CredentialProviderDuration *prometheus.HistogramVec
	// CredentialProviderCacheHits counts credentials answered from the
	// cache of plugin answers, without a run, by provider name.
	CredentialProviderCacheHits *prometheus.CounterVec
}

// Results of a credential provider plugin run, the values of the result
// label of isamatch_registry_credential_provider_runs_total.
const (
	pluginOK      = "ok"
	pluginError   = "error"
	pluginTimeout = "timeout"
)

// NewMetrics creates unregistered collectors named isamatch_registry_*.
func NewMetrics() *Metrics {
	return &Metrics{
		CacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_registry_cache_hits_total",
			Help: "Image resolutions answered from the cache.",
		}),
		CacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_registry_cache_misses_total",
			Help: "Image resolutions that went to the registry.",
		}),
		DigestCacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_registry_digest_cache_hits_total",
			Help: "Image resolutions answered by a manifest HEAD and the platforms cached for its digest, without a GET.",
		}),
		Coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_registry_coalesced_total",
			Help: "Image resolutions that joined an identical one already in flight.",
		}),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_registry_requests_total",
			Help: "HTTP requests sent to registries, by type.",
		}, []string{"type"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_registry_errors_total",
			Help: "Failed image resolutions, by kind.",
		}, []string{"kind"}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "isamatch_registry_resolve_duration_seconds",
			Help:    "Duration of image resolutions that went to the registry.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
		MirrorFallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_registry_mirror_fallbacks_total",
			Help: "Image resolutions that fell back to the origin registry after its mirror failed.",
		}),
		CredentialProviderRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_registry_credential_provider_runs_total",
			Help: "Runs of image credential provider plugins, by provider and result (ok, error, timeout).",
		}, []string{"provider", "result"}),
		// The kubelet's buckets (the defaults, to 10s), then up to the
		// longest --image-credential-provider-timeout.
		CredentialProviderDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "isamatch_registry_credential_provider_duration_seconds",
			Help:    "Duration of image credential provider plugin runs, by provider.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"provider"}),
		CredentialProviderCacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_registry_credential_provider_cache_hits_total",
			Help: "Registry credentials answered from the cache of credential provider answers, without a plugin run, by provider.",
		}, []string{"provider"}),
	}
}

// Collectors lists every collector, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.CacheHits, m.CacheMisses, m.DigestCacheHits, m.Coalesced, m.Requests, m.Errors, m.Duration, m.MirrorFallbacks,
		m.CredentialProviderRuns, m.CredentialProviderDuration, m.CredentialProviderCacheHits,
	}
}

func (m *Metrics) hit() {
	if m != nil {
		m.CacheHits.Inc()
	}
}

func (m *Metrics) miss() {
	if m != nil {
		m.CacheMisses.Inc()
	}
}

func (m *Metrics) digestHit() {
	if m != nil {
		m.DigestCacheHits.Inc()
	}
}

func (m *Metrics) coalesced() {
	if m != nil {
		m.Coalesced.Inc()
	}
}

func (m *Metrics) request(typ string) {
	if m != nil {
		m.Requests.WithLabelValues(typ).Inc()
	}
}

func (m *Metrics) failed(kind string) {
	if m != nil {
		m.Errors.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) observe(seconds float64) {
	if m != nil {
		m.Duration.Observe(seconds)
	}
}

func (m *Metrics) mirrorFallback() {
	if m != nil {
		m.MirrorFallbacks.Inc()
	}
}

func (m *Metrics) pluginRun(provider, result string, seconds float64) {
	if m != nil {
		m.CredentialProviderRuns.WithLabelValues(provider, result).Inc()
		m.CredentialProviderDuration.WithLabelValues(provider).Observe(seconds)
	}
}

func (m *Metrics) pluginCacheHit(provider string) {
	if m != nil {
		m.CredentialProviderCacheHits.WithLabelValues(provider).Inc()
	}
}
