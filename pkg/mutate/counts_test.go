package mutate

import (
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestDecisionCounts checks the machine-readable numbers the webhook writes
// beside the human decision line, on the paper's cluster.
func TestDecisionCounts(t *testing.T) {
	tests := []struct {
		name string
		pod  podSpec
		want contract.DecisionCounts
	}{
		{
			name: "rv64imfd on the riscv nodes",
			pod:  podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}},
			want: contract.DecisionCounts{RequiredNodes: 4, Tiers: []contract.TierCounts{{Weight: 100, Groups: 1, Nodes: 1}, {Weight: 40, Groups: 1, Nodes: 2}, {Weight: 16, Groups: 1, Nodes: 1}}},
		},
		{
			name: "amd64 image only",
			pod:  podSpec{images: []string{"amd64:1"}},
			want: contract.DecisionCounts{RequiredNodes: 1, Tiers: []contract.TierCounts{{Weight: 100, Groups: 1, Nodes: 1}}},
		},
		{
			name: "unresolved images listed with their error kind",
			pod:  podSpec{images: []string{"private:1", "amd64:1", "gone:1"}},
			want: contract.DecisionCounts{RequiredNodes: 1, Tiers: []contract.TierCounts{{Weight: 100, Groups: 1, Nodes: 1}},
				Unresolved: []contract.UnresolvedImage{{Image: "private:1", Kind: "unauthorized"}, {Image: "gone:1", Kind: "notFound"}}},
		},
		{
			name: "nothing required, image unresolved: no node count, not noNode",
			pod:  podSpec{images: []string{"private:1"}},
			want: contract.DecisionCounts{Unresolved: []contract.UnresolvedImage{{Image: "private:1", Kind: "unauthorized"}}},
		},
		{
			name: "request no node has",
			pod:  podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gcv_zvfh")},
			want: contract.DecisionCounts{NoNode: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), Options{})
			req := admissionRequest(t, tc.pod.pod())
			pod := applyPatch(t, req, m.Handle(t.Context(), req))
			got := stored(t, pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision counts (-want +got):\n%s\nstored: %s", diff, pod.Annotations[isa.DecisionAnnotation])
			}
		})
	}
}
