package mutate

import (
	"encoding/json"
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

const qemuV = "rv64,v=true,Zfh=true"

// emulatingCluster is an x86 node whose QEMU runs rv64gcv under qemuV, an
// x86 node with a cross compiler for the same ISA and no QEMU handler, and
// the paper's IMFD riscv64 node.
func emulatingCluster(t *testing.T) (map[string]map[string]string, *inventory.Emulators) {
	t.Helper()
	nodes := map[string]map[string]string{
		"x86":   testnodes.QEMULabels(t, "amd64", "x86-64-v3", "rv64gcv_zfh"),
		"cross": testnodes.Labels(t, "amd64", "x86-64-v3", "rv64gcv_zfh"),
		"rv":    testnodes.Labels(t, "riscv64", "rv64imfd"),
	}
	em := inventory.NewEmulators()
	em.Set("x86", nodes["x86"], map[string]string{isa.QEMUCPUAnnotation(isa.RISCV64): qemuV})
	em.Set("cross", nodes["cross"], nil)
	em.Set("rv", nodes["rv"], nil)
	return nodes, em
}

// TestEmulatedImageRunsOnTheEmulatingNode: a riscv64-only image with
// isa.qemu runs where the node emulates the request (the image runs through
// the emulator), not only on native riscv64 nodes. Without emulatedAlt the
// emulation term also required kubernetes.io/arch=riscv64, which no
// emulating x86 node has. A node whose emulation labels come from a cross
// compiler alone starts no riscv64 image: without isa.EmuExecLabel in the
// term it was admitted.
func TestEmulatedImageRunsOnTheEmulatingNode(t *testing.T) {
	nodes, em := emulatingCluster(t)
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{Emulators: em})
	tests := []struct {
		name, qemu, image string
		want              map[string]bool // node -> admitted
	}{
		{name: "V, riscv64 image: the emulating x86 node", qemu: "rv64gcv", image: "riscv:1", want: map[string]bool{"x86": true, "cross": false, "rv": false}},
		{name: "D, riscv64 image: the emulator or the native node", qemu: "rv64imfd", image: "riscv:1", want: map[string]bool{"x86": true, "cross": false, "rv": true}},
		{name: "an RVA23 image needs an emulator that runs RVA23", qemu: "rv64gcv", image: "rva23:1", want: map[string]bool{"x86": false, "cross": false, "rv": false}},
		{name: "an amd64 image runs natively beside the emulator", qemu: "rv64gcv", image: "amd64:1", want: map[string]bool{"x86": true, "cross": true, "rv": false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := admissionRequest(t, podSpec{annotations: map[string]string{isa.QEMUAnnotation: tc.qemu}, images: []string{tc.image}}.pod())
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			pod := applyPatch(t, req, resp)
			got := map[string]bool{}
			for name, labels := range nodes {
				got[name] = testnodes.Admits(pod, name, labels)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("admitted nodes (-want +got):\n%s\ndecision: %s", diff, pod.Annotations[isa.DecisionAnnotation])
			}
		})
	}
}

