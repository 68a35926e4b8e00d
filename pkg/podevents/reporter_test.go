package podevents

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
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
	counts   *mutate.DecisionCounts
	raw      string // the counts annotation as is, when counts is nil
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
	if o.counts != nil {
		b, err := json.Marshal(o.counts)
		if err != nil {
			t.Fatal(err)
		}
		pod.Annotations[isa.DecisionCountsAnnotation] = string(b)
	} else if o.raw != "" {
		pod.Annotations[isa.DecisionCountsAnnotation] = o.raw
	}
	if o.line != "" {
		pod.Annotations[isa.DecisionAnnotation] = o.line
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

const noNodeText = "no node satisfies isamatch's required node affinity now; the pod stays Pending until such a node joins, or until it is created again with another request or images; what is required is in its annotation " + isa.DecisionAnnotation

func TestObserve(t *testing.T) {
	twoTiers := []mutate.TierCounts{{Weight: 100, Groups: 1, Nodes: 2}, {Weight: 40, Groups: 2, Nodes: 1}}
	unresolved := []mutate.UnresolvedImage{{Image: "reg/private:v1", Kind: "unauthorized"}, {Image: "reg/gone:v1", Kind: "notFound"}}
	tests := []struct {
		name     string
		pod      podOpts
		want     []event
		recorded bool
	}{
		{
			name:     "decided: numbers first, then the line",
			pod:      podOpts{counts: &mutate.DecisionCounts{RequiredNodes: 3, Tiers: twoTiers}, line: line},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: 3 nodes now; tiers: w100 2 nodes (1 group), w40 1 node (2 groups); decision: " + line}},
			recorded: true,
		},
		{
			name:     "nothing required, no tiers",
			pod:      podOpts{counts: &mutate.DecisionCounts{}},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: none; tiers: none"}},
			recorded: true,
		},
		{
			name: "one Warning per unresolved image, on its container",
			pod: podOpts{counts: &mutate.DecisionCounts{RequiredNodes: 1, Tiers: twoTiers[:1], Unresolved: unresolved},
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
			pod:      podOpts{counts: &mutate.DecisionCounts{NoNode: true}},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: no node now; tiers: none"}, {"Warning", ReasonNoNode, "", noNodeText}},
			recorded: true,
		},
		{
			name:     "no node at admission, bound since",
			pod:      podOpts{counts: &mutate.DecisionCounts{NoNode: true}, nodeName: "n1"},
			want:     []event{{"Normal", ReasonDecided, "", "required affinity: no node now; tiers: none"}},
			recorded: true,
		},
		{
			name:     "would deny: a Warning with the line",
			pod:      podOpts{counts: &mutate.DecisionCounts{WouldDeny: true}, line: "would deny (enforcement=warn), no affinity written: bad request"},
			want:     []event{{"Warning", ReasonDecided, "", "would deny (enforcement=warn), no affinity written: bad request"}},
			recorded: true,
		},
		{
			name: "gated, pending: not yet",
			pod:  podOpts{counts: &mutate.DecisionCounts{Gate: mutate.GatePending}},
		},
		{
			name: "gated, released: the gate controller's event is the decision; the unresolved image and no node are added",
			pod:  podOpts{counts: &mutate.DecisionCounts{Gate: mutate.GateTimeout, NoNode: true, Unresolved: unresolved[:1]}, images: []string{"reg/private:v1"}},
			want: []event{
				{"Warning", ReasonImageUnresolved, "spec.containers{c0}", `image "reg/private:v1": platforms unknown (unauthorized), the pod was placed without its constraint; check the reference, that its registry is reachable and the pod's pull secrets`},
				{"Warning", ReasonNoNode, "", noNodeText},
			},
			recorded: true,
		},
		{
			name:     "gated, released as denied: the gate controller said it all",
			pod:      podOpts{counts: &mutate.DecisionCounts{Gate: mutate.ReleaseDenied, NoNode: true}},
			recorded: true,
		},
		{
			name: "unresolved image no container runs (reference cut): on the pod",
			pod:  podOpts{counts: &mutate.DecisionCounts{Gate: mutate.GateResolved, Unresolved: []mutate.UnresolvedImage{{Image: "reg/x…", Kind: "other"}}}},
			want: []event{
				{"Warning", ReasonImageUnresolved, "", `image "reg/x…": platforms unknown (other), the pod was placed without its constraint; check the reference, that its registry is reachable and the pod's pull secrets`},
			},
			recorded: true,
		},
		{name: "not decided", pod: podOpts{line: line}},
		{name: "counts unparsable", pod: podOpts{raw: "{nope"}},
		{name: "counts too long", pod: podOpts{raw: `{"requiredNodes":1}` + strings.Repeat(" ", maxCounts)}},
		{name: "being deleted", pod: podOpts{counts: &mutate.DecisionCounts{}, deleting: true}},
		{name: "no UID", pod: podOpts{counts: &mutate.DecisionCounts{}, uid: "-"}},
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
	pod := makePod(t, podOpts{counts: &mutate.DecisionCounts{Unresolved: []mutate.UnresolvedImage{{Image: hostile, Kind: hostile}}}, line: hostile})
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
	pending := makePod(t, podOpts{counts: &mutate.DecisionCounts{Gate: mutate.GatePending}, uid: "gated"})
	released := makePod(t, podOpts{counts: &mutate.DecisionCounts{Gate: mutate.GateResolved, NoNode: true}, uid: "gated"})
	plain := makePod(t, podOpts{counts: &mutate.DecisionCounts{}, uid: "plain"})
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
