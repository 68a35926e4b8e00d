package podevents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// event is what the specs check of a recorded Event.
type event struct {
	Type, Reason, FieldPath, Note string
}

// fakeRecorder keeps the Events recorded, with the regarding reference's
// field path (client-go's events.FakeRecorder drops it).
type fakeRecorder struct {
	mu     sync.Mutex
	events []event
}

func (f *fakeRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref := regarding.(*corev1.ObjectReference)
	if ref.Kind != "Pod" || ref.UID == "" || action != "Decide" {
		panic(fmt.Sprintf("event on %+v with action %q", ref, action))
	}
	f.events = append(f.events, event{eventtype, reason, ref.FieldPath, fmt.Sprintf(note, args...)})
}

func (f *fakeRecorder) take() []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.events
	f.events = nil
	return out
}

// podOpts builds a decided pod.
type podOpts struct {
	counts *contract.DecisionCounts
	raw    string // the decision annotation as is, when counts is nil
	// legacy writes counts and line in the earlier format: the numbers in
	// the decision-counts annotation, line in the decision annotation.
	legacy   bool
	line     string
	nodeName string
	uid      types.UID
	deleting bool
	images   []string // containers c0, c1, ... running these images
	init     []string // init containers i0, ... running these
}

func makePod(t *testing.T, o podOpts) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: o.uid, Annotations: map[string]string{}}}
	if o.uid == "" {
		pod.UID = "uid-1"
	}
	if o.uid == "-" {
		pod.UID = ""
	}
	switch {
	case o.counts != nil && o.legacy:
		b, err := json.Marshal(o.counts)
		if err != nil {
			t.Fatal(err)
		}
		pod.Annotations[isa.DecisionCountsAnnotation] = string(b)
		pod.Annotations[isa.DecisionAnnotation] = o.line
	case o.counts != nil:
		pod.Annotations[isa.DecisionAnnotation] = o.counts.Encode()
	case o.raw != "":
		pod.Annotations[isa.DecisionAnnotation] = o.raw
	}
	if o.deleting {
		now := metav1.Now()
		pod.DeletionTimestamp = &now
	}
	pod.Spec.NodeName = o.nodeName
	for k, img := range o.images {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", k), Image: img})
	}
	for k, img := range o.init {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: fmt.Sprintf("i%d", k), Image: img})
	}
	return pod
}

const line = `request="rv64gcv" (annotation isa.request); images: reg/app:v1 [linux/riscv64]; required: rv64gcv (2 nodes now); tiers: w100 affinity 1.00: 1 group, 2 nodes (exact fit)`

const noNodeText = "no node satisfies isamatch's required node affinity now; the pod stays Pending until such a node joins, or until it is created again with another request or images; what is required is in its node affinity (kubectl isa explain tells it)"

