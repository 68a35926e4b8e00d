package podevents

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the Pacer's collectors. Register Collectors with the
// manager's registry (controller-runtime's metrics.Registry).
type Metrics struct {
	// Queued is how many Events wait for their turn.
	Queued prometheus.Gauge
	// Dropped counts Events dropped unrecorded because QueueLen were
	// waiting.
	Dropped prometheus.Counter
	// Failed counts Events the API server did not take (Writer).
	Failed prometheus.Counter
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "isamatch_webhook_pod_events_queued",
			Help: "Events on decided pods waiting for their turn within events.qps.",
		}),
		Dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_webhook_pod_events_dropped_total",
			Help: "Events on decided pods dropped unrecorded because the queue of those waiting within events.qps was full (the oldest goes).",
		}),
		Failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_webhook_pod_events_failed_total",
			Help: "Events on decided pods the API server did not take: refused, or still failing after several attempts (the webhook's log says why).",
		}),
	}
}

// Collectors returns the collectors to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Queued, m.Dropped, m.Failed}
}

func (m *Metrics) dropped() {
	if m != nil {
		m.Dropped.Inc()
	}
}

func (m *Metrics) failed() {
	if m != nil {
		m.Failed.Inc()
	}
}

func (m *Metrics) setQueued(n int) {
	if m != nil {
		m.Queued.Set(float64(n))
	}
}
