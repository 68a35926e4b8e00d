package isafit

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// tierTerms returns the pod's isamatch terms, tiers and emulation, nil
// when it has none.
func tierTerms(pod *v1.Pod) []v1.PreferredSchedulingTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var out []v1.PreferredSchedulingTerm
	for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if contract.IsTierTerm(p) || contract.IsEmulationTerm(p) {
			out = append(out, p)
		}
	}
	return out
}

// tierWeight is what isamatch's terms give node, as the scheduler adds
// them: the weight of the tier term that admits it (every node has one
// group label, and the webhook puts each group in one term, so at most one
// matches) plus that of each emulation term it matches. 0 means the node
// is in no tier of the pod.
func tierWeight(terms []v1.PreferredSchedulingTerm, node *v1.Node) int32 {
	g, grouped := node.Labels[isa.GroupLabel]
	var tier, emu int32
	for _, t := range terms {
		switch {
		case contract.IsTierTerm(t):
			if grouped && slices.Contains(t.Preference.MatchExpressions[0].Values, g) {
				tier = max(tier, t.Weight)
			}
		case matches(t.Preference, node):
			emu += t.Weight
		}
	}
	return tier + emu
}

// matches reports whether node satisfies term (an invalid term matches
// nothing, as in the scheduler).
func matches(term v1.NodeSelectorTerm, node *v1.Node) bool {
	s, err := nodeaffinity.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}})
	return err == nil && s.Match(node)
}

// TierWeight is what the pod's isamatch terms (tiers and emulation) give
// node: 0 when none admits it. tiered is false when the pod has no such
// terms at all (the webhook gave it none), so any node is as good as
// another.
func TierWeight(pod *v1.Pod, node *v1.Node) (weight int32, tiered bool) {
	terms := tierTerms(pod)
	return tierWeight(terms, node), len(terms) > 0
}
