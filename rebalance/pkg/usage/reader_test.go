package usage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	promapi "github.com/prometheus/client_golang/api"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
)

// metricsAPI is a fake Metrics API client answering lists with nodes and
// pods, or with err.
func metricsAPI(nodes []metricsv1beta1.NodeMetrics, pods []metricsv1beta1.PodMetrics, err error) *metricsfake.Clientset {
	c := &metricsfake.Clientset{}
	c.AddReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &metricsv1beta1.NodeMetricsList{Items: nodes}, err
	})
	c.AddReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &metricsv1beta1.PodMetricsList{Items: pods}, err
	})
	return c
}

func nodeMetrics(name, cpu, mem string) metricsv1beta1.NodeMetrics {
	return metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Usage: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem),
	}}
}

func podMetrics(ns, name string, containers ...[2]string) metricsv1beta1.PodMetrics {
	p := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for i, c := range containers {
		p.Containers = append(p.Containers, metricsv1beta1.ContainerMetrics{Name: fmt.Sprint(i), Usage: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(c[0]), v1.ResourceMemory: resource.MustParse(c[1]),
		}})
	}
	return p
}

// prometheus serves Prometheus's instant query API: each query string
// answers with its vector.
func prometheus(t *testing.T, answers map[string][]map[string]string) promapi.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		samples, ok := answers[r.FormValue("query")]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": "unknown query"})
			return
		}
		result := []map[string]any{}
		for _, s := range samples {
			labels := map[string]string{}
			for k, v := range s {
				if k != "value" {
					labels[k] = v
				}
			}
			result = append(result, map[string]any{"metric": labels, "value": []any{float64(time.Now().Unix()), s["value"]}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": result}})
	}))
	t.Cleanup(srv.Close)
	c, err := promapi.NewClient(promapi.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRead(t *testing.T) {
	key := func(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	metrics := metricsAPI(
		[]metricsv1beta1.NodeMetrics{nodeMetrics("a", "1500m", "2Gi"), nodeMetrics("b", "250m", "1Gi")},
		[]metricsv1beta1.PodMetrics{podMetrics("ns", "p", [2]string{"900m", "100Mi"}, [2]string{"100m", "28Mi"})}, nil)
	prom := prometheus(t, map[string][]map[string]string{
		"net_node": {{"instance": "a", "value": "0.42"}, {"instance": "b", "value": "0.05"}},
		"net_pod":  {{"namespace": "ns", "pod": "p", "value": "0.3"}},
		"disk_bad": {{"instance": "a", "value": "1.5"}},
	})
	tests := []struct {
		name   string
		r      Reader
		want   []Dimension
		expect Snapshot
	}{{
		name: "Metrics API and Prometheus",
		r:    Reader{Metrics: metrics, Prometheus: prom, Queries: Queries{NetworkNode: "net_node", NetworkPod: "net_pod"}},
		want: []Dimension{CPU, Memory, Network},
		expect: Snapshot{
			Nodes: map[string]Usage{
				"a": {CPU: 1500, Memory: 2 << 30, Network: 0.42},
				"b": {CPU: 250, Memory: 1 << 30, Network: 0.05},
			},
			Pods:    map[types.NamespacedName]Usage{key("ns", "p"): {CPU: 1000, Memory: 128 << 20, Network: 0.3}},
			Sources: map[Dimension]Source{CPU: Metrics, Memory: Metrics, Network: Prometheus},
			Failed:  map[Dimension]string{},
		},
	}, {
		name: "only the dimensions asked for",
		r:    Reader{Metrics: metrics},
		want: []Dimension{CPU},
		expect: Snapshot{
			Nodes:   map[string]Usage{"a": {CPU: 1500}, "b": {CPU: 250}},
			Pods:    map[types.NamespacedName]Usage{key("ns", "p"): {CPU: 1000}},
			Sources: map[Dimension]Source{CPU: Metrics},
			Failed:  map[Dimension]string{},
		},
	}, {
		name: "no Metrics API, no Prometheus, a value out of range",
		r:    Reader{Metrics: metricsAPI(nil, nil, errors.New(`the server could not find the requested resource (get nodes.metrics.k8s.io)`)), Prometheus: prom, Queries: Queries{DiskNode: "disk_bad"}},
		want: []Dimension{CPU, Memory, Network, Disk},
		expect: Snapshot{
			Nodes: map[string]Usage{}, Pods: map[types.NamespacedName]Usage{}, Sources: map[Dimension]Source{},
			Failed: map[Dimension]string{
				CPU:     "list node metrics: the server could not find the requested resource (get nodes.metrics.k8s.io)",
				Memory:  "list node metrics: the server could not find the requested resource (get nodes.metrics.k8s.io)",
				Network: "no Prometheus query configured",
				Disk:    `disk node query: the collected metrics sample for "a" has value 1.5 outside of <0; 1> interval`,
			},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.r.Read(t.Context(), tc.want)
			if diff := cmp.Diff(tc.expect, got); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}
