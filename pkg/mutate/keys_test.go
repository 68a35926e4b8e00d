package mutate

import (
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestIgnoreBareKeys: with Options.Keys.IgnoreBareKeys a pod whose ARCH
// label or isa.request annotation means something else in the cluster's
// manifests is admitted as if it asked nothing (its image decides), where
// by default the same pod is denied or constrained by that value; the
// prefixed key still counts.
func TestIgnoreBareKeys(t *testing.T) {
	nodes := testnodes.Paper(t)
	tests := []struct {
		name              string
		pod               podSpec
		wantDenied        bool
		wantDeniedIgnored bool
	}{
		{name: "an ARCH label of another tool", pod: podSpec{labels: map[string]string{isa.RequestLabel: "frontend"}, images: []string{"riscv:1"}}, wantDenied: true},
		{name: "an isa.request annotation of another tool", pod: podSpec{annotations: map[string]string{isa.BareRequestAnnotation: "x86-fast"}, images: []string{"riscv:1"}}, wantDenied: true},
		{name: "a QEMU label of another tool", pod: podSpec{labels: map[string]string{isa.QEMULabel: "enabled"}, images: []string{"riscv:1"}}, wantDenied: true},
		{name: "the prefixed key still counts", pod: podSpec{annotations: map[string]string{isa.RequestAnnotation: "rv64gc+", isa.BareRequestAnnotation: "rv64gc"}, images: []string{"riscv:1"}},
			wantDenied: true, wantDeniedIgnored: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, ignore := range []bool{false, true} {
				m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{Keys: engine.KeyOptions{IgnoreBareKeys: ignore}})
				resp := m.Handle(t.Context(), admissionRequest(t, tc.pod.pod()))
				want := tc.wantDenied
				if ignore {
					want = tc.wantDeniedIgnored
				}
				if got := !resp.Allowed; got != want {
					t.Errorf("IgnoreBareKeys=%v: denied = %v, want %v (%v)", ignore, got, want, resp.Result)
				}
			}
		})
	}
}