func TestQEMUCPUInjection(t *testing.T) {
	nodes, em := emulatingCluster(t)
	own := corev1.EnvVar{Name: isa.QEMUCPUEnv, Value: "rv64"}
	pod := func(qemu string) *corev1.Pod {
		p := podSpec{images: []string{"riscv:1", "riscv:1"}, initImages: []string{"riscv:1"}}
		if qemu != "" {
			p.annotations = map[string]string{isa.QEMUAnnotation: qemu}
		}
		pd := p.pod()
		pd.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "K", Value: "v"}}
		pd.Spec.Containers[1].Env = []corev1.EnvVar{own}
		return pd
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		opts    Options
		wantEnv map[string][]corev1.EnvVar // container -> env after
		want    *contract.EmulatorSetting
		clause  string
	}{
		{
			name: "routed to emulation: set where the container has none",
			pod:  pod("rv64gcv"),
			opts: Options{Emulators: em},
			wantEnv: map[string][]corev1.EnvVar{
				"i0": {{Name: isa.QEMUCPUEnv, Value: qemuV}},
				"c0": {{Name: "K", Value: "v"}, {Name: isa.QEMUCPUEnv, Value: qemuV}},
				"c1": {own},
			},
			want:   &contract.EmulatorSetting{QEMUCPU: qemuV, Set: []string{"i0", "c0"}, Own: []string{"c1"}, Nodes: 1},
			clause: "emulator: QEMU_CPU=" + qemuV + " set in i0,c0 (recorded by 1 of 1 emulating nodes); c1 set their own",
		},
		{
			name:    "injection off",
			pod:     pod("rv64gcv"),
			wantEnv: map[string][]corev1.EnvVar{"i0": nil, "c0": {{Name: "K", Value: "v"}}, "c1": {own}},
			want:    &contract.EmulatorSetting{Reason: engine.EmulatorOff},
			clause:  "emulator: QEMU_CPU not set (--qemu-cpu=off)",
		},
		{
			name:    "no node emulates the request: nothing set, the decision says what emulation runs",
			pod:     pod("rv64gcv_zvbc"),
			opts:    Options{Emulators: em},
			wantEnv: map[string][]corev1.EnvVar{"i0": nil, "c0": {{Name: "K", Value: "v"}}, "c1": {own}},
			want:    &contract.EmulatorSetting{Reason: engine.EmulatorNoNode, Best: testnodes.MustISA(t, "rv64gcv_zfh").Compact()},
			clause:  "emulator: no node emulates the request; emulating nodes run at most rv64",
		},
		{
			name:    "no isa.qemu: no emulator part",
			pod:     pod(""),
			opts:    Options{Emulators: em},
			wantEnv: map[string][]corev1.EnvVar{"i0": nil, "c0": {{Name: "K", Value: "v"}}, "c1": {own}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), tc.opts)
			req := admissionRequest(t, tc.pod)
			resp := m.Handle(t.Context(), req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			for _, op := range resp.Patches {
				if strings.HasPrefix(op.Path, "/spec/containers") || strings.HasPrefix(op.Path, "/spec/initContainers") {
					if !strings.Contains(op.Path, "/env") {
						t.Errorf("patch op %s %s touches a container field other than env", op.Operation, op.Path)
					}
				}
			}
			got := applyPatch(t, req, resp)
			gotEnv := map[string][]corev1.EnvVar{}
			for _, c := range append(got.Spec.InitContainers, got.Spec.Containers...) {
				gotEnv[c.Name] = c.Env
			}
			if diff := cmp.Diff(tc.wantEnv, gotEnv); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			counts := stored(t, got)
			if diff := cmp.Diff(tc.want, counts.Emulator); diff != "" {
				t.Errorf("decision counts' emulator (-want +got):\n%s", diff)
			}
			if line := m.Explain(t.Context(), got); !strings.Contains(line, tc.clause) {
				t.Errorf("decision %q does not contain %q", line, tc.clause)
			}
			again := m.Handle(t.Context(), admissionRequest(t, got))
			if len(again.Patches) != 0 {
				t.Errorf("second admission patches %v, want none", again.Patches)
			}
		})
	}
}

// TestReleaseKeepsTheEmulatorSetting: the gate controller's decision keeps
// what admission set in the containers.
func TestReleaseKeepsTheEmulatorSetting(t *testing.T) {
	nodes, em := emulatingCluster(t)
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{Emulators: em, Resolve: ResolveGate})
	req := admissionRequest(t, podSpec{annotations: map[string]string{isa.QEMUAnnotation: "rv64gcv"}, images: []string{"riscv:1"}}.pod())
	pod := applyPatch(t, req, m.Handle(t.Context(), req))
	if !engine.HasGate(pod.Spec.SchedulingGates) {
		t.Fatalf("pod not gated: %v", pod.Spec.SchedulingGates)
	}
	r := m.ReleaseGated(t.Context(), pod, true)
	if r.Reason != ReleaseResolved {
		t.Fatalf("release: %+v", r)
	}
	counts := stored(t, pod)
	b, _ := json.Marshal(counts.Emulator)
	if counts.Emulator == nil || counts.Emulator.QEMUCPU != qemuV {
		t.Errorf("emulator after release = %s, want QEMU_CPU %s", b, qemuV)
	}
	if !strings.Contains(r.Message, "emulator: QEMU_CPU="+qemuV) {
		t.Errorf("release event %q does not keep the emulator clause", r.Message)
	}
}
