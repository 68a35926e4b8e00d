package credprov

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the credential providers' Prometheus collectors, named
// isamatch_registry_credential_provider_*. Create them with [NewMetrics],
// register [Metrics.Collectors] (for example into controller-runtime's
// metrics.Registry) and pass them in Options.Metrics.
type Metrics struct {
	// Runs counts runs of credential provider plugins by provider name and
	// result: "ok", "error" (exit status, garbage, too much output) or
	// "timeout". Provider names come from the admin's config, at most 64.
	Runs *prometheus.CounterVec
	// Duration observes the time of each plugin run, by provider name (as
	// the kubelet's kubelet_credential_provider_plugin_duration does).
	Duration *prometheus.HistogramVec
	// CacheHits counts credentials answered from the cache of plugin
	// answers, without a run, by provider name.
	CacheHits *prometheus.CounterVec
}

// Results of a credential provider plugin run, the values of the result
// label of isamatch_registry_credential_provider_runs_total.
const (
	pluginOK      = "ok"
	pluginError   = "error"
	pluginTimeout = "timeout"
)

// NewMetrics creates unregistered collectors.
func NewMetrics() *Metrics {
	return &Metrics{
		Runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_registry_credential_provider_runs_total",
			Help: "Runs of image credential provider plugins, by provider and result (ok, error, timeout).",
		}, []string{"provider", "result"}),
		// The kubelet's buckets (the defaults, to 10s), then up to the
		// longest Timeout.
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "isamatch_registry_credential_provider_duration_seconds",
			Help:    "Duration of image credential provider plugin runs, by provider.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"provider"}),
		CacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_registry_credential_provider_cache_hits_total",
			Help: "Registry credentials answered from the cache of credential provider answers, without a plugin run, by provider.",
		}, []string{"provider"}),
	}
}

// Collectors lists every collector, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Runs, m.Duration, m.CacheHits}
}

func (m *Metrics) pluginRun(provider, result string, seconds float64) {
	if m != nil {
		m.Runs.WithLabelValues(provider, result).Inc()
		m.Duration.WithLabelValues(provider).Observe(seconds)
	}
}

func (m *Metrics) pluginCacheHit(provider string) {
	if m != nil {
		m.CacheHits.WithLabelValues(provider).Inc()
	}
}
