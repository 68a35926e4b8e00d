package mutate

import (
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// withBulk adds to pod what a real pending pod carries and no reader of
// the cache reads: environment, probes, resources, volumes, tolerations,
// managed fields and status.
func withBulk(pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:containers":{}}}`)}}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for k := range cs {
			c := &cs[k]
			c.Env = append(c.Env, corev1.EnvVar{Name: "DATABASE_URL", Value: "postgres://db:5432/app"})
			c.Command = []string{"/app", "--serve"}
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/ready"}}}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}
	}
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	pod.UID, pod.ResourceVersion = "uid-1", "42"
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}}
	return pod
}

func cachePod(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := CachePod(pod.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Pod)
}

// TestCachePodDecided: a decided pod keeps everything Explain and the
// Events read, so its readable line is the same, and loses the rest.
func TestCachePodDecided(t *testing.T) {
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(mixedCluster(t, nil)), Options{})
	spec := podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gc"), labels: map[string]string{"app": "web"},
		images: []string{"riscv:1"}, initImages: []string{"multi:1"}, secrets: []string{"pull"}, sa: "app",
		nodeSelector: map[string]string{"pool": "a"}}
	req := admissionRequest(t, spec.pod())
	full := withBulk(applyPatch(t, req, m.Handle(t.Context(), req)))
	if !hasDecision(full.Annotations) || full.Spec.Affinity == nil {
		t.Fatalf("admission wrote no decision: %v", full.Annotations)
	}
	slim := cachePod(t, full)

	want := fieldsOf(full)
	want.ManagedFields = nil
	if diff := cmp.Diff(want, fieldsOf(slim), cmp.AllowUnexported(podFields{})); diff != "" {
		t.Errorf("what Explain reads changed (-full +cached):\n%s", diff)
	}
	if a, b := m.Explain(t.Context(), full), m.Explain(t.Context(), slim); a == "" || a != b {
		t.Errorf("Explain: %q of the full pod, %q of the cached one", a, b)
	}
	if slim.Spec.Containers[0].Name != full.Spec.Containers[0].Name || slim.Spec.InitContainers[0].Name != full.Spec.InitContainers[0].Name {
		t.Errorf("container names lost (the image Events name them): %v", slim.Spec.Containers)
	}
	if slim.ManagedFields != nil || slim.Spec.Volumes != nil || slim.Spec.Tolerations != nil ||
		slim.Spec.Containers[0].Env != nil || slim.Spec.Containers[0].ReadinessProbe != nil || slim.Status.Phase != "" {
		t.Errorf("the cached pod keeps what nobody reads: %+v", slim)
	}
}

// TestCachePodGated: a gated pod is kept whole but for its managed fields,
// since its release is a merge patch against it.
func TestCachePodGated(t *testing.T) {
	full := withBulk(podSpec{annotations: ann(isa.DecisionAnnotation, "{}"), images: []string{"riscv:1"}}.pod())
	full.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "other"}, {Name: isa.ResolveGate}}
	want := full.DeepCopy()
	want.ManagedFields = nil
	if diff := cmp.Diff(want, cachePod(t, full)); diff != "" {
		t.Errorf("a gated pod changed (-want +cached):\n%s", diff)
	}
}

// TestCachePodOther: a pod without a decision keeps what the readers
// filter on and nothing else.
func TestCachePodOther(t *testing.T) {
	full := withBulk(podSpec{labels: map[string]string{"app": "web"}, images: []string{"riscv:1"}}.pod())
	full.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "other"}}
	now := metav1.Now()
	full.DeletionTimestamp = &now
	want := &corev1.Pod{TypeMeta: full.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: full.Name, Namespace: full.Namespace, UID: full.UID, ResourceVersion: full.ResourceVersion,
			CreationTimestamp: full.CreationTimestamp, DeletionTimestamp: full.DeletionTimestamp},
		Spec: corev1.PodSpec{SchedulingGates: full.Spec.SchedulingGates}}
	if diff := cmp.Diff(want, cachePod(t, full)); diff != "" {
		t.Errorf("(-want +cached):\n%s", diff)
	}
	if got, _ := CachePod("tombstone"); got != "tombstone" {
		t.Errorf("a non-pod changed: %v", got)
	}
}

// BenchmarkCachePodRetained reports the heap a cached pending pod holds,
// whole (as the cache held it before CachePod, managed fields dropped) and
// as CachePod keeps it, for a decided pod and for one without a decision:
// an admitted Deployment pod with what a real one carries (withBulk).
func BenchmarkCachePodRetained(b *testing.B) {
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(mixedCluster(b, nil)), Options{})
	spec := podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gc"), labels: map[string]string{"app": "web", "pod-template-hash": "5d8f7c9b6"},
		images: []string{"riscv:1"}, sa: "app"}
	req := admissionRequest(b, spec.pod())
	decided := withBulk(applyPatch(b, req, m.Handle(b.Context(), req)))
	plain := withBulk(spec.pod())
	whole := func(obj any) (any, error) {
		obj.(*corev1.Pod).ManagedFields = nil
		return obj, nil
	}
	const n = 2000
	retained := func(pod *corev1.Pod, transform func(any) (any, error)) float64 {
		held := make([]any, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for k := range held {
			held[k], _ = transform(pod.DeepCopy())
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(held)
		return float64(after.HeapAlloc-before.HeapAlloc) / n
	}
	var r [4]float64
	for b.Loop() {
		r = [4]float64{retained(decided, whole), retained(decided, CachePod), retained(plain, whole), retained(plain, CachePod)}
	}
	b.ReportMetric(r[0], "decided-whole-B/pod")
	b.ReportMetric(r[1], "decided-cached-B/pod")
	b.ReportMetric(r[2], "other-whole-B/pod")
	b.ReportMetric(r[3], "other-cached-B/pod")
}
