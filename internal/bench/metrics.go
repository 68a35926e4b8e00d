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

	"github.com/isamatch/isamatch/internal/testbed"
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

// Add is h and another reading's difference together.
func (h HistSums) Add(d HistSums) HistSums {
	return HistSums{Sum: h.Sum + d.Sum, Count: h.Count + d.Count}
}

// ParseHistSums reads Prometheus text exposition and sums the _sum and
// _count of histogram name over the series whose labels include every
// pair of match.
func ParseHistSums(r io.Reader, name string, match map[string]string) (HistSums, error) {
	var h HistSums
	f, err := histogramFamily(r, name)
	if err != nil || f == nil {
		return h, err
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

// histogramFamily reads Prometheus text exposition and returns the
// histogram name, nil when it is not there.
func histogramFamily(r io.Reader, name string) (*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	f, ok := families[name]
	if !ok {
		return nil, nil
	}
	if f.GetType() != dto.MetricType_HISTOGRAM {
		return nil, fmt.Errorf("metric %s is a %s, want a histogram", name, f.GetType())
	}
	return f, nil
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

// admissionMetrics are the views of the webhooks' cost: the API server's
// timing of its call to isamatch and to the no-op webhook, and isamatch's
// own handler timing.
type admissionMetrics struct {
	apiserver, noop, handler HistSums
}

func (e *Env) readAdmissionMetrics(ctx context.Context) (admissionMetrics, error) {
	var m admissionMetrics
	raw, err := e.Clientset.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return m, fmt.Errorf("read kube-apiserver metrics: %w", err)
	}
	const call = "apiserver_admission_webhook_admission_duration_seconds"
	if m.apiserver, err = ParseHistSums(bytes.NewReader(raw), call, map[string]string{"name": e.WebhookName}); err != nil {
		return m, err
	}
	if m.noop, err = ParseHistSums(bytes.NewReader(raw), call, map[string]string{"name": e.NoopWebhookName}); err != nil {
		return m, err
	}
	body, err := scrape(ctx, e.MetricsAddr)
	if err != nil {
		return m, err
	}
	m.handler, err = ParseHistSums(bytes.NewReader(body), "controller_runtime_webhook_latency_seconds", map[string]string{"webhook": "/" + e.WebhookPath})
	return m, err
}

// webhookRequests is how many admission requests the controller-runtime
// webhook serving path answered, from its metrics at addr.
func webhookRequests(ctx context.Context, addr, path string) (float64, error) {
	body, err := scrape(ctx, addr)
	if err != nil {
		return 0, err
	}
	v, _, err := testbed.MetricValue(string(body), "controller_runtime_webhook_requests_total", map[string]string{"webhook": path})
	return v, err
}

// scrape reads the plain-HTTP Prometheus metrics at addr.
func scrape(ctx context.Context, addr string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("build metrics request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read metrics of %s: status %s", addr, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", addr, err)
	}
	return body, nil
}
