package mutate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
)

// TestEnforcementWarn checks that every kind of denial stays a denial in
// deny mode and becomes an admitted pod with a warning, the would-deny
// annotations, no affinity and the would_deny outcome in warn mode.
func TestEnforcementWarn(t *testing.T) {
	denials := []struct {
		name    string
		pod     podSpec
		message string
	}{
		{"malformed request", podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64q!"), images: []string{"riscv:1"}}, "rv64q!"},
		{"images cannot serve the request", podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"amd64:1"}}, "cannot be served by image"},
		{"no common architecture", podSpec{images: []string{"amd64:1", "arm64:1"}}, "no common architecture"},
		{"nodeSelector excludes every allowed node", podSpec{images: []string{"riscv:1"}, nodeSelector: map[string]string{isa.KubeArchLabel: "amd64"}}, "excludes every node"},
	}
	for _, mode := range []string{"", EnforcementDeny, EnforcementWarn} {
		for _, tc := range denials {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				metrics := NewMetrics()
				m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(paperCluster(t)), Options{Metrics: metrics, Enforcement: mode})
				req := admissionRequest(t, tc.pod.pod())
				resp := m.Handle(t.Context(), req)
				outcome := "denied"
				if mode == EnforcementWarn {
					outcome = "would_deny"
				}
				if got := counter(t, metrics.Decisions.WithLabelValues(outcome)); got != 1 {
					t.Errorf("outcome %s counted %v times, want 1", outcome, got)
				}
				if mode != EnforcementWarn {
					if resp.Allowed || !strings.Contains(resp.Result.Message, tc.message) {
						t.Fatalf("allowed=%v result=%+v, want a denial mentioning %q", resp.Allowed, resp.Result, tc.message)
					}
					return
				}
				if !resp.Allowed {
					t.Fatalf("denied in warn mode: %+v", resp.Result)
				}
				if len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], "isamatch would deny this pod: ") || !strings.Contains(resp.Warnings[0], tc.message) {
					t.Errorf("warnings = %q, want one carrying the denial %q", resp.Warnings, tc.message)
				}
				pod := applyPatch(t, req, resp)
				if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
					t.Errorf("node affinity written for a pod that would be denied: %+v", a.NodeAffinity)
				}
				got, err := ParseDecision(pod.Annotations)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(got.Reason, tc.message) {
					t.Errorf("decision reason = %q, want the denial %q", got.Reason, tc.message)
				}
				got.Reason = ""
				if diff := cmp.Diff(DecisionCounts{WouldDeny: true}, got); diff != "" {
					t.Errorf("decision counts (-want +got):\n%s", diff)
				}
			})
		}
	}
}
