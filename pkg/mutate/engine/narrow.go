package engine

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Required node affinity on a gated pod. While a pod carries a scheduling
// gate the API server lets its required node affinity change only in one
// way (the mutable scheduling directives of gated pods): when it is nil or
// has no terms it may be set to anything; otherwise the number of terms is
// fixed and each term may only gain requirements after the ones it has, in
// order. Preferred terms may change freely, and spec.nodeSelector may gain
// keys (isamatch does not use it).
//
// So admission, when it gates a pod whose required affinity is not nil,
// writes it in a form the gate controller can narrow: every term pinned to
// one architecture (SplitByArch). Every alternative isamatch writes is pinned
// to one architecture too (isa.ArchLabel or kubernetes.io/arch In one value),
// and an alternative of another architecture can never match a pinned
// term, so each term meets at most the alternatives of its architecture:
// usually one, which the term gains (NarrowRequired). Only when a pod's
// request or images leave several alternatives of one architecture (say
// rv64gcv|rva23u64 for a riscv64 image) must the controller drop all but the
// first of them from that term; the decision records it (Narrowed).

// archKeys are the node labels that name a node's architecture: the
// kubelet's and the labeler's (equal on every labelled node).
var archKeys = []string{isa.KubeArchLabel, isa.ArchLabel}

// modeledArches are the architectures isamatch writes alternatives for, in
// the order SplitByArch writes them.
var modeledArches = []string{string(isa.AMD64), string(isa.ARM64), string(isa.RISCV64), string(isa.RISCV32)}

// archesOf returns the architectures term t admits: in is nil when t
// names none with In (any architecture but notIn), else the intersection
// of its In lists less notIn.
func archesOf(exprs ...[]corev1.NodeSelectorRequirement) (in []string, pinned bool, notIn []string) {
	for _, es := range exprs {
		for _, e := range es {
			if !slices.Contains(archKeys, e.Key) {
				continue
			}
			switch e.Operator {
			case corev1.NodeSelectorOpIn:
				if !pinned {
					in, pinned = slices.Clone(e.Values), true
				} else {
					in = slices.DeleteFunc(in, func(v string) bool { return !slices.Contains(e.Values, v) })
				}
			case corev1.NodeSelectorOpNotIn:
				// Only the kubelet's label: a node the labeler has not
				// reached lacks isa.ArchLabel, and NotIn admits it.
				if e.Key == isa.KubeArchLabel {
					notIn = append(notIn, e.Values...)
				}
			}
		}
	}
	if pinned {
		in = slices.DeleteFunc(in, func(v string) bool { return slices.Contains(notIn, v) })
	}
	return in, pinned, notIn
}

// archDisjoint reports whether no architecture satisfies both a and b.
func archDisjoint(a, b corev1.NodeSelectorTerm) bool {
	in, pinned, _ := archesOf(a.MatchExpressions, b.MatchExpressions)
	return pinned && len(in) == 0
}

// SplitByArch rewrites sel into an equivalent selector whose every term
// admits at most one architecture: a term pinned to several is written once
// per architecture, an unpinned one once per modelled architecture plus once
// for every other architecture (kubernetes.io/arch NotIn the modelled ones,
// which nodes without the label match too). Each written term is the
// original's requirements followed by the pinning one. When that would
// exceed maxTerms, sel is returned as it is.
func SplitByArch(sel *corev1.NodeSelector, maxTerms int) *corev1.NodeSelector {
	if sel == nil || len(sel.NodeSelectorTerms) == 0 {
		return sel
	}
	var out []corev1.NodeSelectorTerm
	for _, t := range sel.NodeSelectorTerms {
		in, pinned, notIn := archesOf(t.MatchExpressions)
		switch {
		case isEmptyTerm(t), pinned && len(in) <= 1:
			out = append(out, t)
			continue
		case !pinned:
			in = slices.DeleteFunc(slices.Clone(modeledArches), func(a string) bool { return slices.Contains(notIn, a) })
			if len(in) == 0 { // already the term of the other architectures
				out = append(out, t)
				continue
			}
		}
		for _, a := range in {
			out = append(out, withReq(t, archIn([]string{a})))
		}
		if !pinned {
			out = append(out, withReq(t, corev1.NodeSelectorRequirement{Key: isa.KubeArchLabel, Operator: corev1.NodeSelectorOpNotIn, Values: slices.Clone(modeledArches)}))
		}
	}
	if len(out) > maxTerms {
		return sel
	}
	return &corev1.NodeSelector{NodeSelectorTerms: out}
}

// withReq is t with r appended to its requirements.
func withReq(t corev1.NodeSelectorTerm, r corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	out := *t.DeepCopy()
	out.MatchExpressions = append(out.MatchExpressions, r)
	return out
}

