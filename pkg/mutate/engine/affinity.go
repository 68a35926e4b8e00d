package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// maxRawProductFactor bounds the cross product, as a multiple of the term
// cap, before redundant terms are removed (the removal is quadratic).
const maxRawProductFactor = 4

// exprKey is the canonical text of a requirement (values sorted).
func exprKey(r corev1.NodeSelectorRequirement) string {
	vals := slices.Clone(r.Values)
	slices.Sort(vals)
	return r.Key + "\x00" + string(r.Operator) + "\x00" + strings.Join(vals, "\x01")
}

// termSet is a term as a set of canonical requirement keys (fields marked).
func termSet(t corev1.NodeSelectorTerm) []string {
	s := make([]string, 0, len(t.MatchExpressions)+len(t.MatchFields))
	for _, e := range t.MatchExpressions {
		s = append(s, "e"+exprKey(e))
	}
	for _, f := range t.MatchFields {
		s = append(s, "f"+exprKey(f))
	}
	slices.Sort(s)
	return slices.Compact(s)
}

func termKey(t corev1.NodeSelectorTerm) string {
	return strings.Join(termSet(t), "\x02")
}

func isEmptyTerm(t corev1.NodeSelectorTerm) bool {
	return len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0
}

// subset reports whether sorted a ⊆ sorted b.
func subset(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
		j++
	}
	return true
}

// andTerm is user AND ours: the user's requirements in their order, then
// ours that the user does not already have.
func andTerm(u, o corev1.NodeSelectorTerm) corev1.NodeSelectorTerm {
	t := corev1.NodeSelectorTerm{
		MatchExpressions: make([]corev1.NodeSelectorRequirement, len(u.MatchExpressions), len(u.MatchExpressions)+len(o.MatchExpressions)),
		MatchFields:      slices.Clone(u.MatchFields),
	}
	copy(t.MatchExpressions, u.MatchExpressions)
	for _, e := range o.MatchExpressions {
		if !slices.ContainsFunc(t.MatchExpressions, func(x corev1.NodeSelectorRequirement) bool { return sameRequirement(x, e) }) {
			t.MatchExpressions = append(t.MatchExpressions, e)
		}
	}
	return t
}

// sameRequirement reports whether a and b are the same requirement (values
// compared as sets); exprKey(a) == exprKey(b) without building the keys.
func sameRequirement(a, b corev1.NodeSelectorRequirement) bool {
	if a.Key != b.Key || a.Operator != b.Operator || len(a.Values) != len(b.Values) {
		return false
	}
	for _, v := range a.Values {
		if !slices.Contains(b.Values, v) {
			return false
		}
	}
	for _, v := range b.Values {
		if !slices.Contains(a.Values, v) {
			return false
		}
	}
	return true
}

// contradictory reports whether a term can match no node because two of
// its requirements on one key exclude each other (In lists with no common
// value, In or Exists together with DoesNotExist).
func contradictory(t corev1.NodeSelectorTerm) bool {
	if !repeatsKey(t.MatchExpressions) {
		return false // one requirement per key: each matches some node
	}
	type state struct {
		in      []string
		hasIn   bool
		exists  bool
		missing bool
	}
	by := map[string]*state{}
	for _, e := range t.MatchExpressions {
		s := by[e.Key]
		if s == nil {
			s = &state{}
			by[e.Key] = s
		}
		switch e.Operator {
		case corev1.NodeSelectorOpIn:
			if !s.hasIn {
				s.in, s.hasIn = slices.Clone(e.Values), true
			} else {
				s.in = slices.DeleteFunc(s.in, func(v string) bool { return !slices.Contains(e.Values, v) })
			}
			s.exists = true
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			s.exists = true
		case corev1.NodeSelectorOpDoesNotExist:
			s.missing = true
		}
		if (s.hasIn && len(s.in) == 0) || (s.exists && s.missing) {
			return true
		}
	}
	return false
}

func repeatsKey(es []corev1.NodeSelectorRequirement) bool {
	for i := range es {
		for j := range i {
			if es[i].Key == es[j].Key {
				return true
			}
		}
	}
	return false
}

