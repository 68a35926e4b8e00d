package watch

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts the misplacements seen and the pods evicted for them.
// Register Collectors with the manager's registry.
type Metrics struct {
	// Misplacements counts containers that died of their node's ISA, by
	// reason (misplace.ReasonSIGILL, misplace.ReasonExecFormat), once per
	// pod and container.
	Misplacements *prometheus.CounterVec
	// Evictions counts the remedy's evictions by result: "evicted",
	// "refused" (a PodDisruptionBudget or the API server said no) or
	// "error".
	Evictions *prometheus.CounterVec
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Misplacements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_runtime_misplacements_total",
			Help: "Containers that died of their node's instruction set, once per pod and container, by reason: sigill (an instruction the node lacks), exec_format (a binary of another architecture).",
		}, []string{"reason"}),
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_misplaced_pod_evictions_total",
			Help: "Misplaced pods isamatch evicted so that their replacement is admitted with a decision (--evict-misplaced), by result: evicted, refused, error.",
		}, []string{"result"}),
	}
}

// Collectors returns the collectors to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Misplacements, m.Evictions}
}

func (m *Metrics) misplaced(reason string) {
	if m != nil {
		m.Misplacements.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) evicted(result string) {
	if m != nil {
		m.Evictions.WithLabelValues(result).Inc()
	}
}