// neverTerm is what a term that can hold none of isamatch's alternatives
// gains: a label that exists and does not, so it matches no node.
var neverTerm = corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
	{Key: isa.ArchLabel, Operator: corev1.NodeSelectorOpExists},
	{Key: isa.ArchLabel, Operator: corev1.NodeSelectorOpDoesNotExist},
}}

// MatchNoNode returns sel with a requirement no node meets added to every
// term (a nil or empty sel becomes that one term), as the rules for gated
// pods allow writing it over sel: how a gated pod the decision denies is
// released, so that it never runs where it cannot run correctly.
func MatchNoNode(sel *corev1.NodeSelector) *corev1.NodeSelector {
	if sel == nil || len(sel.NodeSelectorTerms) == 0 {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{neverTerm}}
	}
	for k, t := range sel.NodeSelectorTerms {
		sel.NodeSelectorTerms[k] = andTerm(t, neverTerm)
	}
	return sel
}

// NarrowRequired returns cur AND ours as the rules for gated pods allow
// writing it over cur (see the top of this file). A cur that is nil or has
// no terms is replaced by MergeRequired(nil, ours). Otherwise each term of
// cur keeps its requirements and gains those of the one alternative of ours
// it can meet (architectures compatible, no contradiction); a term that
// meets none gains neverTerm; a term that meets several gains the first and
// narrowed is set. ok is false when no term of cur meets any alternative:
// the pod's own affinity excludes every node isamatch allows.
func NarrowRequired(cur *corev1.NodeSelector, ours []corev1.NodeSelectorTerm, maxTerms int) (out *corev1.NodeSelector, narrowed, ok bool, err error) {
	if len(ours) == 0 {
		return cur, false, true, nil
	}
	if cur == nil || len(cur.NodeSelectorTerms) == 0 {
		out, err = MergeRequired(nil, ours, maxTerms)
		return out, false, err == nil, err
	}
	out = &corev1.NodeSelector{NodeSelectorTerms: make([]corev1.NodeSelectorTerm, 0, len(cur.NodeSelectorTerms))}
	for _, c := range cur.NodeSelectorTerms {
		if isEmptyTerm(c) { // matches no node already
			out.NodeSelectorTerms = append(out.NodeSelectorTerms, c)
			continue
		}
		var cands []corev1.NodeSelectorTerm
		var sets [][]string
		for _, o := range ours {
			t := andTerm(c, o)
			if archDisjoint(c, o) || contradictory(t) {
				continue
			}
			cands = append(cands, t)
			sets = append(sets, termSet(t))
		}
		// A candidate that contains another adds nothing to the OR.
		var keep []corev1.NodeSelectorTerm
		for j := range cands {
			redundant := false
			for i := range cands {
				if i != j && subset(sets[i], sets[j]) && (len(sets[i]) < len(sets[j]) || i < j) {
					redundant = true
					break
				}
			}
			if !redundant {
				keep = append(keep, cands[j])
			}
		}
		switch {
		case len(keep) == 0:
			out.NodeSelectorTerms = append(out.NodeSelectorTerms, andTerm(c, neverTerm))
			continue
		case len(keep) > 1:
			narrowed = true
		}
		ok = true
		out.NodeSelectorTerms = append(out.NodeSelectorTerms, keep[0])
	}
	return out, narrowed, ok, nil
}

// IsNarrowingOf reports whether next is a change of prev the API server
// accepts on a gated pod: prev nil or without terms, or the same number of
// terms each starting with prev's requirements in order.
func IsNarrowingOf(next, prev *corev1.NodeSelector) bool {
	if prev == nil || len(prev.NodeSelectorTerms) == 0 {
		return true
	}
	if next == nil || len(next.NodeSelectorTerms) != len(prev.NodeSelectorTerms) {
		return false
	}
	for k, p := range prev.NodeSelectorTerms {
		n := next.NodeSelectorTerms[k]
		if len(n.MatchExpressions) < len(p.MatchExpressions) || len(n.MatchFields) < len(p.MatchFields) {
			return false
		}
		for i := range p.MatchExpressions {
			if !equalReq(n.MatchExpressions[i], p.MatchExpressions[i]) {
				return false
			}
		}
		for i := range p.MatchFields {
			if !equalReq(n.MatchFields[i], p.MatchFields[i]) {
				return false
			}
		}
	}
	return true
}

// equalReq is exact equality, values in order, as the API server compares.
func equalReq(a, b corev1.NodeSelectorRequirement) bool {
	return a.Key == b.Key && a.Operator == b.Operator && slices.Equal(a.Values, b.Values)
}
