package labeler

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

func TestControllerReportsUnusableEmulation(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(node).Build()
	native, err := isa.Parse("x86-64-v3")
	if err != nil {
		t.Fatal(err)
	}
	noF := "binfmt_misc handler qemu-riscv64 has no F flag: ..."
	problems := []string{noF}
	probeFn := func(context.Context) (probe.Result, error) {
		return probe.Result{Native: native, NativeSource: "decided by cpuinfo", EmuSource: "binfmt qemu-riscv64 enabled without the F flag",
			EmuProblems: problems}, nil
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := &fakeRecorder{}
	ctl := &Controller{Client: c, NodeName: "n1", Probe: probeFn, Interval: time.Minute, Now: func() time.Time { return now }, Recorder: rec}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "n1"}}
	warnings := func() []event {
		var out []event
		for _, e := range rec.events {
			if e.reason == ReasonEmulationUnavailable {
				out = append(out, e)
			}
		}
		return out
	}
	steps := []struct {
		name     string
		problems []string
		want     int // EmulationUnavailable Events so far
	}{
		{name: "first pass: a Warning naming the problem", problems: []string{noF}, want: 1},
		{name: "same problem: no second Event", problems: []string{noF}, want: 1},
		{name: "problem gone: none", problems: nil, want: 1},
		{name: "a problem again: a new Event", problems: []string{"binfmt_misc handler qemu-riscv64 is disabled"}, want: 2},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			problems = s.problems
			now = now.Add(time.Minute)
			if _, err := ctl.Reconcile(t.Context(), req); err != nil {
				t.Fatalf("Reconcile(): %v", err)
			}
			got := warnings()
			if len(got) != s.want {
				t.Fatalf("%d EmulationUnavailable Events, want %d: %v", len(got), s.want, got)
			}
			last := got[len(got)-1]
			if last.eventType != corev1.EventTypeWarning || last.node != "n1" {
				t.Errorf("Event %+v, want a Warning on node n1", last)
			}
		})
	}
	if got := warnings(); !strings.Contains(got[0].note, "has no F flag") || !strings.Contains(got[1].note, "is disabled") {
		t.Errorf("notes %q and %q do not say why", got[0].note, got[1].note)
	}
}
