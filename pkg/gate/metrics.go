package gate

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts the controller's work. Register Collectors with the
// manager's registry (controller-runtime's metrics.Registry).
type Metrics struct {
	// Releases counts released pods by reason: "resolved", "timeout"
	// (past the bound, with what was known), "denied" (the pod's request,
	// images or own affinity contradict each other), "skipped" (a pod
	// isamatch does not place that carried the gate) and "refused" (the
	// API server refused the affinity: released with the gate removed
	// only).
	Releases *prometheus.CounterVec
	// Held is how long pods were gated, from creation to release.
	Held prometheus.Histogram
	// Deferred counts calls that gave the worker back without releasing
	// the pod, by reason: DeferredPending (its images were still being
	// looked up when the attempt ended) and DeferredNamespaceBusy (its
	// namespace had its share of the workers).
	Deferred *prometheus.CounterVec
	// Alive is 1 while a gate controller holds its Lease, as this
	// replica's LeaseWatch last read it, else 0: admission then resolves
	// images instead of gating pods.
	Alive prometheus.Gauge
}

// Reasons a call is deferred (Metrics.Deferred).
const (
	DeferredPending       = "pending"
	DeferredNamespaceBusy = "namespaceBusy"
)

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Releases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_webhook_gate_releases_total",
			Help: "Pods whose scheduling gate the isamatch gate controller removed, by reason.",
		}, []string{"reason"}),
		Held: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "isamatch_webhook_gate_held_seconds",
			Help:    "Time from a gated pod's creation to its release by the isamatch gate controller.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120},
		}),
		Deferred: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_webhook_gate_deferred_total",
			Help: "Gate controller calls that gave their worker back and asked to be called again, by reason: pending (images still being looked up), namespaceBusy (the namespace had its share of the workers).",
		}, []string{"reason"}),
		Alive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "isamatch_webhook_gate_controller_alive",
			Help: "1 while a gate controller holds its Lease as this replica last read it, else 0 (admission then resolves images instead of gating pods).",
		}),
	}
}

// Collectors returns the collectors to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Releases, m.Held, m.Deferred, m.Alive}
}

func (m *Metrics) released(reason string, held float64) {
	if m != nil {
		m.Releases.WithLabelValues(reason).Inc()
		m.Held.Observe(held)
	}
}

func (m *Metrics) deferred(reason string) {
	if m != nil {
		m.Deferred.WithLabelValues(reason).Inc()
	}
}
