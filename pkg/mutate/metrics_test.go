package mutate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"
	"github.com/isamatch/isamatch/pkg/registry"
)

// counter reads a counter's value.
func counter(t testing.TB, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestMetricsWarnings(t *testing.T) {
	metrics := NewMetrics()
	m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nil), Options{Metrics: metrics})
	resp := m.Handle(t.Context(), admissionRequest(t, podSpec{images: []string{"private:1", "armv7:1", "rva23:1"}}.pod()))
	if !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result.Message)
	}
	got := map[string]float64{}
	for _, r := range []string{"imageError", "imageUnsupported", "imageLabel", "noNode"} {
		got[r] = counter(t, metrics.Warnings.WithLabelValues(r))
	}
	want := map[string]float64{"imageError": 1, "imageUnsupported": 1, "imageLabel": 0, "noNode": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings by reason (-want +got):\n%s", diff)
	}
	if got := counter(t, metrics.ImageErrors.WithLabelValues("unauthorized")); got != 1 {
		t.Errorf("unauthorized image errors = %v, want 1", got)
	}
	if n := len(metrics.Collectors()); n != 3 {
		t.Errorf("collectors = %d, want 3", n)
	}
}

func TestWarningLength(t *testing.T) {
	ref := "registry.example.com/" + strings.Repeat("very-long-path/", 20) + "app:1"
	res := &fakeResolver{images: map[string]fakeImage{
		ref:       {err: &registry.Error{Kind: "unreachable", Ref: ref, Err: constErr(strings.Repeat("dial tcp: connection refused; ", 20))}},
		"amd64:1": {platforms: plat("linux/amd64")},
	}}
	m := NewPodMutator(res, inventory.NewStatic(testnodes.Paper(t)), Options{})
	resp := m.Handle(t.Context(), admissionRequest(t, podSpec{images: []string{ref, "amd64:1"}}.pod()))
	if !resp.Allowed || len(resp.Warnings) != 1 {
		t.Fatalf("allowed=%v warnings=%q, want allowed with one warning", resp.Allowed, resp.Warnings)
	}
	if w := resp.Warnings[0]; len(w) > 256 || !strings.HasPrefix(w, `isamatch: image "registry.example.com/very-long-path/`) {
		t.Errorf("warning (%d bytes) %q: want at most 256 bytes naming the image", len(w), w)
	}
}

// TestOutcomeCountedOnce checks that every admission counts under exactly
// one outcome, the right one.
func TestOutcomeCountedOnce(t *testing.T) {
	mutated := func(t *testing.T, m *PodMutator) admission.Request {
		req := admissionRequest(t, podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}}.pod())
		return admissionRequest(t, applyPatch(t, req, m.Handle(t.Context(), req)))
	}
	tests := []struct {
		name string
		req  func(t *testing.T, m *PodMutator) admission.Request
		want string
	}{
		{"skipped", func(t *testing.T, _ *PodMutator) admission.Request {
			return admissionRequest(t, podSpec{nodeName: "node3", images: []string{"riscv:1"}}.pod())
		}, "skipped"},
		{"malformed request", func(t *testing.T, _ *PodMutator) admission.Request {
			return admissionRequest(t, podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64q!"), images: []string{"riscv:1"}}.pod())
		}, "denied"},
		{"nodeSelector excludes every node", func(t *testing.T, _ *PodMutator) admission.Request {
			return admissionRequest(t, podSpec{images: []string{"riscv:1"}, nodeSelector: map[string]string{isa.KubeArchLabel: "amd64"}}.pod())
		}, "denied"},
		{"mutated", func(t *testing.T, _ *PodMutator) admission.Request {
			return admissionRequest(t, podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}}.pod())
		}, "mutated"},
		{"admitted again", mutated, "unchanged"},
		{"bad object", func(*testing.T, *PodMutator) admission.Request {
			return rawRequest("default", []byte(`{"spec": 7}`))
		}, "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), Options{})
			req := tc.req(t, m)
			m.opts.Metrics = NewMetrics()
			m.Handle(t.Context(), req)
			got := map[string]float64{}
			for _, o := range []string{"skipped", "mutated", "unchanged", "denied", "error"} {
				if v := counter(t, m.opts.Metrics.Decisions.WithLabelValues(o)); v != 0 {
					got[o] = v
				}
			}
			if diff := cmp.Diff(map[string]float64{tc.want: 1}, got); diff != "" {
				t.Errorf("decisions by outcome (-want +got):\n%s", diff)
			}
		})
	}
}
