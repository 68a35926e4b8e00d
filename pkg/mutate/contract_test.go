package mutate

import (
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestTermsFollowTheContract: every preferred term admission writes is one
// pkg/contract recognises (what the rebalancer and kubectl isa read back).
func TestTermsFollowTheContract(t *testing.T) {
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), Options{})
	pods := map[string]podSpec{
		"request":   {annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}},
		"multiarch": {images: []string{"multi:1"}},
		"qemu":      {annotations: ann(isa.QEMUAnnotation, "rv64gcv")},
	}
	for name, spec := range pods {
		t.Run(name, func(t *testing.T) {
			req := admissionRequest(t, spec.pod())
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %+v", resp.Result)
			}
			pod := applyPatch(t, req, resp)
			if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil {
				t.Fatal("no node affinity written")
			}
			terms := pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			if len(terms) == 0 {
				t.Fatal("no preferred terms written")
			}
			var tierWeights []int32
			for _, p := range terms {
				switch {
				case contract.IsEmulationTerm(p):
					if p.Weight != contract.EmulationWeight {
						t.Errorf("emulation term weight %d, want %d", p.Weight, contract.EmulationWeight)
					}
				case contract.IsTierTerm(p):
					tierWeights = append(tierWeights, p.Weight)
				default:
					t.Errorf("term %+v is neither a tier nor the emulation term", p)
				}
			}
			for k := 1; k < len(tierWeights); k++ {
				if tierWeights[k] > tierWeights[k-1] {
					t.Errorf("tier weights not descending: %v", tierWeights)
				}
			}
		})
	}
}
