package podevents

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/isamatch/isamatch/pkg/contract"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestHandler drives the informer handler as the informer would: a pod
// without a decision is ignored, a gated pod reported once released, a pod
// that leaves the informer (a tombstone included) forgotten.
func TestHandler(t *testing.T) {
	rec := &fakeRecorder{}
	h := Handler(NewReporter(rec, 0), logr.Discard())
	bare := makePod(t, podOpts{uid: "bare"})
	pending := makePod(t, podOpts{counts: &contract.DecisionCounts{Gate: contract.GatePending}, uid: "gated"})
	released := makePod(t, podOpts{counts: &contract.DecisionCounts{Gate: contract.GateResolved, NoNode: true}, uid: "gated"})
	plain := makePod(t, podOpts{counts: &contract.DecisionCounts{RequiredNodes: 1}, uid: "plain"})

	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"not decided", func() { h.OnAdd(bare, true) }, nil},
		{"gated, pending", func() { h.OnAdd(pending, true) }, nil},
		{"gated, released", func() { h.OnUpdate(pending, released) }, []string{ReasonNoNode}},
		{"released, updated again", func() { h.OnUpdate(released, released) }, nil},
		{"plain", func() { h.OnAdd(plain, false) }, []string{ReasonDecided}},
		{"plain, resync", func() { h.OnUpdate(plain, plain) }, nil},
		{"plain, gone as a tombstone, back", func() {
			h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/p", Obj: plain})
			h.OnAdd(plain, false)
		}, []string{ReasonDecided}},
		{"plain, decision removed, back", func() {
			h.OnUpdate(plain, bare)
			h.OnUpdate(bare, plain)
		}, []string{ReasonDecided}},
	}
	for _, s := range steps {
		s.do()
		var got []string
		for _, e := range rec.take() {
			got = append(got, e.Reason)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", s.name, diff)
		}
	}
}

var _ toolscache.ResourceEventHandler = Handler(nil, logr.Discard())
