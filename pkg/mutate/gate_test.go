package mutate

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

func counts(t *testing.T, pod *corev1.Pod) contract.DecisionCounts {
	t.Helper()
	c, err := contract.ParseDecision(pod.Annotations)
	if err != nil {
		t.Fatalf("decision %q: %v", pod.Annotations[isa.DecisionAnnotation], err)
	}
	return c
}

// TestAdmissionGates: which pods each mode gates, that a gated pod is
// answered without a registry lookup, and what it carries.
func TestAdmissionGates(t *testing.T) {
	tests := []struct {
		name        string
		mode        string
		cached      []string
		gates       []corev1.PodSchedulingGate
		deadGate    bool // no gate controller holds its lease
		wantGated   bool
		wantResolve int64
	}{
		{name: "sync waits for the registry", mode: ResolveSync, wantResolve: 2},
		{name: "auto gates when an image is not cached", mode: ResolveAuto, cached: []string{"riscv:1"}, wantGated: true},
		{name: "auto answers at once when every image is cached", mode: ResolveAuto, cached: []string{"riscv:1", "multi:1"}},
		{name: "gate gates even when every image is cached", mode: ResolveGate, cached: []string{"riscv:1", "multi:1"}, wantGated: true},
		{name: "a pod that carries the gate stays gated in sync mode", mode: ResolveSync, cached: []string{"riscv:1", "multi:1"},
			gates: []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}, wantGated: true},
		{name: "another gate is kept beside ours", mode: ResolveAuto, gates: []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/admission"}}, wantGated: true},
		{name: "auto resolves at admission while no gate controller is alive", mode: ResolveAuto, cached: []string{"riscv:1"}, deadGate: true, wantResolve: 1},
		{name: "gate resolves at admission while no gate controller is alive", mode: ResolveGate, deadGate: true, wantResolve: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := cachingFake{fakeResolver: &fakeResolver{images: testImages()}, cached: map[string]bool{}}
			for _, r := range tc.cached {
				fake.cached[r] = true
			}
			opts := Options{Resolve: tc.mode, GateAlive: func() bool { return !tc.deadGate }}
			m := NewPodMutator(fake, inventory.NewStatic(testnodes.Paper(t)), opts)
			pod := podSpec{images: []string{"riscv:1", "multi:1"}, annotations: map[string]string{isa.BareRequestAnnotation: "rv64imfdv"}}.pod()
			pod.Spec.SchedulingGates = tc.gates
			req := admissionRequest(t, pod)
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			if got := fake.calls.Load(); got != tc.wantResolve {
				t.Errorf("registry lookups = %d, want %d", got, tc.wantResolve)
			}
			if warned := slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.Contains(w, "no gate controller") }); warned != tc.deadGate {
				t.Errorf("warnings %q: a gate-controller warning %t, want %t", resp.Warnings, warned, tc.deadGate)
			}
			got := applyPatch(t, req, resp)
			wantGates := tc.gates
			if tc.wantGated && !engine.HasGate(tc.gates) {
				wantGates = append(wantGates, corev1.PodSchedulingGate{Name: isa.ResolveGate})
			}
			if diff := cmp.Diff(wantGates, got.Spec.SchedulingGates); diff != "" {
				t.Errorf("scheduling gates (-want +got):\n%s", diff)
			}
			wantState := ""
			if tc.wantGated {
				wantState = contract.GatePending
			}
			if c := counts(t, got); c.Gate != wantState {
				t.Errorf("decision gate state = %q, want %q", c.Gate, wantState)
			}
			// Known at admission either way: the request.
			for n, l := range testnodes.Paper(t) {
				if testnodes.Admits(got, n, l) && l[isa.ArchLabel] != "riscv64" {
					t.Errorf("node %s (%s) admitted, but the request is rv64imfdv", n, l[isa.ArchLabel])
				}
			}
			// Reinvoked, the pod is not changed again.
			again := m.Handle(t.Context(), admissionRequest(t, got))
			if !again.Allowed || len(patchJSON(t, again)) != 0 {
				t.Errorf("second admission allowed=%v patch=%s", again.Allowed, patchJSON(t, again))
			}
		})
	}
}

