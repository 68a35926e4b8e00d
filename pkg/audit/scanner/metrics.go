package scanner

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the Scanner's gauges. Register Collectors with the manager's
// registry. Only the elected leader sets them; other replicas export 0.
type Metrics struct {
	// Misplaced is the number of running pods per reason (a pod counts
	// under each of its reasons).
	Misplaced *prometheus.GaugeVec
	// Nodes is the number of nodes by kubernetes.io/arch and whether
	// isamatch labelled them.
	Nodes *prometheus.GaugeVec
	// Groups is the number of ISA groups (distinct native ISAs).
	Groups prometheus.Gauge
	// GatedOverdue is the number of pods still carrying the scheduling
	// gate past the gate's bound (Options.GateTimeout).
	GatedOverdue prometheus.Gauge
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Misplaced: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "isamatch_misplaced_pods",
			Help: "Running pods whose node cannot run what they need, or that isamatch should have decided but did not, by reason: undecided, request, affinity, runtime (set by the webhook's leader each audit).",
		}, []string{"reason"}),
		Nodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "isamatch_nodes",
			Help: "Nodes by kubernetes.io/arch and whether isamatch's labeler labelled them (labelled=true|false).",
		}, []string{"arch", "labelled"}),
		Groups: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "isamatch_isa_groups",
			Help: "ISA groups: distinct native instruction sets among the labelled nodes.",
		}),
		GatedOverdue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "isamatch_gated_pods_overdue",
			Help: "Pods still held by the scheduling gate isa.isamatch.io/resolve past the gate's time bound (--gate-timeout) plus a minute.",
		}),
	}
}

// Collectors returns the collectors to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Misplaced, m.Nodes, m.Groups, m.GatedOverdue}
}
