package trigger

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/descheduler/pkg/utils"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Kind says what started a cycle; it is the trigger label of the cycle
// counter.
type Kind string

// The kinds of cycle starts.
const (
	// Start is the first cycle after the rebalancer starts leading.
	Start Kind = "start"
	// Timer is a cycle of --descheduling-interval.
	Timer Kind = "timer"
	// NodeJoin is a cycle started by a node that joined.
	NodeJoin Kind = "node_join"
	// Threshold is a cycle started by a node that crossed the CPU
	// threshold upward.
	Threshold Kind = "threshold"
)

// Reason is what started a cycle: its kind and, for the triggers, the node.
type Reason struct {
	Kind Kind
	Node string
}

// lifecycleTaints are the taints the API server and the node lifecycle
// controller put on a node that cannot take pods yet (or any more). A node
// turns Ready a moment before its not-ready taint is removed: a cycle
// started in between finds no pod that fits there and moves nothing.
var lifecycleTaints = []string{
	v1.TaintNodeNotReady, v1.TaintNodeUnreachable, v1.TaintNodeNetworkUnavailable,
	v1.TaintNodeUnschedulable, "node.cloudprovider.kubernetes.io/uninitialized",
}

// usable reports whether the rebalancer may move pods to n: it is Ready,
// schedulable, without a lifecycle taint, and matches the policy's node
// selector.
func usable(n *v1.Node, sel labels.Selector) bool {
	if n == nil || n.Spec.Unschedulable || !sel.Matches(labels.Set(n.Labels)) {
		return false
	}
	for _, t := range n.Spec.Taints {
		if slices.Contains(lifecycleTaints, t.Key) && (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// joined reports whether the change from old (nil: the node is new) to
// cur is a join: cur is usable and either old was not, or the labeler has
// just given the node a different ISA group (a node is of use to tiered
// pods only once labelled).
func joined(old, cur *v1.Node, sel labels.Selector) bool {
	if !usable(cur, sel) {
		return false
	}
	if !usable(old, sel) {
		return true
	}
	g := cur.Labels[isa.GroupLabel]
	return g != "" && g != old.Labels[isa.GroupLabel]
}

// loads tracks, per node, the CPU its pods request and its allocatable
// CPU, and which nodes are at or above the threshold. It is not safe for
// concurrent use (informer handlers run on one goroutine per informer;
// Watch serialises them).
type loads struct {
	// threshold is a percentage of allocatable CPU; rearm is how many
	// percentage points below it a node that crossed must drop before it
	// can cross again.
	threshold, rearm int64
	sel              labels.Selector
	pods             map[types.UID]podLoad
	requested        map[string]int64 // node -> millicores
	alloc            map[string]int64 // usable node -> millicores
	above            map[string]bool
}

type podLoad struct {
	node string
	cpu  int64
}

func newLoads(threshold, rearm int64, sel labels.Selector) *loads {
	return &loads{
		threshold: threshold, rearm: rearm, sel: sel,
		pods: map[types.UID]podLoad{}, requested: map[string]int64{},
		alloc: map[string]int64{}, above: map[string]bool{},
	}
}

// setPod records p (nil: deleted, with uid) and reports the node whose
// share crossed the threshold upward, if any.
func (l *loads) setPod(uid types.UID, p *v1.Pod) (string, bool) {
	prev := l.pods[uid]
	cur := podLoad{}
	if p != nil && p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
		req, _ := utils.PodRequestsAndLimits(p)
		cur = podLoad{node: p.Spec.NodeName, cpu: req.Cpu().MilliValue()}
	}
	if cur == prev {
		return "", false
	}
	if cur.node == "" {
		delete(l.pods, uid)
	} else {
		l.pods[uid] = cur
	}
	if prev.node != "" {
		l.requested[prev.node] -= prev.cpu
		if l.requested[prev.node] == 0 {
			delete(l.requested, prev.node)
		}
		l.check(prev.node)
	}
	if cur.node == "" {
		return "", false
	}
	l.requested[cur.node] += cur.cpu
	return cur.node, l.check(cur.node)
}

// setNode records n (nil: deleted, with name) and reports whether its
// share crossed the threshold upward (a node that shrinks or turns usable
// while loaded).
func (l *loads) setNode(name string, n *v1.Node) bool {
	if usable(n, l.sel) {
		l.alloc[name] = n.Status.Allocatable.Cpu().MilliValue()
	} else {
		delete(l.alloc, name)
	}
	return l.check(name)
}

// check updates whether node is above the threshold and reports an
// upward crossing. Nodes that are not usable, or report no CPU, are never
// above. A node that crossed stays above (and cannot cross again) until
// its share drops below the threshold minus the re-arm band: pods coming
// and going around the line start one cycle, not one per change.
func (l *loads) check(node string) bool {
	alloc, ok := l.alloc[node]
	if !ok || alloc <= 0 {
		delete(l.above, node)
		return false
	}
	req := l.requested[node] * 100
	if l.above[node] {
		if req < (l.threshold-l.rearm)*alloc {
			delete(l.above, node)
		}
		return false
	}
	if req >= l.threshold*alloc {
		l.above[node] = true
		return true
	}
	return false
}

// forget drops a deleted node's state.
func (l *loads) forget(node string) {
	delete(l.alloc, node)
	delete(l.above, node)
	if l.requested[node] == 0 {
		delete(l.requested, node)
	}
}