func TestObserve(t *testing.T) {
	twoTiers := []contract.TierCounts{{Weight: 100, Groups: 1, Nodes: 2}, {Weight: 40, Groups: 2, Nodes: 1}}
	unresolved := []contract.UnresolvedImage{{Image: "reg/private:v1", Kind: "unauthorized"}, {Image: "reg/gone:v1", Kind: "notFound"}}
	tests := []struct {
		name     string
		pod      podOpts
		want     []event
		recorded bool
	}{
		{
			name:     "decided, no explainer: the numbers",
			pod:      podOpts{counts: &contract.DecisionCounts{RequiredNodes: 3, Tiers: twoTiers}},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: 3 nodes now; tiers: w100 2 nodes (1 group), w40 1 node (2 groups)"}},
			recorded: true,
		},
		{
			name:     "decided in the earlier format: the same numbers",
			pod:      podOpts{counts: &contract.DecisionCounts{RequiredNodes: 3, Tiers: twoTiers}, legacy: true, line: line},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: 3 nodes now; tiers: w100 2 nodes (1 group), w40 1 node (2 groups)"}},
			recorded: true,
		},
		{
			name:     "nothing required, no tiers",
			pod:      podOpts{counts: &contract.DecisionCounts{}},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: none; tiers: none"}},
			recorded: true,
		},
		{
			name: "one Warning per unresolved image, on its container",
			pod: podOpts{counts: &contract.DecisionCounts{RequiredNodes: 1, Tiers: twoTiers[:1], Unresolved: unresolved},
				images: []string{"reg/app:v1", "reg/gone:v1"}, init: []string{"reg/private:v1"}},
			want: []event{
				{"Normal", ReasonDecided, "", "required affinity: 1 node now; tiers: w100 2 nodes (1 group); 2 images unresolved"},
				{"Warning", ReasonImageUnresolved, "spec.initContainers{i0}", `image "reg/private:v1": platforms unknown (unauthorized), the pod was placed without its constraint; check the reference, that its registry is reachable and the pod's pull secrets`},
				{"Warning", ReasonImageUnresolved, "spec.containers{c1}", `image "reg/gone:v1": platforms unknown (notFound), the pod was placed without its constraint; check the reference, that its registry is reachable and the pod's pull secrets`},
			},
			recorded: true,
		},
		{
			name:     "no node for an unscheduled pod",
			pod:      podOpts{counts: &contract.DecisionCounts{NoNode: true}},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: no node now; tiers: none"}, {"Warning", ReasonNoNode, "", noNodeText}},
			recorded: true,
		},
		{
			name:     "no node at admission, bound since",
			pod:      podOpts{counts: &contract.DecisionCounts{NoNode: true}, nodeName: "n1"},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: no node now; tiers: none"}},
			recorded: true,
		},
		{
			name:     "would deny: a Warning with the reason",
			pod:      podOpts{counts: &contract.DecisionCounts{WouldDeny: true, Reason: "bad request"}},
			want:     []event{{"Warning", ReasonDecided, "", "would deny (enforcement=warn), no affinity written: bad request"}},
			recorded: true,
		},
		{
			name:     "would deny in the earlier format: the same",
			pod:      podOpts{counts: &contract.DecisionCounts{WouldDeny: true}, legacy: true, line: "would deny (enforcement=warn), no affinity written: bad request"},
			want:     []event{{"Warning", ReasonDecided, "", "would deny (enforcement=warn), no affinity written: bad request"}},
			recorded: true,
		},
		{
			name: "gated, pending: not yet",
			pod:  podOpts{counts: &contract.DecisionCounts{Gate: contract.GatePending}},
		},
		{
			name: "gated, released: the gate controller's event is the decision; the unresolved image and no node are added",
			pod:  podOpts{counts: &contract.DecisionCounts{Gate: contract.GateTimeout, NoNode: true, Unresolved: unresolved[:1]}, images: []string{"reg/private:v1"}},
			want: []event{
				{"Warning", ReasonImageUnresolved, "spec.containers{c0}", `image "reg/private:v1": platforms unknown (unauthorized), the pod was placed without its constraint; check the reference, that its registry is reachable and the pod's pull secrets`},
				{"Warning", ReasonNoNode, "", noNodeText},
			},
			recorded: true,
		},
		{
			name:     "gated, released as denied: the gate controller said it all",
			pod:      podOpts{counts: &contract.DecisionCounts{Gate: contract.GateDenied, NoNode: true}},
			recorded: true,
		},
		{
			name: "unresolved image no container runs (reference cut): on the pod",
			pod:  podOpts{counts: &contract.DecisionCounts{Gate: contract.GateResolved, Unresolved: []contract.UnresolvedImage{{Image: "reg/x…", Kind: "other"}}}},
			want: []event{
				{"Warning", ReasonImageUnresolved, "", `image "reg/x…": platforms unknown (other), the pod was placed without its constraint; check the reference, that its registry is reachable and the pod's pull secrets`},
			},
			recorded: true,
		},
		{name: "not decided", pod: podOpts{}},
		{name: "decision unparsable", pod: podOpts{raw: "{nope"}},
		{name: "decision too long", pod: podOpts{raw: `{"nodes":1}` + strings.Repeat(" ", 8<<10)}},
		{name: "being deleted", pod: podOpts{counts: &contract.DecisionCounts{}, deleting: true}},
		{name: "no UID", pod: podOpts{counts: &contract.DecisionCounts{}, uid: "-"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &fakeRecorder{}
			r := NewReporter(rec, 0)
			if got := r.Observe(makePod(t, tc.pod)); got != tc.recorded {
				t.Errorf("Observe = %v, want %v", got, tc.recorded)
			}
			if diff := cmp.Diff(tc.want, rec.take()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObserveUntrusted checks that what a pod's author may have written in
// the annotations reaches the notes as one printable line within the
// Event's limit.
func TestObserveUntrusted(t *testing.T) {
	rec := &fakeRecorder{}
	hostile := strings.Repeat("x\n\x1b[31m", 300)
	pod := makePod(t, podOpts{counts: &contract.DecisionCounts{Unresolved: []contract.UnresolvedImage{{Image: hostile, Kind: hostile}}}, line: hostile})
	NewReporter(rec, 0).Observe(pod)
	got := rec.take()
	if len(got) != 2 {
		t.Fatalf("got %d events, want 2: %+v", len(got), got)
	}
	for _, e := range got {
		if len(e.Note) > maxNote || strings.ContainsAny(e.Note, "\n\x1b") {
			t.Errorf("%s note of %d bytes with control characters: %q", e.Reason, len(e.Note), e.Note[:min(len(e.Note), 80)])
		}
	}
}

// TestObserveOnce checks that a pod is reported once whatever the number
// of calls, that a gated pod is reported once released, and that a
// forgotten pod is reported again (a new leader does the same).
func TestObserveOnce(t *testing.T) {
	rec := &fakeRecorder{}
	r := NewReporter(rec, 0)
	pending := makePod(t, podOpts{counts: &contract.DecisionCounts{Gate: contract.GatePending}, uid: "gated"})
	released := makePod(t, podOpts{counts: &contract.DecisionCounts{Gate: contract.GateResolved, NoNode: true}, uid: "gated"})
	plain := makePod(t, podOpts{counts: &contract.DecisionCounts{}, uid: "plain"})
	var got []string
	for _, pod := range []*corev1.Pod{pending, pending, released, released, plain, plain, released} {
		r.Observe(pod)
		for _, e := range rec.take() {
			got = append(got, string(pod.UID)+" "+e.Reason)
		}
	}
	r.Forget(plain)
	r.Observe(plain)
	for _, e := range rec.take() {
		got = append(got, "again "+e.Reason)
	}
	want := []string{"gated " + ReasonNoNode, "plain " + ReasonDecided, "again " + ReasonDecided}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestObserveExplained checks that with an explainer the decided Event
// carries its line after the numbers, cleaned and bounded, and is recorded
// off the caller's goroutine; and that the other Events do not wait for it.
func TestObserveExplained(t *testing.T) {
	rec := &fakeRecorder{}
	r := NewReporter(rec, 0)
	release := make(chan struct{})
	r.Explain(t.Context(), func(ctx context.Context, pod *corev1.Pod) string {
		<-release
		return line + "\n\x1b[31m" + strings.Repeat("x", 2000)
	})
	pod := makePod(t, podOpts{counts: &contract.DecisionCounts{RequiredNodes: 2, Tiers: []contract.TierCounts{{Weight: 100, Groups: 1, Nodes: 2}}, NoNode: false,
		Unresolved: []contract.UnresolvedImage{{Image: "reg/private:v1", Kind: "unauthorized"}}}})
	if !r.Observe(pod) {
		t.Fatal("Observe = false, want true")
	}
	if got := rec.take(); len(got) != 1 || got[0].Reason != ReasonImageUnresolved {
		t.Fatalf("events before the explanation = %+v, want the unresolved image's alone", got)
	}
	close(release)
	deadline := time.Now().Add(30 * time.Second)
	var got []event
	for len(got) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		got = rec.take()
	}
	if len(got) != 1 || got[0].Reason != ReasonDecided {
		t.Fatalf("events = %+v, want the decided one", got)
	}
	want := "required affinity: 2 nodes now; tiers: w100 2 nodes (1 group); 1 image unresolved; decision: " + line
	if n := got[0].Note; !strings.HasPrefix(n, want) || len(n) > maxNote || strings.ContainsAny(n, "\n\x1b") {
		t.Errorf("note = %q (%d bytes), want it to begin with %q, one printable line of at most %d bytes", n, len(n), want, maxNote)
	}
}
