package bench

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// The replayed patch turns each pod of the mix, as created, into the pod
// isamatch admitted, in what isamatch writes.
func TestReplayPatchesRebuildTheMutatedPods(t *testing.T) {
	var mutated []*corev1.Pod
	for i := range requestMix {
		p := LoadPod("ns", "size", "reg/img:v1", Unscheduled, i)
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[isa.DecisionAnnotation] = "request=... a/b ~ c"
		p.Annotations[isa.DecisionCountsAnnotation] = `{"requiredNodes":1}`
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: int32(10 + i), Preference: corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: isa.GroupLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"g"}}}}}},
		}}
		mutated = append(mutated, p)
	}
	patches, err := replayPatches(mutated)
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) != len(requestMix) {
		t.Fatalf("%d patches for %d requests", len(patches), len(requestMix))
	}
	for i, m := range mutated {
		plain := LoadPod("ns", "size", "reg/img:v1", Unscheduled, i)
		raw, err := json.Marshal(plain)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := json.Marshal(patches[requestMix[i]])
		if err != nil {
			t.Fatal(err)
		}
		p, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			t.Fatalf("request %q: %v", requestMix[i], err)
		}
		out, err := p.Apply(raw)
		if err != nil {
			t.Fatalf("request %q: apply %s: %v", requestMix[i], ops, err)
		}
		var got corev1.Pod
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if d := sameWrites(m, &got); d != "" {
			t.Errorf("request %q: %s", requestMix[i], d)
		}
		if diff := cmp.Diff(m.Spec.Containers, got.Spec.Containers); diff != "" {
			t.Errorf("request %q: containers changed (-want +got):\n%s", requestMix[i], diff)
		}
	}
}

func TestReplayPatchesRefuseGatedPods(t *testing.T) {
	p := LoadPod("ns", "size", "reg/img:v1", Unscheduled, 0)
	p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
	if _, err := replayPatches([]*corev1.Pod{p}); err == nil {
		t.Error("a gated pod was recorded: its patch would gate every replayed pod")
	}
}
