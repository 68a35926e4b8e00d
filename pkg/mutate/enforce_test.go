package mutate

import (
	"context"
	"strings"
	"testing"

	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
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
				m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), Options{Metrics: metrics, Enforcement: mode})
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
				got, err := contract.ParseDecision(pod.Annotations)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(got.Reason, tc.message) {
					t.Errorf("decision reason = %q, want the denial %q", got.Reason, tc.message)
				}
				got.Reason = ""
				if diff := cmp.Diff(contract.DecisionCounts{WouldDeny: true}, got); diff != "" {
					t.Errorf("decision counts (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestNamespaceEnforcement: a namespace's isa.EnforcementLabel replaces the
// cluster's mode for its own pods, at admission and at gate release, only
// when the mode is one namespaces may choose.
func TestNamespaceEnforcement(t *testing.T) {
	labels := map[string]string{"team-warn": EnforcementWarn, "team-deny": EnforcementDeny, "team-odd": "audit"}
	both := []string{EnforcementDeny, EnforcementWarn}
	tests := []struct {
		name     string
		cluster  string
		allowed  []string
		ns       string
		wantWarn bool
	}{
		{"deny cluster, warn namespace", EnforcementDeny, both, "team-warn", true},
		{"warn cluster, deny namespace", EnforcementWarn, both, "team-deny", false},
		{"deny cluster, namespace without the label", EnforcementDeny, both, "team-none", false},
		{"warn cluster, namespace without the label", EnforcementWarn, both, "team-none", true},
		{"namespaces may not choose", EnforcementDeny, nil, "team-warn", false},
		{"namespaces may choose deny only", EnforcementDeny, []string{EnforcementDeny}, "team-warn", false},
		{"warn cluster, namespaces may choose warn only", EnforcementWarn, []string{EnforcementWarn}, "team-deny", true},
		{"a value that is no mode", EnforcementDeny, both, "team-odd", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			opts := Options{Enforcement: tc.cluster, NamespaceModes: tc.allowed, Resolve: ResolveGate,
				NamespaceEnforcement: func(_ context.Context, ns string) string { asked = append(asked, ns); return labels[ns] }}
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), opts)

			malformed := podSpec{ns: tc.ns, annotations: ann(isa.BareRequestAnnotation, "rv64q!"), images: []string{"riscv:1"}}
			resp := m.Handle(t.Context(), admissionRequest(t, malformed.pod()))
			if resp.Allowed != tc.wantWarn {
				t.Errorf("admission: allowed = %v, want %v (result %+v)", resp.Allowed, tc.wantWarn, resp.Result)
			}

			gated := podSpec{ns: tc.ns, images: []string{"amd64:1", "riscv:1"}}.pod()
			gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
			m.ReleaseGated(t.Context(), gated, true)
			c, err := contract.ParseDecision(gated.Annotations)
			if err != nil {
				t.Fatal(err)
			}
			if c.WouldDeny != tc.wantWarn {
				t.Errorf("gate release: would-deny = %v, want %v (%+v)", c.WouldDeny, tc.wantWarn, c)
			}
			if len(tc.allowed) > 0 {
				for _, ns := range asked {
					if ns != tc.ns {
						t.Errorf("asked for namespace %q, want only the pod's %q", ns, tc.ns)
					}
				}
				if len(asked) == 0 {
					t.Error("the namespace's label was never asked for")
				}
			}
		})
	}
}

// TestParseNamespaceModes: entries one mode or comma-separated, repeats
// dropped, none alone for no mode, anything else an error naming it.
func TestParseNamespaceModes(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		wantErr string
	}{
		{in: []string{"deny", "warn"}, want: []string{"deny", "warn"}},
		{in: []string{"warn,deny", "warn"}, want: []string{"warn", "deny"}},
		{in: []string{"none"}},
		{in: nil},
		{in: []string{"deny", "audit"}, wantErr: `"audit" is not a mode`},
		{in: []string{"none", "warn"}, wantErr: "none with a mode"},
	}
	for _, tc := range tests {
		got, err := ParseNamespaceModes(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseNamespaceModes(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !cmp.Equal(tc.want, got) {
			t.Errorf("ParseNamespaceModes(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
