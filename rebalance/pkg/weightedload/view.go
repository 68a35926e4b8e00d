package weightedload

import (
	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

// Observer receives what each cycle measured; the rebalancer exports it as
// metrics. ObserveCycle must not block.
type Observer interface {
	ObserveCycle(CycleView)
}

// CycleView is what one cycle of the plugin measured, before it moved
// anything.
type CycleView struct {
	// Nodes are the cycle's nodes.
	Nodes []NodeView
	// Dimensions are the dimensions that counted, with their weights.
	Dimensions map[usage.Dimension]float64
	// Average is the cluster's size-weighted share of each dimension
	// that counted, and Load the formula over them.
	Average map[usage.Dimension]float64
	Load    float64
	// Balance is the mean of the nodes' balance indexes.
	Balance float64
	// Sources counts, per dimension that counted, the nodes judged by each
	// source: all nodes by one source, or some measured and the rest by
	// their requests.
	Sources map[usage.Dimension]map[usage.Source]int
	// Failed says why a dimension the policy asked to measure was not.
	Failed map[usage.Dimension]string
}

// NodeView is one node in a CycleView.
type NodeView struct {
	Name string
	// Share is the used fraction of each dimension that counted, and
	// Source where it came from.
	Share  map[usage.Dimension]float64
	Source map[usage.Dimension]usage.Source
	// Load is the formula's L, Score (1 - L)·10, Balance the node's
	// balance index (0 to 1).
	Load, Score, Balance float64
}

// view builds the cycle's view from the model and the loads.
func view(m *model, loads []*load, snap usage.Snapshot) CycleView {
	v := CycleView{
		Dimensions: map[usage.Dimension]float64{}, Average: map[usage.Dimension]float64{},
		Load: m.average(), Sources: map[usage.Dimension]map[usage.Source]int{}, Failed: snap.Failed,
	}
	for _, i := range m.dims() {
		d := usage.Dimensions[i]
		v.Dimensions[d] = m.weight[i]
		v.Average[d] = m.avg[i]
		v.Sources[d] = map[usage.Source]int{}
	}
	for _, l := range loads {
		n := NodeView{
			Name: l.node.Name, Share: map[usage.Dimension]float64{}, Source: map[usage.Dimension]usage.Source{},
			Load: m.nodeLoad(l), Score: m.score(l), Balance: m.balance(l),
		}
		for _, i := range m.dims() {
			d := usage.Dimensions[i]
			n.Share[d], n.Source[d] = l.share(i), l.source[i]
			v.Sources[d][l.source[i]]++
		}
		v.Nodes = append(v.Nodes, n)
		v.Balance += n.Balance / float64(len(loads))
	}
	return v
}
