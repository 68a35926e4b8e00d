package kubectlisa

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// termMatches reports whether a node with these labels satisfies one node
// selector term, as the scheduler evaluates matchExpressions (all must
// hold). matchFields are not used by isamatch and never match here.
func termMatches(t corev1.NodeSelectorTerm, labels map[string]string) bool {
	if len(t.MatchExpressions) == 0 || len(t.MatchFields) > 0 {
		return false
	}
	for _, e := range t.MatchExpressions {
		if !exprMatches(e, labels) {
			return false
		}
	}
	return true
}

func exprMatches(e corev1.NodeSelectorRequirement, labels map[string]string) bool {
	v, ok := labels[e.Key]
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(e.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(e.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if e.Operator == corev1.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

// anyTermMatches is a required node selector: terms are ORed; no terms
// admit every node.
func anyTermMatches(terms []corev1.NodeSelectorTerm, labels map[string]string) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if termMatches(t, labels) {
			return true
		}
	}
	return false
}

// preferredScore is what the scheduler's node affinity plugin adds up for a
// node: the sum of the weights of the preferred terms it matches, and the
// 1-based position of the first one (0 when none matches).
func preferredScore(terms []corev1.PreferredSchedulingTerm, labels map[string]string) (tier int, weight int32) {
	for k, p := range terms {
		if termMatches(p.Preference, labels) {
			if tier == 0 {
				tier = k + 1
			}
			weight += p.Weight
		}
	}
	return tier, weight
}

// termString is a term for people: "key In (a,b), key Exists".
func termString(t corev1.NodeSelectorTerm) string {
	parts := make([]string, 0, len(t.MatchExpressions))
	for _, e := range t.MatchExpressions {
		s := e.Key + " " + string(e.Operator)
		if len(e.Values) > 0 {
			s += " (" + strings.Join(e.Values, ",") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
