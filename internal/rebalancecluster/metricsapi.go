package rebalancecluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The annotations that set what a pod uses in the MetricsAPI's answers.
const (
	CPUUsageAnnotation    = "rebalance.test/cpu-usage"
	MemoryUsageAnnotation = "rebalance.test/memory-usage"
)

// NodeBaseCPU and NodeBaseMemory are what each node uses besides its
// pods in the MetricsAPI's answers (the kubelet, the runtime).
var (
	NodeBaseCPU    = resource.MustParse("100m")
	NodeBaseMemory = resource.MustParse("256Mi")
)

// metricsService names the Service and namespace the APIService points at.
const (
	metricsService   = "isamatch-test-metrics"
	metricsNamespace = "default"
	metricsAPIName   = "v1beta1.metrics.k8s.io"
)

// MetricsAPI is a Metrics API (metrics.k8s.io/v1beta1) of the test's own,
// served through the API server's aggregation layer exactly as
// metrics-server is: an APIService for v1beta1.metrics.k8s.io whose
// Service (an ExternalName to localhost) reaches an HTTPS server in this
// process. Its answers are known: a pod uses what its annotations
// CPUUsageAnnotation and MemoryUsageAnnotation say (0 without), a node
// NodeBaseCPU and NodeBaseMemory plus what its unfinished pods use. Like
// metrics-server's own manifest, the APIService skips TLS verification.
type MetricsAPI struct {
	srv *httptest.Server
	c   client.Client
}

// StartMetricsAPI starts the server, registers it and waits up to a
// minute until the API server reports the APIService Available.
func (c *Cluster) StartMetricsAPI(ctx context.Context) (*MetricsAPI, error) {
	m := &MetricsAPI{c: c.CP.Client}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	m.srv.StartTLS()
	_, port, err := net.SplitHostPort(m.srv.Listener.Addr().String())
	if err != nil {
		m.srv.Close()
		return nil, fmt.Errorf("metrics API address: %w", err)
	}
	p, _ := strconv.Atoi(port)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: metricsService, Namespace: metricsNamespace},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(p)}},
		},
	}
	if err := c.CP.Client.Create(ctx, svc); err != nil {
		m.srv.Close()
		return nil, fmt.Errorf("create Service %s: %w", metricsService, err)
	}
	api := apiService()
	api.Object["spec"] = map[string]any{
		"group": "metrics.k8s.io", "version": "v1beta1",
		"service":               map[string]any{"namespace": metricsNamespace, "name": metricsService, "port": int64(p)},
		"insecureSkipTLSVerify": true, "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
	}
	if err := c.CP.Client.Create(ctx, api); err != nil {
		return nil, errors.Join(fmt.Errorf("create APIService %s: %w", metricsAPIName, err), m.Stop(ctx))
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := apiService()
		if err := c.CP.Client.Get(ctx, client.ObjectKey{Name: metricsAPIName}, got); err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conds {
			if cm, ok := cond.(map[string]any); ok && cm["type"] == "Available" {
				return cm["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("APIService %s never became Available: %w", metricsAPIName, err), m.Stop(ctx))
	}
	return m, nil
}

// Stop unregisters the APIService and stops the server.
func (m *MetricsAPI) Stop(ctx context.Context) error {
	var errs []error
	for _, obj := range []client.Object{apiService(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: metricsService, Namespace: metricsNamespace}}} {
		if err := m.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	m.srv.Close()
	return errors.Join(errs...)
}

func apiService() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	u.SetName(metricsAPIName)
	return u
}

// usageOf is what a pod uses, by its annotations.
func usageOf(p *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0"), corev1.ResourceMemory: resource.MustParse("0")}
	for name, key := range map[corev1.ResourceName]string{corev1.ResourceCPU: CPUUsageAnnotation, corev1.ResourceMemory: MemoryUsageAnnotation} {
		if q, err := resource.ParseQuantity(p.Annotations[key]); err == nil {
			out[name] = q
		}
	}
	return out
}

// serve answers the Metrics API's discovery and its node and pod lists
// and gets, from the cluster as it is now.
func (m *MetricsAPI) serve(w http.ResponseWriter, r *http.Request) {
	const prefix = "/apis/metrics.k8s.io/v1beta1"
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == prefix:
		writeJSON(w, map[string]any{
			"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "metrics.k8s.io/v1beta1",
			"resources": []map[string]any{
				{"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": []string{"get", "list"}},
				{"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": []string{"get", "list"}},
			},
		})
	case strings.HasPrefix(path, prefix+"/nodes"):
		m.nodes(w, r, strings.TrimPrefix(strings.TrimPrefix(path, prefix+"/nodes"), "/"))
	case path == prefix+"/pods":
		m.pods(w, r, "", "")
	case strings.HasPrefix(path, prefix+"/namespaces/"):
		parts := strings.Split(strings.TrimPrefix(path, prefix+"/namespaces/"), "/")
		if len(parts) < 2 || parts[1] != "pods" {
			http.NotFound(w, r)
			return
		}
		name := ""
		if len(parts) > 2 {
			name = parts[2]
		}
		m.pods(w, r, parts[0], name)
	default:
		http.NotFound(w, r)
	}
}