// MergeRequired returns the user's required selector AND ours as a cross
// product (terms ORed, requirements ANDed). It never widens the user's
// constraint: every output term contains a user term. Terms that contradict
// themselves or contain another output term (so add nothing to the OR) are
// left out, which makes merging idempotent: merging the result with ours
// again gives the result. A user term with no requirements matches no node
// and is kept as it is. The error (a denial message) says when user and ours
// exclude each other or the result would exceed maxTerms.
func MergeRequired(user *corev1.NodeSelector, ours []corev1.NodeSelectorTerm, maxTerms int) (*corev1.NodeSelector, error) {
	if len(ours) == 0 {
		return user, nil
	}
	var userTerms []corev1.NodeSelectorTerm
	if user != nil {
		userTerms = user.NodeSelectorTerms
	}
	if len(userTerms) == 0 {
		userTerms = []corev1.NodeSelectorTerm{{}}
	}
	fromUser := user != nil && len(user.NodeSelectorTerms) > 0
	if n := len(userTerms) * len(ours); n > maxTerms*maxRawProductFactor {
		return nil, fmt.Errorf("the pod's required node affinity has %d terms; combined with isamatch's %d alternatives that is %d terms, more than %d: simplify requiredDuringSchedulingIgnoredDuringExecution or the isa.request alternatives",
			len(userTerms), len(ours), n, maxTerms)
	}
	type cand struct {
		term  corev1.NodeSelectorTerm
		set   []string
		empty bool
	}
	var cands []cand
	for _, u := range userTerms {
		if fromUser && isEmptyTerm(u) {
			cands = append(cands, cand{term: u, empty: true})
			continue
		}
		for _, o := range ours {
			t := andTerm(u, o)
			if contradictory(t) {
				continue
			}
			cands = append(cands, cand{term: t})
		}
	}
	if len(cands) > 1 {
		for k := range cands {
			if !cands[k].empty {
				cands[k].set = termSet(cands[k].term)
			}
		}
	}
	out := &corev1.NodeSelector{NodeSelectorTerms: make([]corev1.NodeSelectorTerm, 0, len(cands))}
	for j, b := range cands {
		redundant := false
		for i, a := range cands {
			if i == j || a.empty || b.empty {
				continue
			}
			if subset(a.set, b.set) && (len(a.set) < len(b.set) || i < j) {
				redundant = true
				break
			}
		}
		if !redundant {
			out.NodeSelectorTerms = append(out.NodeSelectorTerms, b.term)
		}
	}
	if len(out.NodeSelectorTerms) == 0 {
		return nil, fmt.Errorf("the pod's required node affinity excludes every node isamatch allows; remove the conflicting requirement (for example on %s)", isa.KubeArchLabel)
	}
	if len(out.NodeSelectorTerms) > maxTerms {
		return nil, fmt.Errorf("the pod's required node affinity combined with isamatch's would have %d terms, more than %d: simplify requiredDuringSchedulingIgnoredDuringExecution or the isa.request alternatives",
			len(out.NodeSelectorTerms), maxTerms)
	}
	return out, nil
}

// MergePreferred keeps the user's preferred terms, drops isamatch's tier
// terms from an earlier admission, and appends ours unless an identical term
// (same weight and requirements) is already there. Our tier terms are
// appended as they are: every earlier term of that shape was dropped, and
// they differ from each other in weight.
func MergePreferred(existing, ours []corev1.PreferredSchedulingTerm) []corev1.PreferredSchedulingTerm {
	out := make([]corev1.PreferredSchedulingTerm, 0, len(existing)+len(ours))
	for _, p := range existing {
		if !contract.IsTierTerm(p) {
			out = append(out, p)
		}
	}
	var seen map[string]bool
	key := func(p corev1.PreferredSchedulingTerm) string {
		return strconv.Itoa(int(p.Weight)) + "\x03" + termKey(p.Preference)
	}
	for _, p := range ours {
		if contract.IsTierTerm(p) {
			out = append(out, p)
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
			for _, q := range out {
				seen[key(q)] = true
			}
		}
		if k := key(p); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ExcludesAll reports whether a pod's spec.nodeSelector contradicts every
// term of sel: the pod could never be scheduled, so it is denied rather
// than left Pending.
func ExcludesAll(nodeSelector map[string]string, sel *corev1.NodeSelector) bool {
	if len(nodeSelector) == 0 || sel == nil {
		return false
	}
	for _, t := range sel.NodeSelectorTerms {
		if isEmptyTerm(t) {
			continue
		}
		withNS := corev1.NodeSelectorTerm{MatchExpressions: slices.Clone(t.MatchExpressions)}
		for k, v := range nodeSelector {
			withNS.MatchExpressions = append(withNS.MatchExpressions, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{v}})
		}
		if !contradictory(withNS) {
			return false
		}
	}
	return true
}
