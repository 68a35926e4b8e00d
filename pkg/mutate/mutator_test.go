package mutate

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

func ann(kv ...string) map[string]string {
	m := map[string]string{}
	for k := 0; k+1 < len(kv); k += 2 {
		m[kv[k]] = kv[k+1]
	}
	return m
}

// exprs is the node requirements of ISA s as the webhook writes them
// (isa.Requirements, values sorted).
func exprs(t testing.TB, s string, emulated bool) []corev1.NodeSelectorRequirement {
	t.Helper()
	var out []corev1.NodeSelectorRequirement
	for _, r := range isa.Requirements(testnodes.MustISA(t, s), emulated) {
		e := corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator)}
		if len(r.Values) > 0 {
			e.Values = slices.Sorted(slices.Values(r.Values))
		}
		out = append(out, e)
	}
	return out
}

func TestHandle(t *testing.T) {
	// rv64imfd in the paper cluster: node3 is the best fit (affinity 1),
	// node5+node6 the larger fallback group (0.4), node4 the loosest.
	imfdPlacement := map[string]int32{"node3": 100, "node5": 40, "node6": 40, "node4": 16}
	userAffinity := &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}},
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node3"}}}},
		}},
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 7, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpExists}},
		}}},
	}
	manyTerms := &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}
	for k := range 22 {
		manyTerms.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(manyTerms.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "rack", Operator: corev1.NodeSelectorOpIn, Values: []string{string(rune('a' + k))}}}})
	}

	tests := []struct {
		name string
		pod  podSpec
		// wantDenied: substrings of the denial; nil means allowed.
		wantDenied []string
		// wantPlacement: admitted nodes and their raw preferred scores.
		wantPlacement map[string]int32
		wantWarnings  []string // substrings, in order
		wantRequired  []corev1.NodeSelectorTerm
		wantPreferred []corev1.PreferredSchedulingTerm
		wantDecision  []string // substrings of the decision annotation
	}{
		{
			name:          "request rv64imfd: best fit first, larger group next",
			pod:           podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}},
			wantPlacement: imfdPlacement,
			wantRequired: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "isa.isamatch.io/arch", Operator: "In", Values: []string{"riscv64"}},
				{Key: "isa.isamatch.io/rv.i", Operator: "Exists"},
				{Key: "isa.isamatch.io/rv.m", Operator: "Exists"},
				{Key: "isa.isamatch.io/rv.d", Operator: "Exists"},
			}}},
			wantDecision: []string{`request="rv64imfd`, "(annotation isa.request)", "riscv:1 [linux/riscv64]", "(4 nodes now)", "w100 affinity 1.00: 1 group, 1 node (exact fit)", "w40 affinity 0.40: 1 group, 2 nodes (+v)", "w16 affinity 0.29: 1 group, 1 node (+a_c_v_zcd)"},
		},
		{
			name:          "paper label ARCH in upper case",
			pod:           podSpec{labels: ann(isa.RequestLabel, "RV64IMFD"), images: []string{"riscv:1"}},
			wantPlacement: imfdPlacement,
			wantDecision:  []string{"(label ARCH)"},
		},
		{
			name:          "annotation wins over label",
			pod:           podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), labels: ann(isa.RequestLabel, "x86-64-v4"), images: []string{"riscv:1"}},
			wantPlacement: imfdPlacement,
			wantWarnings:  []string{`annotation isa.request "rv64imfd" and label ARCH "x86-64-v4" differ; annotation isa.request is used`},
		},
		{
			name:          "no request, single-arch image: architecture constraint, ranked as the base ISA",
			pod:           podSpec{images: []string{"amd64:1"}},
			wantPlacement: map[string]int32{"node1": 100},
			wantRequired: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"amd64"}},
			}}},
			wantDecision: []string{"request=none", "required: arch amd64 (1 node now)", "tiers: w100 affinity 0.30: 1 group, 1 node (+popcnt_"},
		},
		{
			name:          "plain riscv64 image admits nodes the labeler has not labelled",
			pod:           podSpec{images: []string{"riscv:1"}},
			wantPlacement: map[string]int32{"node3": 100, "node4": 16, "node5": 40, "node6": 40, "node7": 0},
		},
		{
			name:          "multi-arch image: any of its architectures, the leanest node of each ranked first",
			pod:           podSpec{images: []string{"multi:1"}},
			wantPlacement: map[string]int32{"node1": 100, "node2": 100, "node3": 100, "node4": 16, "node5": 40, "node6": 40, "node7": 0},
			wantRequired: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"amd64", "arm64", "riscv64"}},
			}}},
		},
		{
			name:          "init container images count",
			pod:           podSpec{images: []string{"multi:1"}, initImages: []string{"arm64:1"}},
			wantPlacement: map[string]int32{"node2": 100},
		},
		{
			name:          "platform variant is a requirement",
			pod:           podSpec{images: []string{"amd64v3:1"}},
			wantPlacement: map[string]int32{"node1": 100},
			wantRequired:  []corev1.NodeSelectorTerm{{MatchExpressions: exprs(t, "x86-64-v3", false)}},
		},
		{
			name:          "no node satisfies the variant now: allowed with a warning",
			pod:           podSpec{images: []string{"rva23:1"}},
			wantPlacement: map[string]int32{},
			wantWarnings:  []string{"no node satisfies rva23u64 now"},
			wantDecision:  []string{"(0 nodes now)", "warnings: no node satisfies"},
		},
		{
			name:          "request no node has",
			pod:           podSpec{annotations: ann(isa.BareRequestAnnotation, "x86-64-v4"), images: []string{"amd64:1"}},
			wantPlacement: map[string]int32{},
			wantWarnings:  []string{"no node satisfies x86-64-v4"},
		},
		{
			name:       "request the images cannot serve",
			pod:        podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gcv"), images: []string{"amd64:1"}},
			wantDenied: []string{`annotation isa.request "rv64gcv" cannot be served by image "amd64:1", built for linux/amd64`},
		},
		{
			name:       "request the second image cannot serve",
			pod:        podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gc | arm64"), images: []string{"multi:1", "amd64:1"}},
			wantDenied: []string{`image "amd64:1", built for linux/amd64`},
		},
		{
			name:       "images without a common architecture",
			pod:        podSpec{images: []string{"amd64:1", "arm64:1"}},
			wantDenied: []string{`no common architecture: image "arm64:1" runs on linux/arm64, but the images before it need arch amd64`},
		},
		{
			name:       "malformed annotation",
			pod:        podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64g_zfoo"), images: []string{"riscv:1"}},
			wantDenied: []string{`annotation isa.request "rv64g_zfoo" is malformed`, "accepted: " + engine.Grammar},
		},
		{
			name:       "malformed alternative list",
			pod:        podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64gc || amd64"), images: []string{"riscv:1"}},
			wantDenied: []string{`annotation isa.request "rv64gc || amd64" is malformed`, "alternative 2 is empty"},
		},
		{
			name:       "malformed label",
			pod:        podSpec{labels: ann(isa.RequestLabel, "RV64X"), images: []string{"riscv:1"}},
			wantDenied: []string{`label ARCH "RV64X" is malformed`},
		},
		{
			name:       "malformed isa.qemu",
			pod:        podSpec{annotations: ann(isa.BareQEMUAnnotation, "mips64"), images: []string{"amd64:1"}},
			wantDenied: []string{`annotation isa.qemu "mips64" is malformed`, "unknown architecture"},
		},
		{
			name:          "registry error: proceed with what is known, warn",
			pod:           podSpec{images: []string{"private:1", "riscv:1"}},
			wantPlacement: map[string]int32{"node3": 100, "node4": 16, "node5": 40, "node6": 40, "node7": 0},
			wantWarnings:  []string{`image "private:1": platforms unknown (unauthorized: 401 Unauthorized)`},
			wantDecision:  []string{"private:1 [error unauthorized]"},
		},
		{
			name:          "unsupported platforms drop out",
			pod:           podSpec{images: []string{"mixed:1"}},
			wantPlacement: map[string]int32{"node1": 100},
		},
		{
			name:          "image with only unsupported platforms constrains nothing",
			pod:           podSpec{images: []string{"armv7:1"}},
			wantPlacement: map[string]int32{"node1": 0, "node2": 0, "node3": 0, "node4": 0, "node5": 0, "node6": 0, "node7": 0},
			wantWarnings:  []string{`image "armv7:1": no platform isamatch models (linux/arm/v7)`},
		},
		{
			name:          "image label isa.request applies when the pod asks nothing",
			pod:           podSpec{images: []string{"labelled:1"}},
			wantPlacement: map[string]int32{"node1": 99, "node4": 40, "node5": 100, "node6": 100},
		},
		{
			name:          "image label isa.request is ignored when the pod asks",
			pod:           podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"labelled:1"}},
			wantPlacement: imfdPlacement,
		},
		{
			name:          "malformed image label: warn, keep the platform",
			pod:           podSpec{images: []string{"badlabel:1"}},
			wantPlacement: map[string]int32{"node3": 100, "node4": 16, "node5": 40, "node6": 40, "node7": 0},
			wantWarnings:  []string{`image "badlabel:1": label isa.request ignored`},
		},
		{
			name:          "isa.qemu with an amd64 image: emulation only",
			pod:           podSpec{annotations: ann(isa.BareQEMUAnnotation, "rv64imfdv"), images: []string{"amd64:1"}},
			wantPlacement: map[string]int32{"node1": 100},
			wantRequired: []corev1.NodeSelectorTerm{{MatchExpressions: append(exprs(t, "rv64imfdv", true),
				corev1.NodeSelectorRequirement{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"amd64"}})}},
			wantDecision: []string{`qemu="rv64imfdv"`, "required: emulates rv64imfdv on arch amd64 (1 node now)", "w100 emulation"},
		},
		{
			name:          "paper label QEMU with a multi-arch image: emulation first, native fallback after",
			pod:           podSpec{labels: ann(isa.QEMULabel, "RV64IMFDV"), images: []string{"multi:1"}},
			wantPlacement: map[string]int32{"node1": 100, "node5": 40, "node6": 40, "node4": 16},
		},
		{
			name:          "isa.qemu with isa.request as the native fallback",
			pod:           podSpec{annotations: ann(isa.BareQEMUAnnotation, "rv64imfdv", isa.BareRequestAnnotation, "rv64imfd"), images: []string{"multi:1"}},
			wantPlacement: map[string]int32{"node1": 100, "node3": 40, "node5": 16, "node6": 16, "node4": 6},
		},
		{
			name: "user required terms ANDed as a cross product, user preferred kept",
			pod:  podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd"), images: []string{"riscv:1"}, affinity: userAffinity},
			// Only node3 passes the user's terms (no node has disk=ssd).
			wantPlacement: map[string]int32{"node3": 100},
			wantRequired: []corev1.NodeSelectorTerm{
				{MatchExpressions: append([]corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}, exprs(t, "rv64imfd", false)...)},
				{MatchFields: userAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[1].MatchFields, MatchExpressions: exprs(t, "rv64imfd", false)},
			},
			// The tiers rank only what the user's terms admit: node3's group.
			wantPreferred: append([]corev1.PreferredSchedulingTerm{userAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]},
				corev1.PreferredSchedulingTerm{Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: isa.GroupLabel, Operator: "In", Values: []string{isa.GroupID(testnodes.MustISA(t, "rv64imfd"))}}}}},
			),
		},
		{
			name: "user affinity that excludes the images' architecture",
			pod: podSpec{images: []string{"amd64:1"}, affinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"arm64"}}}}},
			}}},
			wantDenied: []string{"excludes every node isamatch allows"},
		},
		{
			name:       "nodeSelector that excludes the images' architecture",
			pod:        podSpec{images: []string{"amd64:1"}, nodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}},
			wantDenied: []string{"spec.nodeSelector kubernetes.io/arch=arm64 excludes every node isamatch allows (arch amd64); remove or change it"},
		},
		{
			name:          "nodeSelector that agrees",
			pod:           podSpec{images: []string{"multi:1"}, nodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}},
			wantPlacement: map[string]int32{"node2": 100},
		},
		{
			name:       "too many terms",
			pod:        podSpec{annotations: ann(isa.BareRequestAnnotation, "rv64imfd | x86-64-v3 | arm64"), images: []string{"multi:1"}, affinity: manyTerms},
			wantDenied: []string{"66 terms, more than 64"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := testnodes.Paper(t)
			metrics := NewMetrics()
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(nodes), Options{Metrics: metrics})
			req := admissionRequest(t, tc.pod.pod())
			resp := m.Handle(t.Context(), req)
			if tc.wantDenied != nil {
				if resp.Allowed {
					t.Fatalf("allowed, want denied with %q", tc.wantDenied)
				}
				for _, s := range tc.wantDenied {
					if !strings.Contains(resp.Result.Message, s) {
						t.Errorf("denial %q does not contain %q", resp.Result.Message, s)
					}
				}
				if got := counter(t, metrics.Decisions.WithLabelValues("denied")); got != 1 {
					t.Errorf("denied decisions = %v, want 1", got)
				}
				return
			}
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result.Message)
			}
			pod := applyPatch(t, req, resp)
			if tc.wantPlacement != nil {
				if diff := cmp.Diff(tc.wantPlacement, testnodes.Placement(pod, nodes)); diff != "" {
					t.Errorf("placement (-want +got):\n%s", diff)
				}
			}
			if tc.wantRequired != nil {
				if diff := cmp.Diff(tc.wantRequired, pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms); diff != "" {
					t.Errorf("required terms (-want +got):\n%s", diff)
				}
			}
			if tc.wantPreferred != nil {
				if diff := cmp.Diff(tc.wantPreferred, pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution); diff != "" {
					t.Errorf("preferred terms (-want +got):\n%s", diff)
				}
			}
			if len(resp.Warnings) != len(tc.wantWarnings) {
				t.Errorf("warnings = %q, want %d matching %q", resp.Warnings, len(tc.wantWarnings), tc.wantWarnings)
			}
			for k, s := range tc.wantWarnings {
				if k < len(resp.Warnings) && !strings.Contains(resp.Warnings[k], s) {
					t.Errorf("warning %d = %q, want it to contain %q", k, resp.Warnings[k], s)
				}
			}
			stored(t, pod)
			decision := summaryOf(t, m, req)
			if decision == "" || strings.Contains(decision, "\n") {
				t.Errorf("decision line %q is not one line", decision)
			}
			for _, s := range tc.wantDecision {
				if !strings.Contains(decision, s) {
					t.Errorf("decision %q does not contain %q", decision, s)
				}
			}
			if got := counter(t, metrics.Decisions.WithLabelValues("mutated")); got != 1 {
				t.Errorf("mutated decisions = %v, want 1", got)
			}

			// Admitting the mutated pod again changes nothing.
			again := m.Handle(t.Context(), admissionRequest(t, pod))
			if !again.Allowed || len(patchJSON(t, again)) != 0 {
				t.Errorf("second admission: allowed=%v patches=%v, want allowed with no patch", again.Allowed, patchJSON(t, again))
			}
		})
	}
}

