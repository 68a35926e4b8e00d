package mutate

import (
	"encoding/json"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// DecisionCounts is the decision's numbers in a machine-readable form: the
// decision-counts annotation (isa.DecisionCountsAnnotation) holds it as
// compact JSON beside the human line, so programs need not parse that line.
type DecisionCounts struct {
	// RequiredNodes is how many nodes of the webhook's inventory satisfy
	// the required affinity at admission.
	RequiredNodes int `json:"requiredNodes"`
	// Tiers are the native preferred terms, highest weight first.
	Tiers []TierCounts `json:"tiers,omitempty"`
	// WouldDeny is set in warn mode when enforcement would have denied the
	// pod.
	WouldDeny bool `json:"wouldDeny,omitempty"`
	// Gate is set on pods that went through the scheduling gate: "pending"
	// from admission until the gate controller releases the pod, then
	// "resolved" or "timeout" (released past the bound with what was
	// known).
	Gate string `json:"gate,omitempty"`
	// Narrowed is set when a gated pod's own required terms could hold
	// only one of isamatch's alternatives each: the others were dropped
	// (the rules for gated pods let a term gain requirements but forbid new
	// terms), so the pod may run on fewer nodes than it could.
	Narrowed bool `json:"narrowed,omitempty"`
	// Unresolved are the images whose platforms could not be resolved (at
	// most MaxUnresolvedListed, in pod order): the pod was placed without
	// their constraint.
	Unresolved []UnresolvedImage `json:"unresolved,omitempty"`
	// NoNode is set when isamatch requires something no node of its
	// inventory satisfies at admission (RequiredNodes is 0 then, but 0 alone
	// also means "nothing required"): the pod stays Pending until such a
	// node joins.
	NoNode bool `json:"noNode,omitempty"`
	// Inferred is how many image platforms took their requirement from
	// their entrypoint binary (Options.Infer).
	Inferred int `json:"inferred,omitempty"`
	// Fallback is the architecture required because some image was
	// unresolved and the pod asks no ISA (Options.FallbackArchitecture);
	// empty when no fallback was applied.
	Fallback string `json:"fallback,omitempty"`
}

// UnresolvedImage is one image whose platforms are unknown: its reference
// (cut to maxUnresolvedRef bytes) and the registry error kind
// (registry.Error.Kind, "timeout" or "other").
type UnresolvedImage struct {
	Image string `json:"image"`
	Kind  string `json:"kind"`
}

// MaxUnresolvedListed bounds DecisionCounts.Unresolved, and so the size of
// the counts annotation (at most MaxImages images could fail).
const MaxUnresolvedListed = 8

// maxUnresolvedRef bounds one reference in DecisionCounts.Unresolved; real
// references are far shorter.
const maxUnresolvedRef = 256

func unresolvedImage(img ImageInfo) UnresolvedImage {
	return UnresolvedImage{Image: sanitize.Line(img.Ref, maxUnresolvedRef), Kind: errorKind(img.Err)}
}

// Gate states in DecisionCounts.Gate.
const (
	GatePending  = "pending"
	GateResolved = "resolved"
	GateTimeout  = "timeout"
)

// TierCounts is one preferred term: its weight and how many ISA groups and
// nodes it names.
type TierCounts struct {
	Weight int32 `json:"weight"`
	Groups int   `json:"groups"`
	Nodes  int   `json:"nodes"`
}

// ParseDecisionCounts decodes the decision-counts annotation.
func ParseDecisionCounts(s string) (DecisionCounts, error) {
	var c DecisionCounts
	err := json.Unmarshal([]byte(s), &c)
	return c, err
}

func (c DecisionCounts) encode() string {
	b, err := json.Marshal(c)
	if err != nil { // only plain numbers: cannot fail
		return "{}"
	}
	return string(b)
}

func tierCounts(runs []tierRun) []TierCounts {
	out := make([]TierCounts, 0, len(runs))
	for _, run := range runs {
		n := 0
		for _, g := range run.groups {
			n += g.nodes
		}
		out = append(out, TierCounts{Weight: run.weight, Groups: len(run.groups), Nodes: n})
	}
	return out
}
