package contract

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Weights of the preferred terms (pkg/mutate's documentation has the
// arithmetic against the scheduler's other scores).
const (
	// EmulationWeight is the weight of the term for nodes whose emulation
	// or cross-compilation capability satisfies isa.qemu.
	EmulationWeight int32 = 100
	// MaxSizeBonus is the most a smaller ISA group's term loses to the
	// largest group's within one tier (weights 95 to 100 in the first).
	// A weight difference above it means a better tier, not a larger
	// group.
	MaxSizeBonus int32 = 5
)

// IsTierTerm reports whether p is an ISA tier term: a single In
// requirement on isa.GroupLabel (group values are hashes nobody writes by
// hand, so the shape is isamatch's alone).
func IsTierTerm(p corev1.PreferredSchedulingTerm) bool {
	e := p.Preference.MatchExpressions
	return len(e) == 1 && len(p.Preference.MatchFields) == 0 && e[0].Key == isa.GroupLabel && e[0].Operator == corev1.NodeSelectorOpIn
}

// IsEmulationTerm reports whether p is the term written for an isa.qemu
// request: nodes that emulate or cross-compile the ISA, every requirement
// on an emulation label (isa.EmuPrefix).
func IsEmulationTerm(p corev1.PreferredSchedulingTerm) bool {
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

// TierGroups returns the ISA groups p prefers: the values of its In
// requirements on isa.GroupLabel (nil when it has none).
func TierGroups(p corev1.PreferredSchedulingTerm) []string {
	var groups []string
	for _, e := range p.Preference.MatchExpressions {
		if e.Key == isa.GroupLabel && e.Operator == corev1.NodeSelectorOpIn {
			groups = append(groups, e.Values...)
		}
	}
	return groups
}
