package contract

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// DecisionCounts is the decision as it is stored with the pod: the decision
// annotation (isa.DecisionAnnotation) holds it as compact JSON, for
// example {"nodes":9,"tiers":[[100,1,3],[40,1,3]]}. It is kept small
// because every pod carries it (etcd, watches, the scheduler's cache); the
// readable account of a decision (request, images, what each tier's groups
// have) is in the IsamatchDecided Event and `kubectl isa explain`, which
// derive it again from the pod. Pods admitted by releases before this
// format carry a readable line in isa.DecisionAnnotation and these numbers
// in isa.DecisionCountsAnnotation; ParseDecision reads both forms.
type DecisionCounts struct {
	// RequiredNodes is how many nodes of the webhook's inventory satisfy
	// the required affinity at admission.
	RequiredNodes int `json:"nodes"`
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
	// their entrypoint binary (the webhook's ELF inference).
	Inferred int `json:"inferred,omitempty"`
	// Fallback is the architecture required because some image was
	// unresolved and the pod asks no ISA (the webhook's fallback architecture);
	// empty when no fallback was applied.
	Fallback string `json:"fallback,omitempty"`
	// Emulator is the emulator setting of a pod with isa.qemu.
	Emulator *EmulatorSetting `json:"emulator,omitempty"`
	// Reason says why the pod got no affinity from isamatch: the message
	// it would have been denied with (WouldDeny), why the gate controller
	// denied it after admission (Gate "denied"), or why its affinity was
	// refused (Gate "refused"). At most MaxReason bytes.
	Reason string `json:"reason,omitempty"`
}

// MaxReason bounds DecisionCounts.Reason.
const MaxReason = 512

// UnresolvedImage is one image whose platforms are unknown: its reference
// (cut to 256 bytes) and the registry error kind
// (registry.Error.Kind, "timeout" or "other").
type UnresolvedImage struct {
	Image string `json:"image"`
	Kind  string `json:"kind"`
}

// MaxUnresolvedListed bounds DecisionCounts.Unresolved, and so the size of
// the counts annotation (a pod has at most 32 images).
const MaxUnresolvedListed = 8

// Gate states in DecisionCounts.Gate.
const (
	GatePending  = "pending"
	GateResolved = "resolved"
	GateTimeout  = "timeout"
	// GateRefused: the gate controller removed the gate without
	// isamatch's affinity because the API server refused it.
	GateRefused = "refused"
	// GateDenied: the gate controller found the pod one admission would
	// deny.
	GateDenied = "denied"
)

// TierCounts is one preferred term: its weight and how many ISA groups and
// nodes it names. It is stored as the array [weight, groups, nodes].
type TierCounts struct {
	Weight int32
	Groups int
	Nodes  int
}

// MarshalJSON writes [weight, groups, nodes].
func (t TierCounts) MarshalJSON() ([]byte, error) {
	return json.Marshal([3]int64{int64(t.Weight), int64(t.Groups), int64(t.Nodes)})
}

// UnmarshalJSON reads [weight, groups, nodes], or the object
// {"weight":..,"groups":..,"nodes":..} of the earlier format.
func (t *TierCounts) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Weight int32 `json:"weight"`
			Groups int   `json:"groups"`
			Nodes  int   `json:"nodes"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*t = TierCounts{Weight: o.Weight, Groups: o.Groups, Nodes: o.Nodes}
		return nil
	}
	var a []int64
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	if len(a) != 3 {
		return errors.New("a tier is [weight, groups, nodes]")
	}
	*t = TierCounts{Weight: int32(a[0]), Groups: int(a[1]), Nodes: int(a[2])}
	return nil
}

// UnmarshalJSON reads the stored decision, and also the earlier
// decision-counts form, whose required node count was "requiredNodes".
func (c *DecisionCounts) UnmarshalJSON(b []byte) error {
	type plain DecisionCounts
	var v struct {
		plain
		Legacy *int `json:"requiredNodes"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = DecisionCounts(v.plain)
	if v.Legacy != nil {
		c.RequiredNodes = *v.Legacy
	}
	return nil
}

// ParseDecisionCounts decodes a decision as stored: the JSON of the
// decision annotation (or of the earlier decision-counts annotation).
func ParseDecisionCounts(s string) (DecisionCounts, error) {
	var c DecisionCounts
	err := json.Unmarshal([]byte(s), &c)
	return c, err
}

// legacyWouldDeny began the readable line of a would-deny decision in the
// earlier format.
const legacyWouldDeny = "would deny (enforcement=warn), no affinity written: "

// maxStoredDecision bounds what ParseDecision reads: the webhook writes a
// few hundred bytes at most; anything longer is not its own.
const maxStoredDecision = 8 << 10

// ErrNoDecision is returned by ParseDecision for a pod isamatch has not
// decided.
var ErrNoDecision = errors.New("the pod has no isamatch decision")

// ParseDecision reads the decision stored in a pod's annotations: the
// JSON of isa.DecisionAnnotation or, for pods admitted before that format,
// isa.DecisionCountsAnnotation (whose readable line in
// isa.DecisionAnnotation becomes Reason when the pod would have been
// denied). It returns ErrNoDecision when there is neither.
func ParseDecision(annotations map[string]string) (DecisionCounts, error) {
	raw, ok := annotations[isa.DecisionAnnotation]
	legacy := ok && !strings.HasPrefix(raw, "{")
	if legacy || !ok {
		raw, ok = annotations[isa.DecisionCountsAnnotation]
	}
	if !ok {
		return DecisionCounts{}, ErrNoDecision
	}
	if len(raw) > maxStoredDecision {
		return DecisionCounts{}, errors.New("the decision annotation is over 8 KiB: not written by isamatch")
	}
	c, err := ParseDecisionCounts(raw)
	if err != nil {
		return DecisionCounts{}, err
	}
	if legacy && c.Reason == "" && (c.WouldDeny || c.Gate == GateDenied) {
		line := strings.TrimPrefix(annotations[isa.DecisionAnnotation], legacyWouldDeny)
		c.Reason = sanitize.Line(line, MaxReason)
	}
	return c, nil
}

// Encode is the decision as the annotation stores it; Reason is cut to
// MaxReason bytes and cleaned of control characters.
func (c DecisionCounts) Encode() string {
	c.Reason = sanitize.Line(c.Reason, MaxReason)
	b, err := json.Marshal(c)
	if err != nil { // only plain numbers: cannot fail
		return "{}"
	}
	return string(b)
}

// EmulatorSetting is the emulator setting a pod with isa.qemu got: the
// QEMU_CPU value set in its containers, or why none was. It is the
// decision's "emulator" part (DecisionCounts.Emulator, and a clause of the
// decision line).
type EmulatorSetting struct {
	// QEMUCPU is the value set; empty when none was (Reason says why).
	QEMUCPU string `json:"qemuCPU,omitempty"`
	// Set names the containers (init containers first) it was set in.
	Set []string `json:"set,omitempty"`
	// Own names the containers that set QEMU_CPU themselves: left alone.
	Own []string `json:"own,omitempty"`
	// Nodes is how many nodes that emulate the request record QEMUCPU,
	// Others how many record another value or none.
	Nodes  int `json:"nodes,omitempty"`
	Others int `json:"otherNodes,omitempty"`
	// Reason says why, when QEMUCPU is empty (pkg/mutate's Emulator*
	// constants).
	Reason string `json:"reason,omitempty"`
	// Best is what an emulating node of the request's architecture runs at
	// most, when no node emulates the request (Reason "noNode").
	Best string `json:"best,omitempty"`
}