func TestHandleSkips(t *testing.T) {
	tests := []struct {
		name       string
		req        func(t *testing.T) admission.Request
		wantReason string
	}{
		{"pod names a node", func(t *testing.T) admission.Request {
			return admissionRequest(t, podSpec{nodeName: "node3", images: []string{"amd64:1"}}.pod())
		}, "already names a node"},
		{"mirror pod", func(t *testing.T) admission.Request {
			return admissionRequest(t, podSpec{annotations: ann(corev1.MirrorPodAnnotationKey, "x"), images: []string{"amd64:1"}}.pod())
		}, "mirror pod"},
		{"skipped namespace", func(t *testing.T) admission.Request {
			return admissionRequest(t, podSpec{ns: "kube-system", images: []string{"amd64:1"}}.pod())
		}, "namespace kube-system is skipped"},
		{"isamatch namespace", func(t *testing.T) admission.Request {
			return admissionRequest(t, podSpec{ns: "isamatch-system", images: []string{"amd64:1"}}.pod())
		}, "namespace isamatch-system is skipped"},
		{"opt-out label", func(t *testing.T) admission.Request {
			return admissionRequest(t, podSpec{labels: ann(isa.IgnoreLabel, "true"), annotations: ann(isa.BareRequestAnnotation, "bad!"), images: []string{"amd64:1"}}.pod())
		}, "opted out"},
		{"not a pod", func(t *testing.T) admission.Request {
			r := admissionRequest(t, podSpec{images: []string{"amd64:1"}}.pod())
			r.Kind = metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
			return r
		}, "not a pod"},
		{"update", func(t *testing.T) admission.Request {
			r := admissionRequest(t, podSpec{images: []string{"amd64:1"}}.pod())
			r.Operation = admissionv1.Update
			return r
		}, "only pod creation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &fakeResolver{images: testImages()}
			metrics := NewMetrics()
			m := NewPodMutator(res, inventory.NewStatic(testnodes.Paper(t)), Options{Metrics: metrics})
			resp := m.Handle(t.Context(), tc.req(t))
			if !resp.Allowed || len(patchJSON(t, resp)) != 0 || !strings.Contains(resp.Result.Message, tc.wantReason) {
				t.Errorf("got allowed=%v patches=%d reason=%q, want allowed unchanged with %q", resp.Allowed, len(patchJSON(t, resp)), resp.Result.Message, tc.wantReason)
			}
			if n := res.calls.Load(); n != 0 {
				t.Errorf("resolver called %d times for a skipped pod", n)
			}
			if got := counter(t, metrics.Decisions.WithLabelValues("skipped")); got != 1 {
				t.Errorf("skipped decisions = %v, want 1", got)
			}
		})
	}
}

