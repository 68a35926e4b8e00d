package isafit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

// move is a pod that a node of a better isamatch tier can take now.
type move struct {
	pod      *v1.Pod
	from, to string
	// fromWeight and toWeight are the tier weights of the two nodes.
	fromWeight, toWeight int32
}

func (m move) gain() int32 { return m.toWeight - m.fromWeight }

// planOptions is what planMoves needs besides the cluster state.
type planOptions struct {
	// filter admits the pods the plugin may move (evictor, namespaces,
	// label selector).
	filter podutil.FilterFunc
	// skip names pods left out (reserved moves, refused evictions).
	skip    func(*v1.Pod) bool
	minAge  time.Duration
	minGain int32
	// targets admits the nodes a pod may move to; nil admits every node.
	targets labels.Selector
	now     time.Time
}

// planMoves returns every pod on nodes that a node of a tier at least
// minGain better can take, with the best such node, largest gain first. A
// node can take a pod when descheduler's NodeFit passes against the pods
// podsOn lists there (which include moves already made this cycle): the
// node is schedulable, the pod's node selector and required node affinity
// admit it, the pod tolerates its NoSchedule and NoExecute taints, no pod
// there repels it by anti-affinity, and its requests fit in what the pods
// there leave of the node's allocatable CPU, memory, pods and other
// resources. The scheduler places the replacement pod; the move only
// proves that a better place exists now.
func planMoves(ctx context.Context, nodes []*v1.Node, podsOn podutil.GetPodsAssignedToNodeFunc, o planOptions) ([]move, planStats, error) {
	var out []move
	var st planStats
	for _, n := range nodes {
		pods, err := podutil.ListPodsOnANode(n.Name, podsOn, func(p *v1.Pod) bool {
			// A restartPolicy Never pod's work is lost when it is evicted
			// (a Job counts it as failed): it is never moved.
			if p.DeletionTimestamp != nil || p.Spec.RestartPolicy == v1.RestartPolicyNever || len(tierTerms(p)) == 0 {
				return false
			}
			if o.now.Sub(p.CreationTimestamp.Time) < o.minAge {
				st.young++
				return false
			}
			return (o.skip == nil || !o.skip(p)) && (o.filter == nil || o.filter(p))
		})
		if err != nil {
			return nil, st, fmt.Errorf("list pods on node %s: %w", n.Name, err)
		}
		st.tiered += len(pods)
		for _, p := range pods {
			if m, ok := bestMove(ctx, p, n, nodes, podsOn, o.minGain, o.targets); ok {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b move) int {
		return cmp.Or(
			cmp.Compare(b.gain(), a.gain()),
			strings.Compare(a.from, b.from),
			strings.Compare(a.pod.Namespace, b.pod.Namespace),
			strings.Compare(a.pod.Name, b.pod.Name),
		)
	})
	return out, st, nil
}

// planStats says what a plan saw, for the cycle's log line: a cycle that
// moves nothing says whether the pods were too young or had nowhere
// better to go.
type planStats struct {
	// tiered pods could be moved; young ones had tiers but were younger
	// than minAge.
	tiered, young int
}

// bestMove finds the node of the highest tier, at least minGain above the
// pod's current node, that admit matches (nil: any) and that passes the
// fit check.
func bestMove(ctx context.Context, pod *v1.Pod, from *v1.Node, nodes []*v1.Node, podsOn podutil.GetPodsAssignedToNodeFunc, minGain int32, admit labels.Selector) (move, bool) {
	terms := tierTerms(pod)
	cur := tierWeight(terms, from)
	type target struct {
		node *v1.Node
		w    int32
	}
	var targets []target
	for _, n := range nodes {
		if n.Name == from.Name || (admit != nil && !admit.Matches(labels.Set(n.Labels))) {
			continue
		}
		if w := tierWeight(terms, n); w-cur >= minGain {
			targets = append(targets, target{n, w})
		}
	}
	slices.SortFunc(targets, func(a, b target) int {
		return cmp.Or(cmp.Compare(b.w, a.w), strings.Compare(a.node.Name, b.node.Name))
	})
	for _, t := range targets {
		if nodeutil.NodeFit(ctx, podsOn, pod, t.node) == nil {
			return move{pod: pod, from: from.Name, to: t.node.Name, fromWeight: cur, toWeight: t.w}, true
		}
	}
	return move{}, false
}
