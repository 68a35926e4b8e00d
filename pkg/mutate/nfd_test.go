package mutate

import (
	"maps"
	"slices"
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestNFDLabelKept: a node-feature-discovery label the pod requires in its
// own node affinity is kept beside isamatch's requirements, so a node needs
// both.
func TestNFDLabelKept(t *testing.T) {
	const avx512 = "feature.node.kubernetes.io/cpu-cpuid.AVX512F"
	nodes := map[string]map[string]string{
		"v3-avx512": testnodes.Labels(t, "amd64", "x86-64-v3"),
		"v3":        testnodes.Labels(t, "amd64", "x86-64-v3"),
		"v2-avx512": testnodes.Labels(t, "amd64", "x86-64-v2"),
		"arm64":     testnodes.Labels(t, "arm64", "arm64"),
	}
	nodes["v3-avx512"][avx512] = "true"
	nodes["v2-avx512"][avx512] = "true"
	pod := podSpec{
		images:      []string{"multi:1"},
		annotations: map[string]string{isa.BareRequestAnnotation: "x86-64-v3"},
		affinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: avx512, Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}},
		}}}},
	}.pod()
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{Resolve: ResolveSync})
	req := admissionRequest(t, pod)
	got := []string{}
	mutated := applyPatch(t, req, m.Handle(t.Context(), req))
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		if testnodes.Admits(mutated, n, nodes[n]) {
			got = append(got, n)
		}
	}
	if diff := cmp.Diff([]string{"v3-avx512"}, got); diff != "" {
		t.Errorf("admitted nodes (-want +got):\n%s", diff)
	}
}
