package kubectlisa

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// requiredMatches reports whether node satisfies required node selector
// terms (ORed) as the scheduler evaluates them; no terms admit every node,
// and terms the scheduler would reject admit none.
func requiredMatches(terms []corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(terms) == 0 {
		return true
	}
	sel, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: terms})
	return err == nil && sel.Match(node)
}

// preferredScore is what the scheduler's node affinity plugin adds up for
// node: the sum of the weights of the preferred terms it matches, and the
// 1-based position of the first one (0 when none matches).
func preferredScore(terms []corev1.PreferredSchedulingTerm, node *corev1.Node) (tier int, weight int32) {
	for k, p := range terms {
		if requiredMatches([]corev1.NodeSelectorTerm{p.Preference}, node) && !emptyTerm(p.Preference) {
			if tier == 0 {
				tier = k + 1
			}
			weight += p.Weight
		}
	}
	return tier, weight
}

// emptyTerm: the scheduler's preferred terms with no requirement match no
// node (nodeaffinity.NewPreferredSchedulingTerms skips them).
func emptyTerm(t corev1.NodeSelectorTerm) bool {
	return len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0
}
