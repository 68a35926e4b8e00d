package mutate

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestFallbackArchitecture: what a pod with unresolved images gets, at
// admission (sync) and when the gate controller releases it, through the
// same decision.
func TestFallbackArchitecture(t *testing.T) {
	riscv := []string{"node3", "node4", "node5", "node6", "node7"}
	tests := []struct {
		name         string
		spec         podSpec
		fallback     isa.Arch
		bound        bool // the registry never answers: admission's budget or the gate's bound ends
		wantNodes    []string
		wantFallback string
		wantSummary  string // in the readable decision line
	}{
		{name: "off: an unresolved image adds nothing", spec: podSpec{images: []string{"private:1"}},
			wantNodes: []string{"node1", "node2", "node3", "node4", "node5", "node6", "node7"}},
		{name: "on: the fallback architecture", spec: podSpec{images: []string{"private:1"}}, fallback: isa.AMD64,
			wantNodes: []string{"node1"}, wantFallback: "amd64", wantSummary: "fallback architecture amd64 applied (1 image with unknown platforms)"},
		{name: "on, past the time bound", spec: podSpec{images: []string{"slow:1"}}, fallback: isa.RISCV64, bound: true,
			wantNodes: riscv, wantFallback: "riscv64", wantSummary: "fallback architecture riscv64 applied"},
		{name: "on, combined with the known images", spec: podSpec{images: []string{"multi:1", "private:1"}}, fallback: isa.ARM64,
			wantNodes: []string{"node2"}, wantFallback: "arm64", wantSummary: "fallback architecture arm64 applied"},
		{name: "on, ruled out by the known images: not applied", spec: podSpec{images: []string{"arm64:1", "private:1"}}, fallback: isa.AMD64,
			wantNodes: []string{"node2"}, wantSummary: "fallback architecture amd64 not applied (1 image with unknown platforms): the known images need arch arm64"},
		{name: "on, the pod asks an ISA: unaffected", fallback: isa.AMD64,
			spec:      podSpec{images: []string{"private:1"}, annotations: map[string]string{isa.BareRequestAnnotation: "rv64imfd"}},
			wantNodes: []string{"node3", "node4", "node5", "node6"}},
		{name: "on, all images resolved: unaffected", spec: podSpec{images: []string{"arm64:1"}}, fallback: isa.AMD64,
			wantNodes: []string{"node2"}},
	}
	for _, tc := range tests {
		check := func(t *testing.T, pod *corev1.Pod, nodes map[string]map[string]string, summary string) {
			t.Helper()
			got := []string{}
			for _, n := range slices.Sorted(maps.Keys(nodes)) {
				if testnodes.Admits(pod, n, nodes[n]) {
					got = append(got, n)
				}
			}
			if diff := cmp.Diff(tc.wantNodes, got); diff != "" {
				t.Errorf("admitted nodes (-want +got):\n%s", diff)
			}
			if c := counts(t, pod); c.Fallback != tc.wantFallback {
				t.Errorf("counts fallback %q, want %q", c.Fallback, tc.wantFallback)
			}
			if !strings.Contains(summary, tc.wantSummary) || (tc.wantSummary == "" && strings.Contains(summary, "fallback")) {
				t.Errorf("decision %q, want it to say %q", summary, tc.wantSummary)
			}
		}
		t.Run(tc.name+"/admission", func(t *testing.T) {
			nodes := testnodes.Paper(t)
			opts := Options{Resolve: ResolveSync, FallbackArchitecture: tc.fallback}
			if tc.bound {
				opts.Budget = time.Millisecond // the resolver blocks until the budget ends
			}
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), opts)
			req := admissionRequest(t, tc.spec.pod())
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			if tc.wantFallback != "" && !slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.Contains(w, "fallback architecture "+tc.wantFallback) }) {
				t.Errorf("warnings %q, want one about the fallback", resp.Warnings)
			}
			check(t, applyPatch(t, req, resp), nodes, summaryOf(t, m, req))
		})
		t.Run(tc.name+"/release", func(t *testing.T) {
			nodes := testnodes.Paper(t)
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{Resolve: ResolveGate, FallbackArchitecture: tc.fallback})
			req := admissionRequest(t, tc.spec.pod())
			pod := applyPatch(t, req, m.Handle(t.Context(), req))
			if !engine.HasGate(pod.Spec.SchedulingGates) {
				t.Fatalf("pod not gated at admission")
			}
			before := pod.DeepCopy()
			// Past the bound the controller releases from the cache alone.
			rel := m.ReleaseGated(t.Context(), pod, !tc.bound)
			if !engine.IsNarrowingOf(required(pod), required(before)) {
				t.Errorf("the API server would refuse %+v over %+v", required(pod), required(before))
			}
			check(t, pod, nodes, rel.Message)
		})
	}
}

func TestCheckFallback(t *testing.T) {
	tests := []struct {
		arch    string
		wantErr string
	}{
		{arch: ""},
		{arch: "amd64"},
		{arch: "arm64"},
		{arch: "riscv64"},
		{arch: "riscv32", wantErr: `fallback architecture "riscv32": want one of amd64, arm64, riscv64, or empty for none`},
		{arch: "x86_64", wantErr: `fallback architecture "x86_64"`},
	}
	for _, tc := range tests {
		t.Run("arch "+tc.arch, func(t *testing.T) {
			err := CheckFallback(tc.arch)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
				t.Errorf("CheckFallback(%q) = %q, want %q", tc.arch, got, tc.wantErr)
			}
		})
	}
}
