package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestSchedOrder checks that each kind comes first once in three runs and
// that every run measures all three.
func TestSchedOrder(t *testing.T) {
	first := map[schedKind]int{}
	for r := range 3 {
		o := schedOrder(r)
		if len(o) != 3 {
			t.Fatalf("run %d measures %v, want three kinds", r, o)
		}
		seen := map[schedKind]bool{}
		for _, k := range o {
			seen[k] = true
		}
		if len(seen) != 3 {
			t.Fatalf("run %d measures %v, want each kind once", r, o)
		}
		first[o[0]]++
	}
	if len(first) != 3 {
		t.Errorf("first kinds over three runs: %v, want each once", first)
	}
}

// TestConfine checks that a confined pod carries the required term and
// nothing else of the affinity, and that a pod without one stays as built.
func TestConfine(t *testing.T) {
	term := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"riscv64"}},
	}}}}
	pods := loadPods("ns", "p", "img", "", 2)
	pods[0].Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}},
	}}
	got := confine(pods, []*corev1.NodeSelector{term, nil})
	want := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term}}
	if d := cmp.Diff(want, got[0].Spec.Affinity); d != "" {
		t.Errorf("confined pod's affinity (-want +got):\n%s", d)
	}
	if got[0].Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == term {
		t.Error("confined pod shares the term it was given; want a copy")
	}
	if got[1].Spec.Affinity != nil {
		t.Errorf("pod without a term got affinity %v", got[1].Spec.Affinity)
	}
}