// release runs pod through gated admission and the gate controller's
// decision, as the API server would store each.
func release(t *testing.T, m *PodMutator, pod *corev1.Pod) (admitted, released *corev1.Pod, r GateRelease, allowed bool) {
	t.Helper()
	req := admissionRequest(t, pod)
	resp := m.Handle(t.Context(), req)
	if !resp.Allowed {
		return nil, nil, GateRelease{}, false
	}
	admitted = applyPatch(t, req, resp)
	if !engine.HasGate(admitted.Spec.SchedulingGates) {
		t.Fatalf("admitted without the gate: %s", admitted.Annotations[isa.DecisionAnnotation])
	}
	released = admitted.DeepCopy()
	r = m.ReleaseGated(t.Context(), released, true)
	if engine.HasGate(released.Spec.SchedulingGates) {
		t.Fatal("released pod still carries the gate")
	}
	return admitted, released, r, true
}

func required(pod *corev1.Pod) *corev1.NodeSelector {
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil {
		return nil
	}
	return pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// TestPropertyGateMatchesSync checks on random clusters, pods and images
// that a pod admitted through the gate and released by the controller ends
// up where synchronous admission would place it: the same nodes admitted
// with the same preferred scores, or, when the pod's own terms forced a
// narrowing, a subset of them; that every release is a change the API
// server accepts on a gated pod; and that a pod synchronous admission
// denies is placed nowhere.
func TestPropertyGateMatchesSync(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2026))
	const rounds = 400
	var same, narrowed, denied int
	for round := range rounds {
		nodes := randomNodes(t, r)
		spec := randomPod(r, nodes)
		name := fmt.Sprintf("round %d", round)
		inv := inventory.NewStatic(nodes)
		sync := NewPodMutator(&fakeResolver{images: testImages()}, inv, Options{})
		gated := NewPodMutator(&fakeResolver{images: testImages()}, inv, Options{Resolve: ResolveGate})

		req := admissionRequest(t, spec.pod())
		resp := sync.Handle(t.Context(), req)
		admitted, released, rel, allowed := release(t, gated, spec.pod())
		if !allowed {
			if resp.Allowed {
				t.Errorf("%s: gated admission denied a pod synchronous admission allows", name)
			}
			continue
		}
		if !engine.IsNarrowingOf(required(released), required(admitted)) {
			t.Errorf("%s: the API server would refuse the release\nadmitted: %+v\nreleased: %+v", name, required(admitted), required(released))
		}
		if !resp.Allowed {
			denied++
			if rel.Reason != ReleaseDenied {
				t.Errorf("%s: synchronous admission denies (%s), the release is %q", name, resp.Result.Message, rel.Reason)
			}
			for n, l := range nodes {
				if testnodes.Admits(released, n, l) {
					t.Errorf("%s: denied pod admits node %s", name, n)
				}
			}
			continue
		}
		want := testnodes.Placement(applyPatch(t, req, resp), nodes)
		got := testnodes.Placement(released, nodes)
		if rel.Reason == ReleaseDenied {
			// Synchronous admission lets through some terms that only a
			// node without the kubelet's architecture label could match
			// (there is none); the controller sees they cannot match.
			denied++
			if len(want) > 0 || len(got) > 0 {
				t.Errorf("%s: released as denied (%s), synchronous admission places on %v", name, released.Annotations[isa.DecisionAnnotation], want)
			}
			continue
		}
		if counts(t, released).Narrowed {
			narrowed++
			for n := range got {
				if _, ok := want[n]; !ok {
					t.Errorf("%s: narrowed release admits %s, which synchronous admission excludes", name, n)
				}
			}
			continue
		}
		same++
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: placement (-sync +gate):\n%s\nadmitted: %+v\nreleased: %+v", name, diff, required(admitted), required(released))
		}
		if c := counts(t, released); c.Gate != contract.GateResolved {
			t.Errorf("%s: released gate state %q, want %q: %s\nadmitted: %+v", name, c.Gate, contract.GateResolved, released.Annotations[isa.DecisionAnnotation], required(admitted))
		}
	}
	t.Logf("%d rounds: %d placed as synchronous admission, %d narrowed, %d denied", rounds, same, narrowed, denied)
	if same < rounds/2 || denied == 0 || narrowed == 0 {
		t.Errorf("generator too narrow: %d same, %d narrowed, %d denied", same, narrowed, denied)
	}
}

