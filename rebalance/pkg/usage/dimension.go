package usage

import "k8s.io/apimachinery/pkg/types"

// Dimension is one resource WeightedLoad balances.
type Dimension string

// The four dimensions of the design source's load formula.
const (
	CPU     Dimension = "cpu"
	Memory  Dimension = "memory"
	Network Dimension = "network"
	Disk    Dimension = "disk"
)

// Dimensions lists every dimension in a fixed order.
var Dimensions = []Dimension{CPU, Memory, Network, Disk}

// Source names where a value came from; it is the source label of the
// rebalancer's metrics.
type Source string

// The sources.
const (
	// Metrics is the Metrics API (metrics.k8s.io).
	Metrics Source = "metrics"
	// Prometheus is a Prometheus query.
	Prometheus Source = "prometheus"
	// Requests is what the pods request, the fallback.
	Requests Source = "requests"
)

// Usage is what one node or pod uses per dimension: CPU in millicores,
// memory in bytes, network and disk IO as a fraction of the node's
// capacity (what the Prometheus queries return). A missing dimension is
// not known.
type Usage map[Dimension]float64

// Snapshot is what the sources answered at one moment.
type Snapshot struct {
	// Nodes and Pods hold the measured values; a node or pod missing
	// from them, or a dimension missing from its Usage, was not measured.
	Nodes map[string]Usage
	Pods  map[types.NamespacedName]Usage
	// Sources says which source answered for each dimension it read.
	Sources map[Dimension]Source
	// Failed says, per dimension asked for that no source answered, why.
	Failed map[Dimension]string
}

func newSnapshot() Snapshot {
	return Snapshot{
		Nodes: map[string]Usage{}, Pods: map[types.NamespacedName]Usage{},
		Sources: map[Dimension]Source{}, Failed: map[Dimension]string{},
	}
}

func (s Snapshot) setNode(name string, d Dimension, v float64) {
	if s.Nodes[name] == nil {
		s.Nodes[name] = Usage{}
	}
	s.Nodes[name][d] = v
}

func (s Snapshot) setPod(key types.NamespacedName, d Dimension, v float64) {
	if s.Pods[key] == nil {
		s.Pods[key] = Usage{}
	}
	s.Pods[key][d] = v
}
