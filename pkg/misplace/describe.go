package misplace

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Bounds of what is read from a pod or node and shown.
const (
	// maxShown bounds one value in a message (a request, an ISA).
	maxShown = 160
	// maxNodeISA bounds a node's ISA in a message: an x86-64 node's
	// extensions beyond its level run long.
	maxNodeISA = 96
	// maxTerms bounds the required terms shown.
	maxTerms = 4
)

// Needs is what a pod asks of its node, as far as it is known without a
// registry: its own request, whether isamatch decided it, and its required
// node affinity (which, for a decided pod, holds what its images need).
type Needs struct {
	// Request and QEMU are the pod's requests with the key each came
	// from ("" when none); RequestError the denial a malformed one gets.
	Request      string `json:"request,omitempty"`
	QEMU         string `json:"qemu,omitempty"`
	RequestError string `json:"requestError,omitempty"`
	// Decided is set when the webhook wrote its decision (the
	// decision-counts annotation); Counts is that decision.
	Decided bool                    `json:"decided"`
	Counts  contract.DecisionCounts `json:"counts"`
	// Required is the pod's required node affinity, one string per term
	// (ORed), at most maxTerms of them.
	Required []string `json:"required,omitempty"`
}

// PodNeeds reads what pod asks of its node, from the keys the webhook
// reads. The decision is read through
// its machine-readable annotation (contract.DecisionCounts), never the line
// for people.
func PodNeeds(pod *corev1.Pod, keys engine.KeyOptions) Needs {
	var n Needs
	in, msg := engine.PodInputWith(pod.ObjectMeta, keys)
	n.RequestError = sanitize.Line(msg, 2*maxShown)
	if in.Request != nil {
		n.Request = sanitize.Line(in.RequestText, maxShown) + " (" + in.RequestFrom + ")"
	}
	if in.QEMU != nil {
		n.QEMU = sanitize.Line(in.QEMUText, maxShown) + " (" + in.QEMUFrom + ")"
	}
	n.Counts, n.Decided = Decision(pod)
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		for k, t := range terms {
			if k == maxTerms {
				n.Required = append(n.Required, "…")
				break
			}
			n.Required = append(n.Required, sanitize.Line(TermString(t), 2*maxShown))
		}
	}
	return n
}

// Decision returns the webhook's decision on pod and whether it made one,
// read by contract.ParseDecision (bounded before it is parsed; both the
// current and the earlier stored forms). A value that is not the
// webhook's (too long, not its JSON) counts as no decision.
func Decision(pod *corev1.Pod) (contract.DecisionCounts, bool) {
	c, err := contract.ParseDecision(pod.Annotations)
	if err != nil {
		return contract.DecisionCounts{}, false
	}
	return c, true
}

// String is the needs for people: `request "rv64gcv" (annotation
// isa.isamatch.io/request); required: kubernetes.io/arch In (riscv64)`.
func (n Needs) String() string {
	var parts []string
	switch {
	case n.RequestError != "":
		parts = append(parts, "malformed request: "+n.RequestError)
	case n.Request != "":
		parts = append(parts, "request "+n.Request)
	}
	if n.QEMU != "" {
		parts = append(parts, "qemu "+n.QEMU)
	}
	if !n.Decided {
		parts = append(parts, "not decided by isamatch (admitted while its webhook failed open, before it was installed, or opted out)")
	} else if len(n.Counts.Unresolved) > 0 {
		parts = append(parts, "decided without the platforms of "+unresolved(n.Counts.Unresolved))
	}
	if len(n.Required) > 0 {
		parts = append(parts, "required node affinity: "+strings.Join(n.Required, " OR "))
	} else {
		parts = append(parts, "no required node affinity")
	}
	return strings.Join(parts, "; ")
}

func unresolved(us []contract.UnresolvedImage) string {
	names := make([]string, 0, len(us))
	for _, u := range us[:min(len(us), contract.MaxUnresolvedListed)] {
		names = append(names, sanitize.Line(u.Image, maxShown)+" ("+sanitize.Line(u.Kind, 32)+")")
	}
	return strings.Join(names, ", ")
}

// NodeISA is a node's ISA for people, from its labels: the native ISA
// isamatch labelled ("x86-64-v3", "rv64imafdcv_zba"), else the labeler's
// annotation, else the kubelet's architecture, saying isamatch did not
// label it.
func NodeISA(labels, annotations map[string]string) string {
	if native, _, ok := isa.NodeFromLabels(labels); ok {
		return sanitize.Line(native.Compact(), maxNodeISA)
	}
	if a := annotations[isa.NativeISAAnnotation]; a != "" {
		return sanitize.Line(a, maxShown) + " (annotation; no isamatch labels)"
	}
	if a := labels[isa.KubeArchLabel]; a != "" {
		return "arch " + sanitize.Line(a, 32) + " (no isamatch labels)"
	}
	return "unknown (no isamatch labels, no " + isa.KubeArchLabel + ")"
}

// TermString is a node selector term for people: "key In (a,b), key
// Exists".
func TermString(t corev1.NodeSelectorTerm) string {
	parts := make([]string, 0, len(t.MatchExpressions)+len(t.MatchFields))
	for _, reqs := range [][]corev1.NodeSelectorRequirement{t.MatchExpressions, t.MatchFields} {
		for _, e := range reqs {
			s := e.Key + " " + string(e.Operator)
			if len(e.Values) > 0 {
				s += " (" + strings.Join(e.Values, ",") + ")"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}
