package watch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/misplace"
)

type event struct {
	Type, Reason, FieldPath, Note string
}

type fakeRecorder struct {
	mu     sync.Mutex
	events []event
}

func (f *fakeRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref := regarding.(*corev1.ObjectReference)
	f.events = append(f.events, event{eventtype, reason, ref.FieldPath, fmt.Sprintf(note, args...)})
}

func (f *fakeRecorder) take() []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.events
	f.events = nil
	return out
}

func terminated(code, signal int32, reason, msg string) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{ExitCode: code, Signal: signal, Reason: reason, Message: msg}
}

// x86Node is a node as the labeler leaves it.
func x86Node(t *testing.T) *corev1.Node {
	t.Helper()
	native, err := isa.Parse("x86-64-v3")
	if err != nil {
		t.Fatal(err)
	}
	labels := isa.NodeLabels(native, nil)
	labels[isa.KubeArchLabel] = "amd64"
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}}
}

// failedPod is a pod on n1 whose container app died of SIGILL; owner
// names its controller ("" none).
func failedPod(uid, ownerKind string, decided bool) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + uid, Namespace: "ns", UID: types.UID(uid),
		Annotations: map[string]string{isa.RequestAnnotation: "x86-64-v2"}}}
	if ownerKind != "" {
		yes := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: "owner", UID: "owner-uid", Controller: &yes}}
	}
	if decided {
		pod.Annotations[isa.DecisionCountsAnnotation] = `{"requiredNodes":1}`
	}
	pod.Spec.NodeName = "n1"
	pod.Spec.Containers = []corev1.Container{{Name: "app", Image: "reg/app:v1"}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", LastTerminationState: corev1.ContainerState{Terminated: terminated(132, 0, "Error", "")}}}
	return pod
}

func TestObserveRecordsOncePerContainer(t *testing.T) {
	rec := &fakeRecorder{}
	m := NewMetrics()
	w := NewWatcher(WatcherOptions{Recorder: rec, Nodes: fake.NewClientBuilder().WithObjects(x86Node(t)).Build(), Metrics: m})
	pod := failedPod("u1", "ReplicaSet", true)
	if n := w.Observe(t.Context(), pod); n != 1 {
		t.Fatalf("Observe recorded %d, want 1", n)
	}
	got := rec.take()
	if len(got) != 1 || got[0].Type != corev1.EventTypeWarning || got[0].Reason != ReasonMisplaced || got[0].FieldPath != "spec.containers{app}" {
		t.Fatalf("events = %+v, want one Warning %s on spec.containers{app}", got, ReasonMisplaced)
	}
	for _, want := range []string{"SIGILL", "node ISA: x86-64-v3", `request x86-64-v2 (annotation ` + isa.RequestAnnotation + `)`, "fix: "} {
		if !strings.Contains(got[0].Note, want) {
			t.Errorf("note %q lacks %q", got[0].Note, want)
		}
	}
	// Restarts and updates of the same pod: nothing more.
	pod.Status.ContainerStatuses[0].RestartCount = 3
	if n := w.Observe(t.Context(), pod); n != 0 || len(rec.take()) != 0 {
		t.Errorf("second Observe recorded %d", n)
	}
	if got := testutil.ToFloat64(m.Misplacements.WithLabelValues(misplace.ReasonSIGILL)); got != 1 {
		t.Errorf("misplacements{sigill} = %v, want 1", got)
	}
	// Forgotten (deleted), a pod of the same UID is reported again.
	w.Forget(pod)
	if n := w.Observe(t.Context(), pod); n != 1 {
		t.Errorf("Observe after Forget recorded %d, want 1", n)
	}
}

func TestObserveNodeWithoutLabels(t *testing.T) {
	rec := &fakeRecorder{}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{isa.KubeArchLabel: "amd64"}}}
	w := NewWatcher(WatcherOptions{Recorder: rec, Nodes: fake.NewClientBuilder().WithObjects(node).Build()})
	w.Observe(t.Context(), failedPod("u1", "", false))
	got := rec.take()
	if len(got) != 1 || !strings.Contains(got[0].Note, "node ISA: arch amd64 (no isamatch labels)") || !strings.Contains(got[0].Note, "not decided by isamatch") {
		t.Errorf("events = %+v", got)
	}
}