func TestHandleBadObject(t *testing.T) {
	m := NewPodMutator(&fakeResolver{}, inventory.NewStatic(nil), Options{})
	resp := m.Handle(t.Context(), rawRequest("default", []byte(`{"spec": 7}`)))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusBadRequest {
		t.Errorf("got allowed=%v result=%+v, want a 400 error", resp.Allowed, resp.Result)
	}
}

func TestHandleBudget(t *testing.T) {
	tests := []struct {
		name   string
		budget time.Duration
		ctx    func(t *testing.T) (context.Context, context.CancelFunc)
	}{
		{"options budget", 50 * time.Millisecond, func(t *testing.T) (context.Context, context.CancelFunc) {
			return context.WithCancel(t.Context())
		}},
		{"request deadline shorter than the budget", time.Hour, func(t *testing.T) (context.Context, context.CancelFunc) {
			return context.WithTimeout(t.Context(), 50*time.Millisecond)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			metrics := NewMetrics()
			m := NewPodMutator(&fakeResolver{images: testImages()}, inventory.NewStatic(testnodes.Paper(t)), Options{Budget: tc.budget, Metrics: metrics})
			ctx, cancel := tc.ctx(t)
			defer cancel()
			req := admissionRequest(t, podSpec{images: []string{"slow:1", "amd64:1"}}.pod())
			start := time.Now()
			resp := m.Handle(ctx, req)
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("answered after %v", el)
			}
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result.Message)
			}
			want := []string{`isamatch: image "slow:1": platforms unknown (registry lookup exceeded the admission time budget`}
			if len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], want[0]) {
				t.Errorf("warnings = %q, want one starting with %q", resp.Warnings, want[0])
			}
			if diff := cmp.Diff(map[string]int32{"node1": 100}, testnodes.Placement(applyPatch(t, req, resp), testnodes.Paper(t))); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
			if got := counter(t, metrics.ImageErrors.WithLabelValues("timeout")); got != 1 {
				t.Errorf("timeout image errors = %v, want 1", got)
			}
		})
	}
}

func TestHandlePullAuth(t *testing.T) {
	res := &fakeResolver{images: testImages()}
	m := NewPodMutator(res, inventory.NewStatic(nil), Options{})
	pod := podSpec{ns: "team", sa: "builder", secrets: []string{"a", "b"}, images: []string{"amd64:1", "amd64:1"}, initImages: []string{"amd64:1"}}.pod()
	if resp := m.Handle(t.Context(), admissionRequest(t, pod)); !resp.Allowed {
		t.Fatalf("denied: %v", resp.Result.Message)
	}
	want := []registry.PullAuth{{Namespace: "team", ServiceAccountName: "builder", ImagePullSecrets: []string{"a", "b"}}}
	if diff := cmp.Diff(want, res.auths); diff != "" {
		t.Errorf("resolver calls (one per distinct image) (-want +got):\n%s", diff)
	}
}
