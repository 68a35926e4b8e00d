package mutate

import (
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

func TestSpreadConstraints(t *testing.T) {
	cluster := testnodes.Paper(t)
	// Three arm64 nodes: the largest best-fit group of a multi-arch image.
	for _, n := range []string{"arm-a", "arm-b", "arm-c"} {
		cluster[n] = testnodes.Labels(t, "arm64", "arm64")
	}
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(cluster), Options{})
	deployment := map[string]string{"app": "web", "pod-template-hash": "5d8f", "tier": "front"}
	statefulSet := map[string]string{"app": "db", "statefulset.kubernetes.io/pod-name": "db-0",
		"apps.kubernetes.io/pod-index": "0", "controller-revision-hash": "db-7c9"}
	for _, tc := range []struct {
		name       string
		pod        podSpec
		wantKey    string
		wantLabels map[string]string
	}{
		{"a request spreads over its best group",
			podSpec{images: []string{"riscv:1"}, labels: deployment, annotations: map[string]string{isa.RequestAnnotation: "rv64imfdv"}},
			isa.GroupDomainPrefix + isa.GroupID(testnodes.MustISA(t, "rv64imfdv")), deployment},
		{"a StatefulSet's per-pod labels are not counted by",
			podSpec{images: []string{"riscv:1"}, labels: statefulSet, annotations: map[string]string{isa.RequestAnnotation: "rv64imfd"}},
			isa.GroupDomainPrefix + isa.GroupID(testnodes.MustISA(t, "rv64imfd")), map[string]string{"app": "db"}},
		{"a multi-arch image spreads over the largest of the best groups",
			podSpec{images: []string{"multi:1"}, labels: deployment},
			isa.GroupDomainPrefix + isa.GroupID(testnodes.MustISA(t, "arm64")), deployment},
		{"isa.qemu turns the default spreading off",
			podSpec{images: []string{"amd64:1"}, labels: deployment, annotations: map[string]string{isa.QEMUAnnotation: "rv64imfdv"}},
			isa.GroupDomainPrefix + "none", deployment},
		{"a pod without labels siblings share: none (the defaults never spread it)",
			podSpec{images: []string{"riscv:1"}, labels: map[string]string{"statefulset.kubernetes.io/pod-name": "x-0"}}, "", nil},
		{"a pod without labels: none",
			podSpec{images: []string{"riscv:1"}}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := admissionRequest(t, tc.pod.pod())
			pod := applyPatch(t, req, m.Handle(t.Context(), req))
			if tc.wantKey == "" {
				if len(pod.Spec.TopologySpreadConstraints) != 0 {
					t.Errorf("constraints %+v, want none", pod.Spec.TopologySpreadConstraints)
				}
				return
			}
			want := []corev1.TopologySpreadConstraint{{
				MaxSkew: 3, TopologyKey: tc.wantKey, WhenUnsatisfiable: corev1.ScheduleAnyway,
				LabelSelector: &metav1.LabelSelector{MatchLabels: tc.wantLabels},
			}}
			if diff := cmp.Diff(want, pod.Spec.TopologySpreadConstraints); diff != "" {
				t.Errorf("constraints (-want +got):\n%s\ndecision: %s", diff, pod.Annotations[isa.DecisionAnnotation])
			}
		})
	}
}

// TestSpreadConstraintsOverZones: the replicas also spread over zones when
// every node of the best-fit group has a zone and they name two or more;
// a group with an unzoned node or in one zone gets the group constraint
// alone, and a gated pod the neutral one.
func TestSpreadConstraintsOverZones(t *testing.T) {
	labels := map[string]string{"app": "web", "pod-template-hash": "5d8f"}
	best := isa.GroupDomainPrefix + isa.GroupID(testnodes.MustISA(t, "rv64imfd"))
	for _, tc := range []struct {
		name  string
		zones map[string]string // best-fit node -> zone ("" for none)
		gated bool
		want  []string // the constraints' topology keys
	}{
		{"three zones", map[string]string{"rv-1": "a", "rv-2": "b", "rv-3": "c"}, false, []string{best, corev1.LabelTopologyZone}},
		{"two zones, uneven", map[string]string{"rv-1": "a", "rv-2": "a", "rv-3": "b"}, false, []string{best, corev1.LabelTopologyZone}},
		{"one node without a zone", map[string]string{"rv-1": "a", "rv-2": "b", "rv-3": ""}, false, []string{best}},
		{"one zone", map[string]string{"rv-1": "a", "rv-2": "a", "rv-3": "a"}, false, []string{best}},
		{"no zones", map[string]string{"rv-1": "", "rv-2": "", "rv-3": ""}, false, []string{best}},
		{"gated", map[string]string{"rv-1": "a", "rv-2": "b", "rv-3": "c"}, true, []string{isa.GroupDomainPrefix + "none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := map[string]map[string]string{}
			for n, z := range tc.zones {
				cluster[n] = isa.WithGroupDomain(testnodes.Labels(t, "riscv64", "rv64imfd"), n)
				if z != "" {
					cluster[n][corev1.LabelTopologyZone] = z
				}
			}
			// A richer node in another zone: not the best fit, so its
			// zone does not count.
			cluster["rvv-1"] = testnodes.Labels(t, "riscv64", "rv64imfdv")
			cluster["rvv-1"][corev1.LabelTopologyZone] = "d"
			opts := Options{}
			if tc.gated {
				opts.Resolve = ResolveGate
			}
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(cluster), opts)
			req := admissionRequest(t, podSpec{images: []string{"riscv:1"}, labels: labels,
				annotations: map[string]string{isa.RequestAnnotation: "rv64imfd"}}.pod())
			pod := applyPatch(t, req, m.Handle(t.Context(), req))
			var keys []string
			for _, c := range pod.Spec.TopologySpreadConstraints {
				keys = append(keys, c.TopologyKey)
				if c.WhenUnsatisfiable != corev1.ScheduleAnyway || c.LabelSelector == nil || !cmp.Equal(c.LabelSelector.MatchLabels, labels) {
					t.Errorf("constraint %+v: want ScheduleAnyway, counting the siblings by app and pod-template-hash", c)
				}
				if want := map[string]int32{corev1.LabelTopologyZone: 5}[c.TopologyKey]; want != 0 && c.MaxSkew != want {
					t.Errorf("zone constraint maxSkew %d, want the default %d", c.MaxSkew, want)
				}
			}
			if !cmp.Equal(keys, tc.want) {
				t.Errorf("topology keys %q, want %q", keys, tc.want)
			}
		})
	}
}