func TestEvictRemedy(t *testing.T) {
	tests := []struct {
		name    string
		pods    []*corev1.Pod
		advance time.Duration // between the pods
		err     error
		evicted []string
		result  string
	}{
		{name: "undecided pod of a ReplicaSet", pods: []*corev1.Pod{failedPod("u1", "ReplicaSet", false)}, evicted: []string{"p-u1"}, result: "evicted"},
		{name: "decided pod: its replacement would be decided alike", pods: []*corev1.Pod{failedPod("u1", "ReplicaSet", true)}},
		{name: "a DaemonSet's pod comes back on the same node", pods: []*corev1.Pod{failedPod("u1", "DaemonSet", false)}},
		{name: "no controller replaces a bare pod", pods: []*corev1.Pod{failedPod("u1", "", false)}},
		{name: "one pod of a controller per backoff", pods: []*corev1.Pod{failedPod("u1", "ReplicaSet", false), failedPod("u2", "ReplicaSet", false)},
			advance: time.Minute, evicted: []string{"p-u1"}, result: "evicted"},
		{name: "another after the backoff", pods: []*corev1.Pod{failedPod("u1", "ReplicaSet", false), failedPod("u2", "ReplicaSet", false)},
			advance: EvictBackoff, evicted: []string{"p-u1", "p-u2"}, result: "evicted"},
		{name: "a disruption budget refuses", pods: []*corev1.Pod{failedPod("u1", "ReplicaSet", false)},
			err: apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10), evicted: []string{"p-u1"}, result: "refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1e9, 0)
			var evicted []string
			ev := EvictorFunc(func(_ context.Context, pod *corev1.Pod) error {
				evicted = append(evicted, pod.Name)
				return tc.err
			})
			rec := &fakeRecorder{}
			m := NewMetrics()
			w := NewWatcher(WatcherOptions{Recorder: rec, Evictor: ev, Metrics: m, EvictGrace: -1, Now: func() time.Time { return now }})
			for _, p := range tc.pods {
				w.Observe(t.Context(), p)
				now = now.Add(tc.advance)
			}
			if diff := cmp.Diff(tc.evicted, evicted); diff != "" {
				t.Errorf("evicted (-want +got):\n%s", diff)
			}
			if tc.result != "" {
				if got := testutil.ToFloat64(m.Evictions.WithLabelValues(tc.result)); got != float64(len(tc.evicted)) {
					t.Errorf("evictions{%s} = %v, want %d", tc.result, got, len(tc.evicted))
				}
			}
			normal := 0
			for _, e := range rec.take() {
				if e.Reason == ReasonEvicted {
					normal++
				}
			}
			if want := map[string]int{"evicted": len(tc.evicted)}[tc.result]; normal != want {
				t.Errorf("%d %s events, want %d", normal, ReasonEvicted, want)
			}
		})
	}
}

// TestEvictWaitsForTheGrace: a pod seen failing right after the webhook
// started is evicted once the grace ends, once, however often it is seen.
func TestEvictWaitsForTheGrace(t *testing.T) {
	var mu sync.Mutex
	var evicted []string
	ev := EvictorFunc(func(_ context.Context, pod *corev1.Pod) error {
		mu.Lock()
		defer mu.Unlock()
		evicted = append(evicted, pod.Name)
		return nil
	})
	const grace = 200 * time.Millisecond
	w := NewWatcher(WatcherOptions{Recorder: &fakeRecorder{}, Evictor: ev, EvictGrace: grace})
	start := time.Now()
	pod := failedPod("u1", "ReplicaSet", false)
	for range 3 {
		w.Observe(t.Context(), pod)
	}
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(evicted)
	}
	if len(got()) != 0 {
		t.Fatalf("evicted within the grace: %v", got())
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if diff := cmp.Diff([]string{"p-u1"}, got()); diff != "" {
		t.Errorf("evicted (-want +got):\n%s", diff)
	}
	if since := time.Since(start); since < grace {
		t.Errorf("evicted after %v, before the grace of %v ended", since, grace)
	}
}
