package labeler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

type event struct {
	node, eventType, reason, note string
}

type fakeRecorder struct{ events []event }

func (r *fakeRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	r.events = append(r.events, event{regarding.(client.Object).GetName(), eventtype, reason, fmt.Sprintf(note, args...)})
}

var _ EventRecorder = (*fakeRecorder)(nil)

func TestControllerEventsAndMetrics(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"team": "a"}}}
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(node).Build()
	machine, calls := "visionfive2", 0
	ok := fixtureProbe(&machine, &calls)
	var fail error
	probeFn := func(ctx context.Context) (probe.Result, error) {
		if fail != nil {
			return probe.Result{}, fail
		}
		return ok(ctx)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec, m := &fakeRecorder{}, NewMetrics()
	ctl := &Controller{Client: c, NodeName: "n1", Probe: probeFn, Interval: time.Minute,
		Now: func() time.Time { return now }, Recorder: rec, Metrics: m}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "n1"}}

	steps := []struct {
		name string
		// before runs first; the clock then moves a probe interval on.
		before      func()
		wantErr     bool
		wantEvent   *event // the one new Event; nil means none
		wantNote    []string
		wantMetrics map[string]float64
	}{
		{
			name:      "first labels: LabelsChanged saying what and why",
			wantEvent: &event{node: "n1", eventType: corev1.EventTypeNormal, reason: ReasonLabelsChanged},
			wantNote: []string{"added " + isa.ArchLabel + "=riscv64, ", isa.NativePrefix + "rv.zba=true",
				"annotations updated", "source: decided by cpuinfo (isa of 4 harts)", "emulation: none"},
			wantMetrics: map[string]float64{"probes": 1, "errors": 0, "cpuinfo": 0},
		},
		{
			name:        "same host: no write, no Event",
			wantMetrics: map[string]float64{"probes": 2, "errors": 0, "cpuinfo": 0},
		},
		{
			name: "probe fails: ProbeFailed warning, failure counted by source",
			before: func() {
				fail = &probe.SourceError{Source: probe.SourceCPUInfo, Err: errors.New("read /proc/cpuinfo: EIO")}
			},
			wantErr:     true,
			wantEvent:   &event{node: "n1", eventType: corev1.EventTypeWarning, reason: ReasonProbeFailed},
			wantNote:    []string{"probe failed, labels left as they were: read /proc/cpuinfo: EIO"},
			wantMetrics: map[string]float64{"probes": 3, "errors": 1, "cpuinfo": 1},
		},
		{
			name:      "host changes: added and removed keys",
			before:    func() { fail, machine = nil, "lichee-pi-4a" },
			wantEvent: &event{node: "n1", eventType: corev1.EventTypeNormal, reason: ReasonLabelsChanged},
			wantNote: []string{"added ", isa.NativePrefix + "rv.xtheadvector=true", "removed ", isa.NativePrefix + "rv.zba",
				"source: decided by cpuinfo"},
			wantMetrics: map[string]float64{"probes": 4, "errors": 1, "cpuinfo": 1},
		},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.before != nil {
				s.before()
			}
			now = now.Add(time.Minute)
			seen := len(rec.events)
			_, err := ctl.Reconcile(t.Context(), req)
			if (err != nil) != s.wantErr {
				t.Fatalf("Reconcile() error = %v, want error: %v", err, s.wantErr)
			}
			var got *event
			switch n := len(rec.events) - seen; n {
			case 0:
			case 1:
				e := rec.events[seen]
				got = &event{node: e.node, eventType: e.eventType, reason: e.reason}
				for _, w := range s.wantNote {
					if !strings.Contains(e.note, w) {
						t.Errorf("note %q does not contain %q", e.note, w)
					}
				}
			default:
				t.Fatalf("%d Events recorded, want at most one: %v", n, rec.events[seen:])
			}
			if diff := cmp.Diff(s.wantEvent, got, cmp.AllowUnexported(event{})); diff != "" {
				t.Errorf("Event (-want +got):\n%s", diff)
			}
			gotMetrics := map[string]float64{
				"probes":  histogramCount(t, m),
				"errors":  counterValue(t, m.ProbeErrors),
				"cpuinfo": counterValue(t, m.ProbeFailures.WithLabelValues(probe.SourceCPUInfo)),
			}
			if diff := cmp.Diff(s.wantMetrics, gotMetrics); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
	if set := counterValue(t, m.LabelsWritten.WithLabelValues("set")); set < 3 {
		t.Errorf("labels written (set) = %v, want at least the 3 of the first pass", set)
	}
	if deleted := counterValue(t, m.LabelsWritten.WithLabelValues("deleted")); deleted < 1 {
		t.Errorf("labels written (deleted) = %v, want the ones lichee-pi-4a lacks", deleted)
	}
}

func histogramCount(t *testing.T, m *Metrics) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.ProbeDuration.Write(&out); err != nil {
		t.Fatal(err)
	}
	return float64(out.GetHistogram().GetSampleCount())
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var out dto.Metric
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

func TestChangeNote(t *testing.T) {
	many := make([]string, 60)
	labels := map[string]string{}
	for i := range many {
		many[i] = fmt.Sprintf("%srv.z%02d", isa.NativePrefix, i)
		labels[many[i]] = "true"
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	tests := []struct {
		name       string
		out        Result
		native     string
		emu        string
		wantPrefix string
		wantSuffix string
	}{
		{
			name:       "few keys: all named, then why",
			out:        Result{Set: 2, Deleted: 1, Added: many[:1], Removed: many[1:2], Node: node},
			native:     "decided by cpuinfo: rv64gc",
			emu:        "none",
			wantPrefix: "added " + many[0] + "=true; removed " + many[1] + "; 1 annotations updated; ",
			wantSuffix: "; source: decided by cpuinfo: rv64gc; emulation: none",
		},
		{
			name:       "many keys: list cut, why kept",
			out:        Result{Set: 60, Added: many, Node: node},
			native:     "decided by cpuinfo: rv64gcv",
			wantPrefix: "added " + many[0] + "=true, ",
			wantSuffix: " ...; source: decided by cpuinfo: rv64gcv",
		},
		{
			name:       "huge source: both cut",
			out:        Result{Set: 60, Added: many, Node: node},
			native:     strings.Repeat("x", 3000),
			wantPrefix: "added " + many[0] + "=true, ",
			wantSuffix: "x ...",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := changeNote(tc.out, tc.native, tc.emu)
			if len(got) > maxNote || !strings.HasPrefix(got, tc.wantPrefix) || !strings.HasSuffix(got, tc.wantSuffix) {
				t.Errorf("changeNote() = %q (%d bytes), want at most %d bytes, prefix %q, suffix %q", got, len(got), maxNote, tc.wantPrefix, tc.wantSuffix)
			}
		})
	}
}
