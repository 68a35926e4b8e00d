package mutate

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestRankingFollowsInventory checks that a memoised ranking is not reused
// once the inventory changes.
func TestRankingFollowsInventory(t *testing.T) {
	nodes := testnodes.Paper(t)
	inv := inventory.NewStatic(nodes)
	m := NewPodMutator(&fakeResolver{images: testImages()}, inv, Options{})
	spec := podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}}

	steps := []struct {
		name   string
		change func()
		want   map[string]int32
	}{
		{"initial", func() {}, map[string]int32{"node3": 100, "node5": 40, "node6": 40, "node4": 16}},
		{"same inventory again", func() {}, map[string]int32{"node3": 100, "node5": 40, "node6": 40, "node4": 16}},
		{"best-fit group leaves", func() {
			inv.Delete("node3")
			delete(nodes, "node3")
		}, map[string]int32{"node5": 100, "node6": 100, "node4": 40}},
		{"an imfd node joins", func() {
			nodes["node8"] = testnodes.Labels(t, "riscv64", "rv64imfd")
			inv.Set("node8", nodes["node8"])
		}, map[string]int32{"node8": 100, "node5": 40, "node6": 40, "node4": 16}},
	}
	var first *corev1.Pod
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change()
			req := admissionRequest(t, spec.pod())
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result.Message)
			}
			got := applyPatch(t, req, resp)
			if first == nil {
				first = got
			}
			if diff := cmp.Diff(st.want, testnodes.Placement(got, nodes)); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
		})
	}
	// A pod mutated against the first inventory and admitted again gets
	// today's tiers instead of the old ones, not both.
	req := admissionRequest(t, first)
	resp := m.Handle(t.Context(), req)
	if diff := cmp.Diff(steps[len(steps)-1].want, testnodes.Placement(applyPatch(t, req, resp), nodes)); diff != "" {
		t.Errorf("re-admitted placement (-want +got):\n%s", diff)
	}
}

// TestHandleConcurrent admits pods from many goroutines against a changing
// inventory (run with -race).
func TestHandleConcurrent(t *testing.T) {
	nodes := testnodes.Paper(t)
	inv := inventory.NewStatic(nodes)
	res := &fakeResolver{images: testImages()}
	m := NewPodMutator(res, inv, Options{})
	specs := []podSpec{
		{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}},
		{annotations: ann(isa.BareQEMUAnnotation, "rv64imfdv"), images: []string{"multi:1"}},
		{images: []string{"amd64:1", "private:1"}},
	}
	var wg sync.WaitGroup
	var want atomic.Int64 // one lookup per distinct image per pod
	for g := range 8 {
		wg.Go(func() {
			for k := range 50 {
				spec := specs[(g+k)%len(specs)]
				want.Add(int64(len(spec.images)))
				if resp := m.Handle(t.Context(), admissionRequest(t, spec.pod())); !resp.Allowed {
					t.Errorf("denied: %v", resp.Result.Message)
				}
			}
		})
	}
	wg.Go(func() {
		for k := range 50 {
			if k%2 == 0 {
				inv.Delete("node3")
			} else {
				inv.Set("node3", nodes["node3"])
			}
		}
	})
	wg.Wait()
	if got := res.calls.Load(); got != want.Load() {
		t.Errorf("resolver calls = %d, want %d", got, want.Load())
	}
}
