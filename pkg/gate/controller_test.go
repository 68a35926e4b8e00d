package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
)

// amd64Only resolves every image to linux/amd64, or blocks until the
// context ends for images named "slow".
var amd64Only = mutate.ImageResolverFunc(func(ctx context.Context, ref string, _ registry.PullAuth) ([]registry.Platform, error) {
	if strings.HasPrefix(ref, "slow") {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return []registry.Platform{{OS: "linux", Architecture: "amd64"}}, nil
})

func gatedPod(name, image string, created time.Time, gates ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", CreationTimestamp: metav1.NewTime(created)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
	}
	for _, g := range gates {
		pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
	}
	return pod
}

// The release events: what was released and the decision's readable line.
const resolvedEvent = "Normal IsamatchReleased images resolved; request=none; images: app:1 [linux/amd64]; required: arch amd64 (1 node now); tiers: none (scheduler decides)"

func timeoutEvent(image string) string {
	return "Warning IsamatchGateTimeout released past the gate's time bound, images not resolved are left out of the node affinity; request=none; images: " + image +
		` [error timeout]; required: nothing (0 nodes now); tiers: none (scheduler decides); warnings: image "` + image + `": platforms unknown (registry lookup exceeded the admission time budget), placed without its constraint`
}

// TestReconcile: what the controller writes, and the events and metric it
// records, for each kind of pod it can meet.
func TestReconcile(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const timeout = 20 * time.Second
	tests := []struct {
		name       string
		pod        *corev1.Pod
		wantGates  []corev1.PodSchedulingGate
		wantEvents []string
		wantReason string
		wantState  string
	}{
		{name: "gated and in time: resolved and released", pod: gatedPod("p", "app:1", now.Add(-time.Second), isa.ResolveGate),
			wantEvents: []string{resolvedEvent}, wantReason: "resolved", wantState: contract.GateResolved},
		{name: "past the bound: released from the cache alone, with a warning", pod: gatedPod("p", "app:1", now.Add(-time.Minute), isa.ResolveGate),
			wantEvents: []string{timeoutEvent("app:1")},
			wantReason: "timeout", wantState: contract.GateTimeout},
		{name: "a registry that never answers: released at the bound", pod: gatedPod("p", "slow:1", now.Add(-timeout+50*time.Millisecond), isa.ResolveGate),
			wantEvents: []string{timeoutEvent("slow:1")},
			wantReason: "timeout", wantState: contract.GateTimeout},
		{name: "another gate stays", pod: gatedPod("p", "app:1", now, "kueue.x-k8s.io/admission", isa.ResolveGate),
			wantGates:  []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/admission"}},
			wantEvents: []string{resolvedEvent}, wantReason: "resolved", wantState: contract.GateResolved},
		{name: "gate removed by someone else: left alone", pod: gatedPod("p", "app:1", now, "kueue.x-k8s.io/admission"),
			wantGates: []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/admission"}}},
		{name: "deleted: nothing to do"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := clientgoscheme.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tc.pod != nil {
				b = b.WithObjects(tc.pod)
			}
			c := b.Build()
			rec := events.NewFakeRecorder(10)
			metrics := NewMetrics()
			m := mutate.NewPodMutator(amd64Only, inventory.NewStatic(map[string]map[string]string{"n": {isa.KubeArchLabel: "amd64"}}), mutate.Options{Resolve: mutate.ResolveGate})
			r := &Reconciler{Client: c, Releaser: m, Recorder: rec, Metrics: metrics, Timeout: timeout, Now: func() time.Time { return now }}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "apps", Name: "p"}}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			if diff := cmp.Diff(tc.wantEvents, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tc.wantReason != "" {
				var m dto.Metric
				if err := metrics.Releases.WithLabelValues(tc.wantReason).Write(&m); err != nil {
					t.Fatal(err)
				}
				if n := m.GetCounter().GetValue(); n != 1 {
					t.Errorf("releases{reason=%q} = %v, want 1", tc.wantReason, n)
				}
			}
			if tc.pod == nil {
				return
			}
			var pod corev1.Pod
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(tc.pod), &pod); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantGates, pod.Spec.SchedulingGates); diff != "" {
				t.Errorf("gates (-want +got):\n%s", diff)
			}
			state := ""
			if counts, err := contract.ParseDecision(pod.Annotations); err == nil {
				state = counts.Gate
			} else if !errors.Is(err, contract.ErrNoDecision) {
				t.Fatal(err)
			}
			if state != tc.wantState {
				t.Errorf("gate state %q, want %q", state, tc.wantState)
			}
		})
	}
}
