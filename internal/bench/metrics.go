package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
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

// ParseHistSums reads Prometheus text exposition and sums name_sum and
// name_count over the series whose labels contain every string of match.
func ParseHistSums(r io.Reader, name string, match ...string) (HistSums, error) {
	var h HistSums
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		var target *float64
		switch {
		case strings.HasPrefix(line, name+"_sum"):
			target = &h.Sum
		case strings.HasPrefix(line, name+"_count"):
			target = &h.Count
		default:
			continue
		}
		ok := true
		for _, m := range match {
			if !strings.Contains(line, m) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return h, fmt.Errorf("parse metric line %q: %w", line, err)
		}
		*target += v
	}
	return h, sc.Err()
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
	if m.apiserver, err = ParseHistSums(bytes.NewReader(raw), "apiserver_admission_webhook_admission_duration_seconds", `name="pods.isa.isamatch.io"`); err != nil {
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
	m.handler, err = ParseHistSums(resp.Body, "controller_runtime_webhook_latency_seconds", `webhook="/mutate-v1-pod"`)
	return m, err
}
