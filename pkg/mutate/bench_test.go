package mutate

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

func benchPod(images, initImages []string) *corev1.Pod {
	return podSpec{
		annotations: ann(isa.BareRequestAnnotation, "rv64gc_zba_zbb"),
		images:      images,
		initImages:  initImages,
		affinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}},
			}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}},
			}}},
		},
	}.pod()
}

// BenchmarkHandle is one admission (a pod with two containers and an init
// container, a request, its own affinity) against 5,000 nodes in 200
// groups, with a warm image cache: "registry" is the real resolver after a
// first lookup against an in-process registry, "fake" an in-memory map.
// Both admit the same pod again and again, as a workload's replicas are;
// "distinct" admits 1,024 pods whose own affinity differs. It reports
// p50/p99 per admission; the goal is p99 < 500µs.
func BenchmarkHandle(b *testing.B) {
	inv := inventory.NewStatic(testnodes.Bench(b))
	if n := len(inv.Snapshot().Groups); n != 200 {
		b.Fatalf("groups = %d, want 200", n)
	}
	b.Run("registry", func(b *testing.B) {
		host := testRegistry(b)
		res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host}})
		benchHandle(b, NewPodMutator(res, inv, Options{}), benchPod(
			[]string{host + "/app:multi", host + "/app:riscv64"}, []string{host + "/app:multi"}))
	})
	b.Run("fake", func(b *testing.B) {
		benchHandle(b, NewPodMutator(&fakeResolver{images: testImages()}, inv, Options{}), benchPod(
			[]string{"riscv:1", "multi:1"}, []string{"multi:1"}))
	})
	b.Run("distinct", func(b *testing.B) {
		host := testRegistry(b)
		res := registry.MustNewResolver(registry.Options{InsecureRegistries: []string{host}})
		pods := make([]*corev1.Pod, 1024)
		for i := range pods {
			pods[i] = benchPod([]string{host + "/app:multi", host + "/app:riscv64"}, []string{host + "/app:multi"})
			pods[i].Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions[0].Values[0] = fmt.Sprintf("ssd-%d", i)
		}
		benchHandle(b, NewPodMutator(res, inv, Options{}), pods...)
	})
}

// benchHandle admits pods in turn, after one untimed admission of each.
func benchHandle(b *testing.B, m *PodMutator, pods ...*corev1.Pod) {
	ctx := logr.NewContext(b.Context(), logr.Discard())
	reqs := make([]admission.Request, len(pods))
	for i, pod := range pods {
		reqs[i] = admissionRequest(b, pod)
		if resp := m.Handle(ctx, reqs[i]); !resp.Allowed || len(patchJSON(b, resp)) == 0 {
			b.Fatalf("allowed=%v patches=%d", resp.Allowed, len(patchJSON(b, resp)))
		}
	}
	var d []time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		start := time.Now()
		m.Handle(ctx, reqs[i%len(reqs)])
		d = append(d, time.Since(start))
		i++
	}
	reportPercentiles(b, d)
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	b.Helper()
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[min(len(d)-1, int(p*float64(len(d))))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}
