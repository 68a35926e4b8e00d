package weightedload

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/isamatch/isamatch/rebalance/pkg/usage"
)

// load is what one node uses of each dimension against its capacity:
// CPU in millicores and memory in bytes against allocatable, network and
// disk IO as fractions of a capacity of 1.
type load struct {
	node           *v1.Node
	used, capacity vec
	// source says, per dimension, where used came from.
	source [4]usage.Source
	// owners counts the node's pods per controlling owner.
	owners map[types.UID]int
	// zone is the node's topology.kubernetes.io/zone ("" for none), and
	// zoneOwners the pods per controlling owner of every node of that
	// zone, one map shared by them (shareZones).
	zone       string
	zoneOwners map[types.UID]int
}

// newLoad is node's load in this cycle: the snapshot's value for each
// dimension it measured on this node, else the sum of what the node's
// unfinished pods request (CPU and memory; network and disk have no
// fallback, and a cycle leaves them out unless every node was measured).
func newLoad(node *v1.Node, pods []*v1.Pod, snap usage.Snapshot) *load {
	l := &load{
		node:     node,
		capacity: vec{cpuDim: float64(node.Status.Allocatable.Cpu().MilliValue()), memDim: float64(node.Status.Allocatable.Memory().Value()), netDim: 1, diskDim: 1},
		owners:   map[types.UID]int{},
	}
	var requested vec
	for _, p := range pods {
		if finished(p) {
			continue
		}
		r := requests(p)
		requested[cpuDim] += r[cpuDim]
		requested[memDim] += r[memDim]
		if o := owner(p); o != "" {
			l.owners[o]++
		}
	}
	measured := snap.Nodes[node.Name]
	for i, d := range usage.Dimensions {
		if v, ok := measured[d]; ok && snap.Sources[d] != "" {
			l.used[i], l.source[i] = v, snap.Sources[d]
		} else {
			l.used[i], l.source[i] = requested[i], usage.Requests
		}
	}
	return l
}

// share is the used fraction of dimension i (0 for a dimension the node
// has no capacity of).
func (l *load) share(i int) float64 {
	if l.capacity[i] <= 0 {
		return 0
	}
	return l.used[i] / l.capacity[i]
}

// move shifts use (a pod's, see podUse) and p's owner count from l to t,
// as planned before the scheduler places its replacement.
func (l *load) move(p *v1.Pod, use vec, t *load) {
	for i := range use {
		l.used[i] -= use[i]
		t.used[i] += use[i]
	}
	if o := owner(p); o != "" {
		l.owners[o]--
		t.owners[o]++
		if l.zoneOwners != nil {
			l.zoneOwners[o]--
		}
		if t.zoneOwners != nil {
			t.zoneOwners[o]++
		}
	}
}

// shareZones gives the loads of each zone their zone's count of pods per
// controlling owner.
func shareZones(loads []*load) {
	zones := map[string]map[types.UID]int{}
	for _, l := range loads {
		z := l.node.Labels[v1.LabelTopologyZone]
		if z == "" {
			continue
		}
		c := zones[z]
		if c == nil {
			c = map[types.UID]int{}
			zones[z] = c
		}
		for o, n := range l.owners {
			c[o] += n
		}
		l.zone, l.zoneOwners = z, c
	}
}

// spreadAllows reports whether the scheduler's topology spreading would
// not send p's replacement back to l rather than to t: the scheduler's
// default spreads the pods of one owner over hostnames and zones (and the
// webhook's constraints over the best-fit nodes and their zones), scoring
// a node higher the fewer of them it and its zone run, so t must run no
// more of p's siblings than l will once p is gone, and when both nodes
// have a zone and the zones differ, so must t's zone. Without it a move
// that evens out load but not counts is undone by the scheduler, cycle
// after cycle. A pod without a controlling owner has no siblings to
// spread.
func (l *load) spreadAllows(p *v1.Pod, t *load) bool {
	o := owner(p)
	if o == "" {
		return true
	}
	if t.owners[o] > l.owners[o]-1 {
		return false
	}
	return l.zone == "" || t.zone == "" || l.zone == t.zone || t.zoneOwners[o] <= l.zoneOwners[o]-1
}

// owner is the UID of p's controlling owner, "" for none.
func owner(p *v1.Pod) types.UID {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.UID
	}
	return ""
}
