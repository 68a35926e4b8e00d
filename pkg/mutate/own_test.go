package mutate

import (
	"maps"
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestRankAmongOwnNodes: a pod confined by its own nodeSelector or
// required affinity to a pool without the cluster's leanest nodes is
// ranked among the pool's nodes, so the leanest node of each architecture
// it can use is its best fit.
func TestRankAmongOwnNodes(t *testing.T) {
	node := func(arch, native, pool string) map[string]string {
		l := testnodes.Labels(t, arch, native)
		l["pool"] = pool
		return l
	}
	richARM := "arm64+crc32+atomics+asimdrdm+dcpop"
	nodes := map[string]map[string]string{
		// Pool lean: the cluster's leanest node of each architecture.
		"lean-x86": node("amd64", "x86-64-v2", "lean"), "lean-arm": node("arm64", "arm64", "lean"),
		// Pool big: richer nodes, and a middle arm64 one.
		"big-x86": node("amd64", "x86-64-v4", "big"), "big-arm": node("arm64", richARM, "big"),
		"big-arm-mid": node("arm64", "arm64+crc32", "big"),
	}
	inBig := func(n string) bool { return nodes[n]["pool"] == "big" }
	tests := []struct {
		name string
		pod  podSpec
		want map[string]int32
	}{
		{
			name: "multi-arch image, nodeSelector pool=big: the leanest of the pool per architecture first",
			pod:  podSpec{images: []string{"multi:1"}, nodeSelector: map[string]string{"pool": "big"}},
			want: map[string]int32{"big-x86": 100, "big-arm-mid": 100, "big-arm": 40},
		},
		{
			name: "the same through required node affinity",
			pod:  podSpec{images: []string{"multi:1"}, affinity: nodeAffinityIn("pool", "big")},
			want: map[string]int32{"big-x86": 100, "big-arm-mid": 100, "big-arm": 40},
		},
		{
			name: "a request in the pool: its best fit there",
			pod:  podSpec{images: []string{"arm64:1"}, annotations: ann(isa.BareRequestAnnotation, "arm64+crc32"), nodeSelector: map[string]string{"pool": "big"}},
			want: map[string]int32{"big-arm-mid": 100, "big-arm": 40},
		},
		{
			name: "constraints that admit no node now: ranked over every node",
			pod:  podSpec{images: []string{"arm64:1"}, nodeSelector: map[string]string{"pool": "none"}},
			want: map[string]int32{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{})
			req := admissionRequest(t, tc.pod.pod())
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result.Message)
			}
			pod := applyPatch(t, req, resp)
			got := testnodes.Placement(pod, nodes)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placement (-want +got):\n%s\ndecision: %s", diff, summaryOf(t, m, req))
			}
			for n := range maps.Keys(got) {
				if !inBig(n) {
					t.Errorf("node %s outside the pool admitted", n)
				}
			}
		})
	}
	// The last case's tiers still exist, for nodes that join the pool.
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{})
	req := admissionRequest(t, podSpec{images: []string{"arm64:1"}, nodeSelector: map[string]string{"pool": "none"}}.pod())
	pod := applyPatch(t, req, m.Handle(t.Context(), req))
	if c := stored(t, pod); len(c.Tiers) == 0 {
		t.Errorf("no tiers for a pod whose constraints admit no node now: %+v", c)
	}
}

// nodeAffinityIn is a required node affinity "key In values".
func nodeAffinityIn(key string, values ...string) *corev1.NodeAffinity {
	return &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
		{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}}},
	}}}
}
