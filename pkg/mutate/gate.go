package mutate

import (
	"slices"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// The gated admission path (Options.Resolve gate or auto): a pod whose
// images must be looked up is admitted at once with the scheduling gate
// isa.ResolveGate, the affinity of what is already known (its request, its
// images in the cache, its own affinity) and a decision annotation saying
// what is pending. The gate controller resolves the rest and releases it
// (ReleaseGated).

// gates reports whether admission gates pod: in gate mode when it names an
// image, in auto mode when one of its images is not cached (missing), and
// always when it already carries the gate (a reinvocation after a later
// webhook changed the pod: the first call gated it, the controller will
// release it).
func (p *PodMutator) gates(pod *podFields, refs []string, missing []int) bool {
	switch {
	case engine.HasGate(pod.Spec.SchedulingGates):
		return true
	case p.opts.Resolve == ResolveGate:
		return len(refs) > 0
	case p.opts.Resolve == ResolveAuto:
		return len(missing) > 0
	}
	return false
}

// known returns the images that are not missing.
func known(images []resolved, missing []int) []resolved {
	out := make([]resolved, 0, len(images)-len(missing))
	for k, img := range images {
		if !slices.Contains(missing, k) {
			out = append(out, img)
		}
	}
	return out
}

// pendingSummary starts the decision annotation of a gated pod.
func pendingSummary(pending []string) string {
	s := "pending (gate " + isa.ResolveGate + "): "
	if len(pending) == 0 {
		return s + "images resolved after admission; known at admission: "
	}
	return s + "resolving " + strings.Join(pending, " ") + " after admission; known at admission: "
}
