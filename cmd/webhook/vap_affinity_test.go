package main

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// TestPodPolicyLimitsAffinityKeys: the ValidatingAdmissionPolicy on the
// webhook's pod updates lets it add node-affinity requirements only on
// isamatch's own keys and kubernetes.io/arch (a stolen token must not pin
// a gated pod with kubernetes.io/hostname), and no matchFields. cel-go is
// not a dependency of this module, so the rule is checked here by what it
// names; the API server evaluates it in the webhook suite
// (test/integration), which this test does not start.
func TestPodPolicyLimitsAffinityKeys(t *testing.T) {
	objs := renderConfig(t)
	vap := find(t, objs, ServiceName+"-pods", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) string { return p.Name })
	var rule *admissionregistrationv1.Validation
	for i, v := range vap.Spec.Validations {
		if strings.Contains(v.Expression, "variables.newTerms") {
			rule = &vap.Spec.Validations[i]
		}
	}
	if rule == nil {
		t.Fatalf("policy %s has no validation of the node-affinity terms it adds", vap.Name)
	}
	vars := map[string]string{}
	for _, v := range vap.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	for _, want := range []struct{ what, in, text string }{
		{"isamatch's node label prefix", rule.Expression, "e.key.startsWith('" + isa.NativePrefix + "')"},
		{"isamatch's emulation label prefix", rule.Expression, "e.key.startsWith('" + isa.EmuPrefix + "')"},
		{"the architecture label", rule.Expression, "e.key == '" + isa.KubeArchLabel + "'"},
		{"requirements kept from before", rule.Expression, "variables.oldTerms.exists(o, has(o.matchExpressions)"},
		{"matchFields only as before", rule.Expression, "t.matchFields.all(f"},
		{"required terms", vars["newTerms"], "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"},
		{"preferred terms", vars["newTerms"], "preferredDuringSchedulingIgnoredDuringExecution.map(p, p.preference)"},
		{"old required terms", vars["oldTerms"], "oldObject.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"},
	} {
		if !strings.Contains(want.in, want.text) {
			t.Errorf("pod policy does not check %s: %q not in\n%s", want.what, want.text, want.in)
		}
	}
	if strings.Contains(rule.Expression, "kubernetes.io/hostname") {
		t.Errorf("pod policy names kubernetes.io/hostname as allowed:\n%s", rule.Expression)
	}
}
