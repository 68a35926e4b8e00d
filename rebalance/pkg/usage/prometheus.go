package usage

import (
	"context"
	"errors"
	"fmt"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/nodeutilization"
)

// readPrometheus runs dimension d's node query through descheduler's own
// Prometheus usage function, and its pod query, if any.
func (r Reader) readPrometheus(ctx context.Context, s Snapshot, d Dimension, nodeQuery, podQuery string) error {
	if nodeQuery == "" {
		return errors.New("no Prometheus query configured")
	}
	if r.Prometheus == nil {
		return errors.New("no Prometheus client: the policy's metricsProviders configure none")
	}
	nodes, err := nodeutilization.NodeUsageFromPrometheusMetrics(ctx, r.Prometheus, nodeQuery)
	if err != nil {
		return fmt.Errorf("%s node query: %w", d, err)
	}
	for name, rl := range nodes {
		if q := rl[nodeutilization.MetricResource]; q != nil {
			// descheduler scales the fraction to whole percent.
			s.setNode(name, d, float64(q.Value())/100)
		}
	}
	if podQuery != "" {
		pods, err := podUsageFromPrometheus(ctx, r.Prometheus, podQuery)
		if err != nil {
			return fmt.Errorf("%s pod query: %w", d, err)
		}
		for key, v := range pods {
			s.setPod(key, d, v)
		}
	}
	s.Sources[d] = Prometheus
	return nil
}

// podUsageFromPrometheus runs query, which must return a vector of
// samples labelled namespace and pod with values from 0 to 1, the way
// descheduler's NodeUsageFromPrometheusMetrics runs its node query.
func podUsageFromPrometheus(ctx context.Context, client promapi.Client, query string) (map[types.NamespacedName]float64, error) {
	res, _, err := promv1.NewAPI(client).Query(ctx, query, time.Now())
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", query, err)
	}
	vec, ok := res.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %q: want a vector, got %s", query, res.Type())
	}
	out := make(map[types.NamespacedName]float64, len(vec))
	for _, sample := range vec {
		ns, pod := sample.Metric["namespace"], sample.Metric["pod"]
		if ns == "" || pod == "" {
			return nil, fmt.Errorf("query %q: a sample without the labels namespace and pod: %s", query, sample.Metric)
		}
		if v := float64(sample.Value); v < 0 || v > 1 {
			return nil, fmt.Errorf("query %q: pod %s/%s: value %v outside [0, 1]", query, ns, pod, v)
		}
		out[types.NamespacedName{Namespace: string(ns), Name: string(pod)}] = float64(sample.Value)
	}
	return out, nil
}