// metricsMeta is what every metrics object carries besides its usage.
func metricsMeta(kind string, meta metav1.ObjectMeta) map[string]any {
	now := metav1.Now()
	return map[string]any{
		"kind": kind, "apiVersion": "metrics.k8s.io/v1beta1", "metadata": meta,
		"timestamp": now, "window": metav1.Duration{Duration: 15 * time.Second},
	}
}

func (m *MetricsAPI) nodes(w http.ResponseWriter, r *http.Request, name string) {
	var nodes corev1.NodeList
	var pods corev1.PodList
	if err := m.c.List(r.Context(), &nodes); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if err := m.c.List(r.Context(), &pods); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	used := map[string]corev1.ResourceList{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if used[p.Spec.NodeName] == nil {
			used[p.Spec.NodeName] = corev1.ResourceList{corev1.ResourceCPU: NodeBaseCPU.DeepCopy(), corev1.ResourceMemory: NodeBaseMemory.DeepCopy()}
		}
		for res, q := range usageOf(&p) {
			sum := used[p.Spec.NodeName][res]
			sum.Add(q)
			used[p.Spec.NodeName][res] = sum
		}
	}
	var items []map[string]any
	for _, n := range nodes.Items {
		if name != "" && n.Name != name {
			continue
		}
		u := used[n.Name]
		if u == nil {
			u = corev1.ResourceList{corev1.ResourceCPU: NodeBaseCPU.DeepCopy(), corev1.ResourceMemory: NodeBaseMemory.DeepCopy()}
		}
		item := metricsMeta("NodeMetrics", metav1.ObjectMeta{Name: n.Name, Labels: n.Labels})
		item["usage"] = u
		items = append(items, item)
	}
	writeItems(w, r, name, "NodeMetricsList", items)
}

func (m *MetricsAPI) pods(w http.ResponseWriter, r *http.Request, namespace, name string) {
	var pods corev1.PodList
	if err := m.c.List(r.Context(), &pods, client.InNamespace(namespace)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var items []map[string]any
	for _, p := range pods.Items {
		if (name != "" && p.Name != name) || p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			continue
		}
		var containers []map[string]any
		for i, ctr := range p.Spec.Containers {
			u := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0"), corev1.ResourceMemory: resource.MustParse("0")}
			if i == 0 {
				u = usageOf(&p)
			}
			containers = append(containers, map[string]any{"name": ctr.Name, "usage": u})
		}
		item := metricsMeta("PodMetrics", metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels})
		item["containers"] = containers
		items = append(items, item)
	}
	writeItems(w, r, name, "PodMetricsList", items)
}

// writeItems answers a get of name (the one item, or 404) or, without a
// name, a list of kind.
func writeItems(w http.ResponseWriter, r *http.Request, name, kind string, items []map[string]any) {
	if name == "" {
		writeJSON(w, map[string]any{"kind": kind, "apiVersion": "metrics.k8s.io/v1beta1", "metadata": map[string]any{}, "items": items})
		return
	}
	if len(items) == 0 {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, items[0])
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// NodeMetricsCPU is the node's CPU use in millicores as the Metrics API
// (whoever serves it) reports it through the API server.
func NodeMetricsCPU(ctx context.Context, c client.Client, name string) (float64, error) {
	return metricsCPU(ctx, c, "NodeMetrics", client.ObjectKey{Name: name}, "usage")
}

// PodMetricsCPU is the pod's CPU use in millicores, summed over its
// containers, as the Metrics API reports it.
func PodMetricsCPU(ctx context.Context, c client.Client, namespace, name string) (float64, error) {
	return metricsCPU(ctx, c, "PodMetrics", client.ObjectKey{Namespace: namespace, Name: name}, "containers")
}

// metricsCPU reads a metrics.k8s.io object of kind and sums the CPU of
// its usage, or of each container's usage.
func metricsCPU(ctx context.Context, c client.Client, kind string, key client.ObjectKey, field string) (float64, error) {
	m := &unstructured.Unstructured{}
	m.SetAPIVersion("metrics.k8s.io/v1beta1")
	m.SetKind(kind)
	if err := c.Get(ctx, key, m); err != nil {
		return 0, fmt.Errorf("get %s %s: %w", kind, key, err)
	}
	usages := []any{m.Object[field]}
	if field == "containers" {
		usages, _, _ = unstructured.NestedSlice(m.Object, field)
	}
	var sum float64
	for _, u := range usages {
		um, _ := u.(map[string]any)
		if field == "containers" {
			um, _ = um["usage"].(map[string]any)
		}
		cpu, _ := um["cpu"].(string)
		q, err := resource.ParseQuantity(cpu)
		if err != nil {
			return 0, fmt.Errorf("%s %s: usage.cpu %q: %w", kind, key, cpu, err)
		}
		sum += float64(q.MilliValue())
	}
	return sum, nil
}
