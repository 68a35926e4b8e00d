package registry

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the resolver's Prometheus collectors. Create them with
// [NewMetrics], register them with [Metrics.Register] (for example into
// controller-runtime's metrics.Registry) and pass them in Options.Metrics.
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
	// Errors counts failed Resolve calls by error kind: a registry's 429
	// is "rateLimited", whether answered or known from its Retry-After.
	Errors *prometheus.CounterVec
	// Duration observes the time of resolutions that went to the registry.
	Duration prometheus.Histogram
	// MirrorFallbacks counts resolutions that went past the first host
	// after it failed (a mirror of Options.Mirrors or Options.Hosts),
	// once per resolution.
	MirrorFallbacks prometheus.Counter
}

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
	}
}

// Collectors lists every collector, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.CacheHits, m.CacheMisses, m.DigestCacheHits, m.Coalesced, m.Requests, m.Errors, m.Duration, m.MirrorFallbacks,
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
