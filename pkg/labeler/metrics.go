package labeler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/isamatch/isamatch/pkg/probe"
)

// Metrics are the labeler's Prometheus collectors. Create them with
// [NewMetrics], register them with [Metrics.Register] (the labeler binary
// uses controller-runtime's metrics.Registry) and set Controller.Metrics.
type Metrics struct {
	// ProbeDuration observes every host probe, failed or not.
	ProbeDuration prometheus.Histogram
	// ProbeFailures counts failures by source (probe.SourceCPUInfo, ...):
	// a source that failed, whether or not the whole probe failed.
	ProbeFailures *prometheus.CounterVec
	// ProbeErrors counts probes that failed as a whole: the node kept its
	// old labels.
	ProbeErrors prometheus.Counter
	// LabelsWritten counts the node label and annotation keys the labeler
	// wrote, by change: "set" or "deleted".
	LabelsWritten *prometheus.CounterVec
}

// sources are the values of the source label of ProbeFailures.
var sources = []string{probe.SourceCPUInfo, probe.SourceHWProbe, probe.SourceGCC, probe.SourceCrossGCC, probe.SourceBinfmt}

// NewMetrics creates unregistered collectors named isamatch_labeler_*,
// with every source and change at zero so rates exist from the start.
func NewMetrics() *Metrics {
	m := &Metrics{
		ProbeDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "isamatch_labeler_probe_duration_seconds",
			Help:    "Duration of host probes (cpuinfo, hwprobe, gcc, cross gcc, binfmt_misc).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		ProbeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_labeler_probe_failures_total",
			Help: "Host probe sources that failed, by source.",
		}, []string{"source"}),
		ProbeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "isamatch_labeler_probe_errors_total",
			Help: "Host probes that failed as a whole, leaving the node's labels as they were.",
		}),
		LabelsWritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "isamatch_labeler_labels_written_total",
			Help: "Node label and annotation keys written by the labeler, by change (set, deleted).",
		}, []string{"change"}),
	}
	for _, s := range sources {
		m.ProbeFailures.WithLabelValues(s)
	}
	m.LabelsWritten.WithLabelValues("set")
	m.LabelsWritten.WithLabelValues("deleted")
	return m
}

// Collectors lists every collector, for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.ProbeDuration, m.ProbeFailures, m.ProbeErrors, m.LabelsWritten}
}

// probed records one probe: its duration, the sources that failed in it
// and, when err is set, the whole probe's failure.
func (m *Metrics) probed(seconds float64, res probe.Result, err error) {
	if m == nil {
		return
	}
	m.ProbeDuration.Observe(seconds)
	for _, s := range res.Failed {
		m.ProbeFailures.WithLabelValues(s).Inc()
	}
	if err != nil {
		m.ProbeErrors.Inc()
		if s := probe.FailedSource(err); s != "" {
			m.ProbeFailures.WithLabelValues(s).Inc()
		}
	}
}

// written records the keys one reconcile wrote.
func (m *Metrics) written(out Result) {
	if m == nil {
		return
	}
	m.LabelsWritten.WithLabelValues("set").Add(float64(out.Set))
	m.LabelsWritten.WithLabelValues("deleted").Add(float64(out.Deleted))
}
