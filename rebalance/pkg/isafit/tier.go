package isafit

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// isTierTerm reports whether a preferred term is one the isamatch webhook
// writes for an ISA tier: a single In requirement on the group label
// (pkg/mutate recognises its own terms by the same shape).
func isTierTerm(p v1.PreferredSchedulingTerm) bool {
	e := p.Preference.MatchExpressions
	return len(e) == 1 && len(p.Preference.MatchFields) == 0 && e[0].Key == isa.GroupLabel && e[0].Operator == v1.NodeSelectorOpIn
}

// tierTerms returns the pod's isamatch tier terms, nil when it has none.
func tierTerms(pod *v1.Pod) []v1.PreferredSchedulingTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var out []v1.PreferredSchedulingTerm
	for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if isTierTerm(p) {
			out = append(out, p)
		}
	}
	return out
}

// tierWeight is the weight of the tier term that admits node: every node
// has one group label, and the webhook puts each group in one term, so at
// most one term matches. 0 means the node is in no tier of the pod.
func tierWeight(terms []v1.PreferredSchedulingTerm, node *v1.Node) int32 {
	g, ok := node.Labels[isa.GroupLabel]
	if !ok {
		return 0
	}
	var w int32
	for _, t := range terms {
		if slices.Contains(t.Preference.MatchExpressions[0].Values, g) {
			w = max(w, t.Weight)
		}
	}
	return w
}

// TierWeight is the weight of the pod's isamatch tier that admits node: 0
// when no tier does. tiered is false when the pod has no tier terms at all
// (the webhook gave it none), so any node is as good as another.
func TierWeight(pod *v1.Pod, node *v1.Node) (weight int32, tiered bool) {
	terms := tierTerms(pod)
	return tierWeight(terms, node), len(terms) > 0
}
