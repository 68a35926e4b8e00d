package labeler

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

// fixtureProbe probes ../probe/testdata/<machine> with the direct runner.
func fixtureProbe(machine *string, calls *int) ProbeFunc {
	return func(ctx context.Context) (probe.Result, error) {
		*calls++
		root := filepath.Join("..", "probe", "testdata", *machine)
		return probe.Probe(ctx, probe.Options{HostRoot: root, Runner: &probe.ExecRunner{Root: root}})
	}
}

func TestController(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"team": "a"}}}
	c := &countingClient{Client: fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(node).Build()}
	machine, calls := "visionfive2", 0
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctl := &Controller{Client: c, NodeName: "n1", Probe: fixtureProbe(&machine, &calls), Interval: 10 * time.Minute,
		Now: func() time.Time { return now }}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "n1"}}

	type step struct {
		name        string
		before      func(t *testing.T)
		advance     time.Duration
		wantProbes  int
		wantPatches int
		wantRequeue time.Duration
		wantLabels  map[string]string // subset
	}
	get := func(t *testing.T) *corev1.Node {
		t.Helper()
		n := &corev1.Node{}
		if err := c.Get(t.Context(), client.ObjectKey{Name: "n1"}, n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	steps := []step{
		{name: "first pass probes and labels", wantProbes: 1, wantPatches: 1, wantRequeue: 10 * time.Minute,
			wantLabels: map[string]string{"team": "a", isa.ArchLabel: "riscv64", isa.NativePrefix + "rv.zba": "true"}},
		{name: "second pass within interval: no probe, no write", advance: time.Minute, wantProbes: 1, wantPatches: 1, wantRequeue: 9 * time.Minute,
			wantLabels: map[string]string{isa.NativePrefix + "rv.zba": "true"}},
		{name: "someone removes our label: put back from cache", advance: time.Minute, wantProbes: 1, wantPatches: 2, wantRequeue: 8 * time.Minute,
			before: func(t *testing.T) {
				n := get(t)
				delete(n.Labels, isa.NativePrefix+"rv.zba")
				if err := c.Client.Update(t.Context(), n); err != nil {
					t.Fatal(err)
				}
			},
			wantLabels: map[string]string{isa.NativePrefix + "rv.zba": "true"}},
		{name: "interval passed and host changed: re-probe, relabel", advance: 9 * time.Minute, wantProbes: 2, wantPatches: 3, wantRequeue: 10 * time.Minute,
			before:     func(*testing.T) { machine = "spacemit-k1" },
			wantLabels: map[string]string{"team": "a", isa.NativePrefix + "rv.v": "true", isa.NativePrefix + "rv.zba": "true"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.before != nil {
				s.before(t)
			}
			now = now.Add(s.advance)
			got, err := ctl.Reconcile(t.Context(), req)
			if err != nil {
				t.Fatalf("Reconcile(): %v", err)
			}
			if diff := cmp.Diff([]any{s.wantProbes, s.wantPatches, s.wantRequeue}, []any{calls, len(c.patches), got.RequeueAfter}); diff != "" {
				t.Errorf("[probes, patches, requeueAfter] (-want +got):\n%s", diff)
			}
			n := get(t)
			if diff := cmp.Diff(s.wantLabels, project(n.Labels, s.wantLabels)); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestControllerIgnoresOtherNodesAndWaitsForMissingNode(t *testing.T) {
	c := &countingClient{Client: fake.NewClientBuilder().WithScheme(newScheme(t)).Build()}
	machine, calls := "visionfive2", 0
	ctl := &Controller{Client: c, NodeName: "n1", Probe: fixtureProbe(&machine, &calls), Interval: time.Minute}
	got, err := ctl.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "other"}})
	if err != nil || got != (reconcile.Result{}) || calls != 0 {
		t.Fatalf("other node: result %v, err %v, probes %d; want nothing done", got, err, calls)
	}
	got, err = ctl.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "n1"}})
	if err != nil || got.RequeueAfter <= 0 || len(c.patches) != 0 {
		t.Fatalf("missing node: result %v, err %v, patches %v; want a requeue, no error, no patch", got, err, c.patches)
	}
}

func project(m, want map[string]string) map[string]string {
	got := map[string]string{}
	for k := range want {
		if v, ok := m[k]; ok {
			got[k] = v
		} else {
			got[k] = "<absent>"
		}
	}
	return got
}

func TestControllerAfterPass(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	c := &countingClient{Client: fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(node).Build()}
	machine, calls, after := "visionfive2", 0, 0
	ctl := &Controller{Client: c, NodeName: "n1", Probe: fixtureProbe(&machine, &calls), Interval: time.Minute,
		AfterPass: func() {
			// Called once the pass is over: the probe has run.
			if calls == 0 {
				t.Error("AfterPass called before the probe")
			}
			after++
		}}
	for _, name := range []string{"n1", "n1", "other"} {
		if _, err := ctl.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	// Probe failures end a pass too.
	failing := &Controller{Client: c, NodeName: "n1", Interval: time.Minute, AfterPass: func() { after++ },
		Probe: func(context.Context) (probe.Result, error) { return probe.Result{}, errors.New("no cpuinfo") }}
	if _, err := failing.Reconcile(t.Context(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "n1"}}); err == nil {
		t.Fatal("failing probe: no error")
	}
	if after != 3 {
		t.Errorf("AfterPass called %d times, want 3 (two passes of our node and a failed one, none for another node)", after)
	}
}
