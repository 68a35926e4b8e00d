package gate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/registry"
)

// lateRegistry resolves images to linux/amd64 as registry.Resolver does:
// a lookup the caller stops waiting for goes on and its result is cached.
// Images named "late..." are answered once answer is closed, "slow..."
// never; the others at once. Every lookup of a late or slow image is sent
// on entered.
type lateRegistry struct {
	answer  chan struct{}
	entered chan string
}

func newLateRegistry() *lateRegistry {
	return &lateRegistry{answer: make(chan struct{}), entered: make(chan string, 64)}
}

var amd64 = []registry.Platform{{OS: "linux", Architecture: "amd64"}}

func (f *lateRegistry) Resolve(ctx context.Context, ref string, _ registry.PullAuth) ([]registry.Platform, error) {
	var wait <-chan struct{} // nil: never
	switch {
	case strings.HasPrefix(ref, "late"):
		wait = f.answer
	case !strings.HasPrefix(ref, "slow"):
		return amd64, nil
	}
	f.entered <- ref
	select {
	case <-wait:
		return amd64, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Cached holds the late images once they are answered.
func (f *lateRegistry) Cached(ref string, _ registry.PullAuth) ([]registry.Platform, bool, error) {
	select {
	case <-f.answer:
		if strings.HasPrefix(ref, "late") {
			return amd64, true, nil
		}
	default:
	}
	return nil, false, nil
}

// testReconciler returns a Reconciler of pods on a fake client, resolving
// with res, at the fixed time now, with the default bounds of Setup.
func testReconciler(t *testing.T, res mutate.ImageResolver, now time.Time, pods ...*corev1.Pod) (*Reconciler, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for _, p := range pods {
		b = b.WithObjects(p)
	}
	c := b.Build()
	m := mutate.NewPodMutator(res, inventory.NewStatic(map[string]map[string]string{"n": {isa.KubeArchLabel: "amd64"}}), mutate.Options{Resolve: mutate.ResolveGate})
	return &Reconciler{Client: c, Releaser: m, Recorder: events.NewFakeRecorder(100), Metrics: NewMetrics(), Timeout: DefaultTimeout,
		Attempt: DefaultAttempt, PerNamespace: DefaultWorkersPerNamespace(DefaultWorkers), Now: func() time.Time { return now }}, c
}

func inNamespace(pod *corev1.Pod, ns string) *corev1.Pod {
	pod.Namespace = ns
	return pod
}

// reconcilePod calls r for pod and returns the result and the pod as
// stored after it.
func reconcilePod(t *testing.T, r *Reconciler, c client.Client, pod *corev1.Pod) (reconcile.Result, *corev1.Pod) {
	t.Helper()
	res, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pod)})
	if err != nil {
		t.Fatalf("Reconcile %s: %v", pod.Name, err)
	}
	got := &corev1.Pod{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	return res, got
}

func deferredCount(t *testing.T, m *Metrics, reason string) float64 {
	t.Helper()
	var v dto.Metric
	if err := m.Deferred.WithLabelValues(reason).Write(&v); err != nil {
		t.Fatal(err)
	}
	return v.GetCounter().GetValue()
}

