package imageisa

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the inferrer's Prometheus collectors. Create them with
// [NewMetrics], register them with [Metrics.Register] and pass them in
// [Options].
type Metrics struct {
	// Scans counts images scanned (cache misses), by outcome: "isa" (a
	// requirement was read), "none" (the binary records none), "not-found",
	// "not-elf", "no-entrypoint", "malformed", "arch-mismatch", "limit",
	// "error" (transport, cancelled).
	Scans *prometheus.CounterVec
	// CacheHits counts Infer calls answered from the cache.
	CacheHits prometheus.Counter
	// FailureHits counts lookups answered from the short cache of failed
	// reads (ErrFailedRecently): the image is not read again until
	// Options.RetryAfter has passed.
	FailureHits prometheus.Counter
	// Bytes counts uncompressed layer bytes read.
	Bytes prometheus.Counter
	// Layers counts layer streams opened.
	Layers prometheus.Counter
	// Duration observes the time of scans.
	Duration prometheus.Histogram
}

// NewMetrics creates unregistered collectors named isamatch_elf_*.
func NewMetrics() *Metrics {
	return &Metrics{
		Scans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_elf_scans_total",
			Help: "Images whose entrypoint ELF was looked for, by outcome.",
		}, []string{"outcome"}),
		CacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_elf_cache_hits_total",
			Help: "ELF inferences answered from the cache.",
		}),
		FailureHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_elf_failure_cache_hits_total",
			Help: "ELF inferences answered from the short cache of failed image reads, retried after a delay.",
		}),
		Bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_elf_layer_bytes_total",
			Help: "Uncompressed layer bytes read to find entrypoint binaries.",
		}),
		Layers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_elf_layer_streams_total",
			Help: "Layer streams opened to find entrypoint binaries.",
		}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "isamatch_elf_scan_duration_seconds",
			Help:    "Duration of entrypoint ELF scans.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
}

// Collectors lists every collector, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Scans, m.CacheHits, m.FailureHits, m.Bytes, m.Layers, m.Duration}
}

func (m *Metrics) hit() {
	if m != nil {
		m.CacheHits.Inc()
	}
}

func (m *Metrics) failureHit() {
	if m != nil {
		m.FailureHits.Inc()
	}
}

func (m *Metrics) scanned(outcome string, w Work, seconds float64) {
	if m == nil {
		return
	}
	m.Scans.WithLabelValues(outcome).Inc()
	m.Bytes.Add(float64(w.Bytes))
	m.Layers.Add(float64(w.Layers))
	m.Duration.Observe(seconds)
}