// TestReleaseGated covers the controller's decision case by case.
func TestReleaseGated(t *testing.T) {
	zone := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}
	tests := []struct {
		name      string
		spec      podSpec
		enforce   string
		resolve   bool
		wantRel   GateRelease
		wantState string
		wantNodes []string
	}{
		{name: "resolved: the images' constraint", spec: podSpec{images: []string{"rva23:1"}}, resolve: true,
			wantRel: GateRelease{Reason: ReleaseResolved}, wantState: contract.GateResolved},
		{name: "past the bound: only what is known", spec: podSpec{images: []string{"rva23:1"}, annotations: map[string]string{isa.BareRequestAnnotation: "rv64imfd"}},
			wantRel: GateRelease{Reason: ReleaseTimeout, Warning: true}, wantState: contract.GateTimeout, wantNodes: []string{"node3", "node4", "node5", "node6"}},
		{name: "the pod's own term holds one of two alternatives", resolve: true,
			spec:    podSpec{images: []string{"labelled:1"}, affinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{zone}}}},
			wantRel: GateRelease{Reason: ReleaseResolved, Warning: true}, wantState: contract.GateResolved},
		{name: "images without a common architecture, deny mode: no node", spec: podSpec{images: []string{"amd64:1", "riscv:1"}}, resolve: true,
			wantRel: GateRelease{Reason: ReleaseDenied, Warning: true}, wantState: ReleaseDenied, wantNodes: []string{}},
		{name: "images without a common architecture, warn mode: what admission wrote", spec: podSpec{images: []string{"amd64:1", "riscv:1"}}, resolve: true, enforce: EnforcementWarn,
			wantRel: GateRelease{Reason: ReleaseDenied, Warning: true}, wantState: ReleaseDenied,
			wantNodes: []string{"node1", "node2", "node3", "node4", "node5", "node6", "node7"}},
		{name: "ignored pod: gate removed only", spec: podSpec{images: []string{"rva23:1"}, labels: map[string]string{isa.IgnoreLabel: "true"}}, resolve: true,
			wantRel: GateRelease{Reason: ReleaseSkipped}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := testnodes.Paper(t)
			for _, l := range nodes {
				l["zone"] = "a"
			}
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{Resolve: ResolveGate, Enforcement: tc.enforce})
			pod := tc.spec.pod()
			pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
			before := pod.DeepCopy()
			rel := m.ReleaseGated(t.Context(), pod, tc.resolve)
			rel.Message = ""
			if diff := cmp.Diff(tc.wantRel, rel); diff != "" {
				t.Errorf("release (-want +got):\n%s", diff)
			}
			if pod.Spec.SchedulingGates != nil {
				t.Errorf("gates left: %v", pod.Spec.SchedulingGates)
			}
			if !engine.IsNarrowingOf(required(pod), required(before)) {
				t.Errorf("the API server would refuse %+v over %+v", required(pod), required(before))
			}
			if tc.wantState != "" {
				if c := counts(t, pod); c.Gate != tc.wantState {
					t.Errorf("gate state %q, want %q", c.Gate, tc.wantState)
				}
			}
			if tc.wantNodes != nil {
				got := []string{}
				for _, n := range slices.Sorted(maps.Keys(nodes)) {
					if testnodes.Admits(pod, n, nodes[n]) {
						got = append(got, n)
					}
				}
				if diff := cmp.Diff(tc.wantNodes, got); diff != "" {
					t.Errorf("admitted nodes (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestReleaseStopsAtTheBound: a registry that never answers holds the
// release only until the context the controller gives it ends; then the
// answer is pending and the pod untouched, and the release from the cache
// alone (past the bound) is a timeout.
func TestReleaseStopsAtTheBound(t *testing.T) {
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), Options{Resolve: ResolveGate})
	pod := podSpec{images: []string{"slow:1"}}.pod()
	pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
	before := pod.DeepCopy()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if rel := m.ReleaseGated(ctx, pod, true); !rel.Pending || rel.Reason != "" {
		t.Errorf("release %+v, want pending", rel)
	}
	if diff := cmp.Diff(before, pod); diff != "" {
		t.Errorf("a pending release changed the pod (-want +got):\n%s", diff)
	}
	if rel := m.ReleaseGated(t.Context(), pod, false); rel.Reason != ReleaseTimeout || rel.Pending {
		t.Errorf("release from the cache %+v, want reason %q, not pending", rel, ReleaseTimeout)
	}
	if pod.Spec.SchedulingGates != nil {
		t.Errorf("gates left: %v", pod.Spec.SchedulingGates)
	}
}