// TestAttemptGivesTheWorkerBack: a call waits for a slow registry at most
// Attempt, leaves the pod gated and asks to be called again before the
// pod's bound; the lookup goes on, and the call after it answered releases
// the pod with its affinity.
func TestAttemptGivesTheWorkerBack(t *testing.T) {
	now := time.Now()
	pod := gatedPod("p", "late:1", now.Add(-time.Second), isa.ResolveGate)
	reg := newLateRegistry()
	r, c := testReconciler(t, reg, now, pod)
	r.Attempt = 10 * time.Millisecond

	res, got := reconcilePod(t, r, c, pod)
	if !engine.HasGate(got.Spec.SchedulingGates) {
		t.Fatalf("released while its image was still being looked up: %s", got.Annotations[isa.DecisionAnnotation])
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > DefaultRetry {
		t.Errorf("RequeueAfter %v, want in (0, %v]", res.RequeueAfter, DefaultRetry)
	}
	if n := deferredCount(t, r.Metrics, DeferredPending); n != 1 {
		t.Errorf("deferred{reason=%q} = %v, want 1", DeferredPending, n)
	}

	close(reg.answer) // the lookup the first call left goes on and ends
	res, got = reconcilePod(t, r, c, pod)
	if engine.HasGate(got.Spec.SchedulingGates) || res.RequeueAfter != 0 {
		t.Fatalf("not released once its image was known (result %+v)", res)
	}
	if diff := cmp.Diff([]string{"amd64"}, requiredArches(got)); diff != "" {
		t.Errorf("required arches (-want +got):\n%s", diff)
	}
}

// TestRetryNeverPassesTheBound: a pod close to its bound is asked back at
// the bound, not after Retry, so that it is released in time.
func TestRetryNeverPassesTheBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		left time.Duration
		want time.Duration
	}{
		{name: "far from the bound", left: time.Minute, want: DefaultRetry},
		{name: "close to the bound", left: 40 * time.Millisecond, want: 40 * time.Millisecond},
		{name: "at the bound", left: 0, want: time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{}
			if got := r.retry(tc.left).RequeueAfter; got != tc.want {
				t.Errorf("RequeueAfter %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNamespaceShare: while one namespace has PerNamespace calls waiting
// for its images, another call of that namespace returns at once and asks
// to be called again, a pod of another namespace is released, and a pod
// of the busy namespace past its bound is released too (from the cache,
// without waiting).
func TestNamespaceShare(t *testing.T) {
	now := time.Now()
	created := now.Add(-time.Second)
	holders := []*corev1.Pod{
		inNamespace(gatedPod("hold-0", "slow:0", created, isa.ResolveGate), "noisy"),
		inNamespace(gatedPod("hold-1", "slow:1", created, isa.ResolveGate), "noisy"),
	}
	waiting := inNamespace(gatedPod("waiting", "late:1", created, isa.ResolveGate), "noisy")
	expired := inNamespace(gatedPod("expired", "slow:2", now.Add(-time.Hour), isa.ResolveGate), "noisy")
	other := inNamespace(gatedPod("other", "app:1", created, isa.ResolveGate), "healthy")
	reg := newLateRegistry()
	r, c := testReconciler(t, reg, now, append(holders, waiting, expired, other)...)
	r.PerNamespace = len(holders)
	r.Attempt = time.Hour // the holders wait until the test ends them

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for _, p := range holders {
		wg.Go(func() {
			_, _ = r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
		})
	}
	defer func() { cancel(); wg.Wait() }()
	for range holders {
		<-reg.entered
	}

	res, got := reconcilePod(t, r, c, waiting)
	if !engine.HasGate(got.Spec.SchedulingGates) || res.RequeueAfter <= 0 {
		t.Errorf("a pod of the busy namespace: gated %t, RequeueAfter %v; want gated and asked back", engine.HasGate(got.Spec.SchedulingGates), res.RequeueAfter)
	}
	if n := deferredCount(t, r.Metrics, DeferredNamespaceBusy); n != 1 {
		t.Errorf("deferred{reason=%q} = %v, want 1", DeferredNamespaceBusy, n)
	}
	select {
	case ref := <-reg.entered:
		t.Errorf("the busy namespace's pod looked up %s", ref)
	default:
	}

	if _, got := reconcilePod(t, r, c, other); engine.HasGate(got.Spec.SchedulingGates) {
		t.Errorf("a pod of another namespace was not released")
	} else if diff := cmp.Diff([]string{"amd64"}, requiredArches(got)); diff != "" {
		t.Errorf("the other namespace's pod: required arches (-want +got):\n%s", diff)
	}

	if _, got := reconcilePod(t, r, c, expired); engine.HasGate(got.Spec.SchedulingGates) {
		t.Errorf("a pod past its bound was held for its busy namespace")
	}
}

// requiredArches lists the kubernetes.io/arch values of pod's required
// node affinity, term by term.
func requiredArches(pod *corev1.Pod) []string {
	var out []string
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil || pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return out
	}
	for _, t := range pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == isa.KubeArchLabel && e.Operator == corev1.NodeSelectorOpIn {
				out = append(out, e.Values...)
			}
		}
	}
	return out
}
