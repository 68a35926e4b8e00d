package isafit

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/isamatch/isamatch/pkg/isa"
)

// isTierTerm reports whether a preferred term is one the isamatch webhook
// writes for an ISA tier: a single In requirement on the group label
// (pkg/mutate recognises its own terms by the same shape).
func isTierTerm(p v1.PreferredSchedulingTerm) bool {
	e := p.Preference.MatchExpressions
	return len(e) == 1 && len(p.Preference.MatchFields) == 0 && e[0].Key == isa.GroupLabel && e[0].Operator == v1.NodeSelectorOpIn
}

// isEmulationTerm reports whether a preferred term is the one the webhook
// writes for an isa.qemu request: nodes that emulate or cross-compile the
// ISA, every requirement on an emulation label. With isa.qemu that term
// outweighs the native tiers, which are the fallback, so a pod on an
// emulating node is where the webhook wanted it most.
func isEmulationTerm(p v1.PreferredSchedulingTerm) bool {
	e := p.Preference.MatchExpressions
	if len(e) == 0 || len(p.Preference.MatchFields) > 0 {
		return false
	}
	for _, r := range e {
		if !strings.HasPrefix(r.Key, isa.EmuPrefix) {
			return false
		}
	}
	return true
}

// tierTerms returns the pod's isamatch terms, tiers and emulation, nil
// when it has none.
func tierTerms(pod *v1.Pod) []v1.PreferredSchedulingTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var out []v1.PreferredSchedulingTerm
	for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if isTierTerm(p) || isEmulationTerm(p) {
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
		case isTierTerm(t):
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
