package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

func term(reqs ...corev1.NodeSelectorRequirement) corev1.PreferredSchedulingTerm {
	return corev1.PreferredSchedulingTerm{Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: reqs}}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

// TestTermShapes: only isamatch's own shapes are recognised; a user's term
// that merely mentions an isamatch key is not.
func TestTermShapes(t *testing.T) {
	emu := isa.EmuPrefix + "rv64gcv"
	withField := term(req(isa.GroupLabel, corev1.NodeSelectorOpIn, "g1"))
	withField.Preference.MatchFields = []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "n1")}
	tests := []struct {
		name      string
		p         corev1.PreferredSchedulingTerm
		tier, emu bool
		groups    []string
	}{
		{"tier", term(req(isa.GroupLabel, corev1.NodeSelectorOpIn, "g1", "g2")), true, false, []string{"g1", "g2"}},
		{"group NotIn", term(req(isa.GroupLabel, corev1.NodeSelectorOpNotIn, "g1")), false, false, nil},
		{"group and zone", term(req(isa.GroupLabel, corev1.NodeSelectorOpIn, "g1"), req("zone", corev1.NodeSelectorOpIn, "a")), false, false, []string{"g1"}},
		{"group with a field", withField, false, false, []string{"g1"}},
		{"emulation", term(req(emu, corev1.NodeSelectorOpExists)), false, true, nil},
		{"emulation and zone", term(req(emu, corev1.NodeSelectorOpExists), req("zone", corev1.NodeSelectorOpIn, "a")), false, false, nil},
		{"empty", term(), false, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsTierTerm(tc.p); got != tc.tier {
				t.Errorf("IsTierTerm = %v, want %v", got, tc.tier)
			}
			if got := IsEmulationTerm(tc.p); got != tc.emu {
				t.Errorf("IsEmulationTerm = %v, want %v", got, tc.emu)
			}
			if diff := cmp.Diff(tc.groups, TierGroups(tc.p)); diff != "" {
				t.Errorf("TierGroups (-want +got):\n%s", diff)
			}
		})
	}
}
