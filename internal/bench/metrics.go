package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// HistSums are the _sum and _count of the histograms whose series match,
// summed over their label sets.
type HistSums struct{ Sum, Count float64 }

// Mean is Sum/Count, 0 when empty.
func (h HistSums) Mean() float64 {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / h.Count
}

// Sub is h minus an earlier reading.
func (h HistSums) Sub(before HistSums) HistSums {
	return HistSums{Sum: h.Sum - before.Sum, Count: h.Count - before.Count}
}

// ParseHistSums reads Prometheus text exposition and sums the _sum and
// _count of histogram name over the series whose labels include every
// pair of match.
func ParseHistSums(r io.Reader, name string, match map[string]string) (HistSums, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return HistSums{}, fmt.Errorf("parse metrics: %w", err)
	}
	var h HistSums
	f, ok := families[name]
	if !ok {
		return h, nil
	}
	if f.GetType() != dto.MetricType_HISTOGRAM {
		return h, fmt.Errorf("metric %s is a %s, want a histogram", name, f.GetType())
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, match) {
			continue
		}
		h.Sum += m.GetHistogram().GetSampleSum()
		h.Count += float64(m.GetHistogram().GetSampleCount())
	}
	return h, nil
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}

// admissionMetrics are the two views of the webhook's cost: the API
// server's timing of its call, and the webhook's own handler timing.
type admissionMetrics struct {
	apiserver, handler HistSums
}

func (e *Env) readAdmissionMetrics(ctx context.Context) (admissionMetrics, error) {
	var m admissionMetrics
	raw, err := e.Clientset.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return m, fmt.Errorf("read kube-apiserver metrics: %w", err)
	}
	if m.apiserver, err = ParseHistSums(bytes.NewReader(raw), "apiserver_admission_webhook_admission_duration_seconds", map[string]string{"name": e.WebhookName}); err != nil {
		return m, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.MetricsAddr+"/metrics", nil)
	if err != nil {
		return m, fmt.Errorf("build webhook metrics request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m, fmt.Errorf("read webhook metrics: %w", err)
	}
	defer resp.Body.Close()
	m.handler, err = ParseHistSums(resp.Body, "controller_runtime_webhook_latency_seconds", map[string]string{"webhook": "/" + e.WebhookPath})
	return m, err
}
