package main

import (
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/isamatch/isamatch/rebalance/pkg/weightedload"
)

// loadMetrics exports what each WeightedLoad cycle measured. Every gauge
// is reset at each cycle, so nodes that left and sources no longer used
// disappear.
type loadMetrics struct {
	nodeLoad, nodeBalance, average, sources *k8smetrics.GaugeVec
	balance                                 *k8smetrics.Gauge
}

var _ weightedload.Observer = (*loadMetrics)(nil)

// newLoadMetrics registers the gauges with the legacy registry that
// descheduler's /metrics serves.
func newLoadMetrics() *loadMetrics {
	m := &loadMetrics{
		nodeLoad: k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{
			Subsystem: "isamatch_rebalancer", Name: "node_load_ratio",
			Help: "Each node's use of each dimension (cpu, memory, network, disk) as a fraction of its capacity in the last WeightedLoad cycle, and its source (metrics, prometheus, requests).",
		}, []string{"node", "dimension", "source"}),
		nodeBalance: k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{
			Subsystem: "isamatch_rebalancer", Name: "node_balance_index",
			Help: "Each node's balance index in the last WeightedLoad cycle: 1 minus the weighted root mean square of how far its shares are from the cluster's averages (1: at the average in every dimension).",
		}, []string{"node"}),
		average: k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{
			Subsystem: "isamatch_rebalancer", Name: "average_load_ratio",
			Help: "The cluster's size-weighted share of each dimension in the last WeightedLoad cycle.",
		}, []string{"dimension"}),
		sources: k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{
			Subsystem: "isamatch_rebalancer", Name: "usage_source_nodes",
			Help: "Nodes judged by each source (metrics, prometheus, requests) per dimension in the last WeightedLoad cycle.",
		}, []string{"dimension", "source"}),
		balance: k8smetrics.NewGauge(&k8smetrics.GaugeOpts{
			Subsystem: "isamatch_rebalancer", Name: "balance_index",
			Help: "The mean of the nodes' balance indexes in the last WeightedLoad cycle (0 to 1).",
		}),
	}
	legacyregistry.MustRegister(m.nodeLoad, m.nodeBalance, m.average, m.sources, m.balance)
	return m
}

// ObserveCycle implements weightedload.Observer.
func (m *loadMetrics) ObserveCycle(v weightedload.CycleView) {
	m.nodeLoad.Reset()
	m.nodeBalance.Reset()
	m.average.Reset()
	m.sources.Reset()
	for _, n := range v.Nodes {
		for d, share := range n.Share {
			m.nodeLoad.WithLabelValues(n.Name, string(d), string(n.Source[d])).Set(share)
		}
		m.nodeBalance.WithLabelValues(n.Name).Set(n.Balance)
	}
	for d, avg := range v.Average {
		m.average.WithLabelValues(string(d)).Set(avg)
	}
	for d, by := range v.Sources {
		for s, nodes := range by {
			m.sources.WithLabelValues(string(d), string(s)).Set(float64(nodes))
		}
	}
	m.balance.Set(v.Balance)
}
