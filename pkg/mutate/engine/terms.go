package engine

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// reqs is isa.Requirements as node-selector requirements.
func reqs(i isa.ISA, emulated bool) []corev1.NodeSelectorRequirement {
	return nodeReqs(isa.Requirements(i, emulated))
}

// emuReqs are the node requirements of e's emulation part.
func (e emuAlt) emuReqs() []corev1.NodeSelectorRequirement {
	r := reqs(e.q, true)
	if e.exec {
		r = append(r, nodeReqs([]isa.Requirement{isa.ExecRequirement(e.q.Arch)})...)
	}
	return r
}

func nodeReqs(reqs []isa.Requirement) []corev1.NodeSelectorRequirement {
	out := make([]corev1.NodeSelectorRequirement, len(reqs))
	for k, r := range reqs {
		out[k] = corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: slices.Sorted(slices.Values(r.Values))}
		if len(r.Values) == 0 {
			out[k].Values = nil
		}
	}
	return out
}

func archIn(arches []string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: isa.KubeArchLabel, Operator: corev1.NodeSelectorOpIn, Values: arches}
}

// plainArches returns the sorted architectures of the plain alternatives.
func plainArches(alts []alt) []string {
	var out []string
	for _, a := range alts {
		if a.plain && !slices.Contains(out, string(a.isa.Arch)) {
			out = append(out, string(a.isa.Arch))
		}
	}
	slices.Sort(out)
	return out
}

// requiredTerms: emulation terms first, then native; plain architectures
// share one kubernetes.io/arch In term.
func requiredTerms(emu []emuAlt, native []alt) []corev1.NodeSelectorTerm {
	var terms []corev1.NodeSelectorTerm
	add := func(t corev1.NodeSelectorTerm) {
		for _, have := range terms {
			if termKey(have) == termKey(t) {
				return
			}
		}
		terms = append(terms, t)
	}
	for k := 0; k < len(emu); {
		q := emu[k].q
		var plain []string
		for ; k < len(emu) && emu[k].q.Exts == q.Exts && emu[k].q.Arch == q.Arch; k++ {
			n := emu[k].native
			switch {
			case n.isa.Arch == "":
				add(corev1.NodeSelectorTerm{MatchExpressions: emu[k].emuReqs()})
			case n.plain:
				if !slices.Contains(plain, string(n.isa.Arch)) {
					plain = append(plain, string(n.isa.Arch))
				}
			default:
				add(corev1.NodeSelectorTerm{MatchExpressions: slices.Concat(reqs(q, true), reqs(n.isa, false))})
			}
		}
		if len(plain) > 0 {
			slices.Sort(plain)
			add(corev1.NodeSelectorTerm{MatchExpressions: slices.Concat(reqs(q, true), []corev1.NodeSelectorRequirement{archIn(plain)})})
		}
	}
	if p := plainArches(native); len(p) > 0 {
		add(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{archIn(p)}})
	}
	for _, n := range native {
		if !n.plain {
			add(corev1.NodeSelectorTerm{MatchExpressions: reqs(n.isa, false)})
		}
	}
	return terms
}
