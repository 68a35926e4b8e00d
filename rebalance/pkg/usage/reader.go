package usage

import (
	"context"
	"fmt"

	promapi "github.com/prometheus/client_golang/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

// Queries are the Prometheus queries of network and disk IO. Each node
// query returns, as descheduler's Prometheus usage does, a vector with
// the label instance set to the node's name and values from 0 to 1: the
// node's use as a fraction of its capacity. Each pod query returns a
// vector with the labels namespace and pod, and the pod's use as a
// fraction of its node's capacity. An empty node query leaves the
// dimension out; an empty pod query counts every pod's share as 0 (no pod
// is moved for that dimension, but nodes are still judged by it).
type Queries struct {
	NetworkNode string `json:"networkNode,omitempty"`
	NetworkPod  string `json:"networkPod,omitempty"`
	DiskNode    string `json:"diskNode,omitempty"`
	DiskPod     string `json:"diskPod,omitempty"`
}

// Reader reads usage from the sources it has.
type Reader struct {
	// Metrics is a client of the Metrics API; nil leaves CPU and memory
	// to the fallback.
	Metrics metricsclient.Interface
	// Prometheus is descheduler's Prometheus client (the policy's
	// metricsProviders); nil leaves network and disk out.
	Prometheus promapi.Client
	// Queries are the Prometheus queries.
	Queries Queries
}

// Read asks each source for the dimensions in want. It never fails: what
// a source could not answer is in Snapshot.Failed.
func (r Reader) Read(ctx context.Context, want []Dimension) Snapshot {
	s := newSnapshot()
	wanted := map[Dimension]bool{}
	for _, d := range want {
		wanted[d] = true
	}
	if wanted[CPU] || wanted[Memory] {
		if err := r.readMetrics(ctx, s, wanted); err != nil {
			for _, d := range []Dimension{CPU, Memory} {
				if wanted[d] {
					s.Failed[d] = err.Error()
				}
			}
		}
	}
	for _, q := range []struct {
		d          Dimension
		node, pods string
	}{{Network, r.Queries.NetworkNode, r.Queries.NetworkPod}, {Disk, r.Queries.DiskNode, r.Queries.DiskPod}} {
		if !wanted[q.d] {
			continue
		}
		if err := r.readPrometheus(ctx, s, q.d, q.node, q.pods); err != nil {
			s.Failed[q.d] = err.Error()
		}
	}
	return s
}

// readMetrics lists every NodeMetrics and PodMetrics once.
func (r Reader) readMetrics(ctx context.Context, s Snapshot, wanted map[Dimension]bool) error {
	if r.Metrics == nil {
		return fmt.Errorf("no Metrics API client")
	}
	nodes, err := r.Metrics.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list node metrics: %w", err)
	}
	pods, err := r.Metrics.MetricsV1beta1().PodMetricses("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list pod metrics: %w", err)
	}
	for _, n := range nodes.Items {
		if wanted[CPU] {
			s.setNode(n.Name, CPU, float64(n.Usage.Cpu().MilliValue()))
		}
		if wanted[Memory] {
			s.setNode(n.Name, Memory, float64(n.Usage.Memory().Value()))
		}
	}
	for _, p := range pods.Items {
		var cpu, mem int64
		for _, c := range p.Containers {
			cpu += c.Usage.Cpu().MilliValue()
			mem += c.Usage.Memory().Value()
		}
		key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		if wanted[CPU] {
			s.setPod(key, CPU, float64(cpu))
		}
		if wanted[Memory] {
			s.setPod(key, Memory, float64(mem))
		}
	}
	for _, d := range []Dimension{CPU, Memory} {
		if wanted[d] {
			s.Sources[d] = Metrics
		}
	}
	return nil
}
