package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/isamatch/isamatch/internal/manifests"
	"github.com/isamatch/isamatch/pkg/isa"
)

// renderConfig renders config/ as `kubectl apply -k config` would.
func renderConfig(t *testing.T) []runtime.Object {
	t.Helper()
	return renderWithComponents(t)
}

// renderWithComponents renders config/ with the named components of
// config/components.
func renderWithComponents(t *testing.T, components ...string) []runtime.Object {
	t.Helper()
	paths := make([]string, len(components))
	for i, c := range components {
		paths[i] = filepath.Join("components", c)
	}
	objs, err := manifests.Render(t.Context(), t.TempDir(), filepath.Join("..", "..", "config"), paths...)
	if errors.Is(err, manifests.ErrNoKubectl) && os.Getenv("CI") == "" {
		t.Skip(err.Error() + " (required when CI is set)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// find returns the one object of type T named name.
func find[T runtime.Object](t *testing.T, objs []runtime.Object, name string, getName func(T) string) T {
	t.Helper()
	found := manifests.Named(objs, name, getName)
	if len(found) != 1 {
		var zero T
		t.Fatalf("rendered config has %d %T named %q, want 1", len(found), zero, name)
	}
	return found[0]
}

func TestConfigRenders(t *testing.T) {
	objs := renderConfig(t)

	ns := find(t, objs, DefaultNamespace, func(n *corev1.Namespace) string { return n.Name })
	labelerNS := find(t, objs, "isamatch-labeler", func(n *corev1.Namespace) string { return n.Name })
	ds := find(t, objs, "isamatch-labeler", func(d *appsv1.DaemonSet) string { return d.Name })

	mwc := find(t, objs, WebhookConfigName, func(m *admissionregistrationv1.MutatingWebhookConfiguration) string { return m.Name })
	if len(mwc.Webhooks) != 1 {
		t.Fatalf("MutatingWebhookConfiguration has %d webhooks, want 1", len(mwc.Webhooks))
	}
	wh := mwc.Webhooks[0]
	svc := wh.ClientConfig.Service
	checks := []struct {
		name string
		ok   bool
	}{
		{"service is " + ServiceName + " in " + DefaultNamespace, svc != nil && svc.Name == ServiceName && svc.Namespace == DefaultNamespace},
		{"path is " + MutatePath, svc != nil && svc.Path != nil && *svc.Path == MutatePath},
		{"failurePolicy Ignore", wh.FailurePolicy != nil && *wh.FailurePolicy == admissionregistrationv1.Ignore},
		{"timeoutSeconds at most 10", wh.TimeoutSeconds != nil && *wh.TimeoutSeconds <= 10},
		{"sideEffects None", wh.SideEffects != nil && *wh.SideEffects == admissionregistrationv1.SideEffectClassNone},
		{"admissionReviewVersions [v1]", slices.Equal(wh.AdmissionReviewVersions, []string{"v1"})},
		{"reinvocationPolicy IfNeeded", wh.ReinvocationPolicy != nil && *wh.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy},
		{"pods CREATE only", len(wh.Rules) == 1 && slices.Equal(wh.Rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) &&
			slices.Equal(wh.Rules[0].Resources, []string{"pods"}) && slices.Equal(wh.Rules[0].APIGroups, []string{""})},
		{"namespaceSelector excludes kube-system", wh.NamespaceSelector != nil && slices.ContainsFunc(wh.NamespaceSelector.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
			return r.Key == "kubernetes.io/metadata.name" && r.Operator == "NotIn" && slices.Contains(r.Values, "kube-system")
		})},
		{"the webhook's namespace is skipped by its ignore label, not its name", ns.Labels[isa.IgnoreLabel] == "true" &&
			!strings.Contains(fmt.Sprint(wh.NamespaceSelector), DefaultNamespace)},
		{"namespaceSelector honours the ignore label", wh.NamespaceSelector != nil && slices.ContainsFunc(wh.NamespaceSelector.MatchExpressions, func(r metav1.LabelSelectorRequirement) bool {
			return r.Key == "isa.isamatch.io/ignore" && r.Operator == "NotIn" && slices.Equal(r.Values, []string{"true"})
		})},
	}

	dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	// The downward API: the container's $POD_NAMESPACE is the pod's.
	namespaceFromPod := slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == NamespaceEnv && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
	})
	if !namespaceFromPod {
		t.Errorf("the webhook container's env sets no %s from the downward API (fieldRef metadata.namespace)", NamespaceEnv)
	}
	t.Setenv(NamespaceEnv, dep.Namespace)
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	args, err := parseArgs(fs, shippedArgs(t, objs, dep))
	if err != nil {
		t.Fatalf("Deployment args %q do not parse: %v", c.Args, err)
	}
	service := find(t, objs, ServiceName, func(s *corev1.Service) string { return s.Name })
	secret := find(t, objs, CertSecretName, func(s *corev1.Secret) string { return s.Name })
	pdb := find(t, objs, ServiceName, func(p *policyv1.PodDisruptionBudget) string { return p.Name })
	cr := find(t, objs, ServiceName, func(r *rbacv1.ClusterRole) string { return r.Name })
	role := find(t, objs, ServiceName, func(r *rbacv1.Role) string { return r.Name })
	labelerRole := find(t, objs, "isamatch-labeler", func(r *rbacv1.ClusterRole) string { return r.Name })
	reader := find(t, objs, "isamatch-metrics-reader", func(r *rbacv1.ClusterRole) string { return r.Name })
	vap := find(t, objs, ServiceName, func(p *admissionregistrationv1.ValidatingAdmissionPolicy) string { return p.Name })
	vapb := find(t, objs, ServiceName, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Name })
	podVAP := find(t, objs, ServiceName+"-pods", func(p *admissionregistrationv1.ValidatingAdmissionPolicy) string { return p.Name })
	podVAPB := find(t, objs, ServiceName+"-pods", func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Name })
	podVAPText := ""
	for _, v := range podVAP.Spec.Variables {
		podVAPText += v.Expression + "\n"
	}
	// The policies name the ServiceAccount without its namespace, so that
	// an overlay may rename it.
	webhookUser := "endsWith(':" + pod.ServiceAccountName + "')"
	sc := c.SecurityContext
	psc := pod.SecurityContext
	webhookPort := int32(0)
	for _, p := range c.Ports {
		if p.Name == "webhook" {
			webhookPort = p.ContainerPort
		}
	}
	checks = append(checks, []struct {
		name string
		ok   bool
	}{
		{"image placeholder", c.Image == "ghcr.io/isamatch/webhook:latest"},
		{"two replicas", dep.Spec.Replicas != nil && *dep.Spec.Replicas == 2},
		{"soft anti-affinity", pod.Affinity != nil && pod.Affinity.PodAntiAffinity != nil &&
			len(pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 &&
			len(pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 0},
		{"cert rotation on", args.certRotation},
		{"container port is --port", int(webhookPort) == args.port},
		{"readiness /readyz", c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path == "/readyz"},
		// Checked every second until ready, with a budget a slow start on a
		// big cluster does not exhaust (a restart would only start over).
		{"startup /readyz every second, for at least 5 minutes", c.StartupProbe != nil && c.StartupProbe.HTTPGet != nil &&
			c.StartupProbe.HTTPGet.Path == "/readyz" && c.StartupProbe.PeriodSeconds == 1 && c.StartupProbe.FailureThreshold >= 300},
		{"liveness /healthz", c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path == "/healthz"},
		{"resources", c.Resources.Requests.Cpu().MilliValue() > 0 && !c.Resources.Limits.Memory().IsZero()},
		{"non-root", psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot},
		{"read-only root fs", sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem},
		{"no privilege escalation", sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation},
		{"drop ALL", sc != nil && sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"})},
		{"service 443 -> webhook port", len(service.Spec.Ports) == 1 && service.Spec.Ports[0].Port == 443 &&
			(service.Spec.Ports[0].TargetPort == intstr.FromString("webhook") || service.Spec.Ports[0].TargetPort == intstr.FromInt32(webhookPort))},
		{"service selects the pods", selects(service.Spec.Selector, dep.Spec.Template.Labels)},
		{"certificate secret in the namespace", secret.Namespace == args.namespace},
		{"certificate secret mounted at --cert-dir", mountsSecret(pod, c, CertSecretName, args.certDir)},
		{"PDB minAvailable 1", pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.IntValue() == 1},
		{"ClusterRole lists and watches nodes", manifests.Allows(cr.Rules, "", "nodes", "list", "watch")},
		{"ClusterRole reads no secrets (pull secrets are opt-in)", !manifests.Allows(cr.Rules, "", "secrets", "get") && !manifests.Allows(cr.Rules, "", "serviceaccounts", "get")},
		{"pull secrets off", !args.pullSecrets},
		{"ClusterRole injects the CA", manifests.Allows(cr.Rules, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "get", "list", "watch", "update")},
		{"webhook namespace enforces Pod Security restricted", ns.Labels["pod-security.kubernetes.io/enforce"] == "restricted"},
		{"webhook pod runs restricted: RuntimeDefault seccomp", psc != nil && psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"labeler in its own namespace, warned at restricted", ds.Namespace == labelerNS.Name && labelerNS.Name != DefaultNamespace &&
			labelerNS.Labels["pod-security.kubernetes.io/warn"] == "restricted" && labelerNS.Labels["pod-security.kubernetes.io/audit"] == "restricted"},
		{"labeler mounts no host / and every host directory recursively read-only", labelerMountsNarrow(ds.Spec.Template.Spec)},
		{"ClusterRole updates only the configuration " + WebhookConfigName, manifests.OnlyNamed(cr.Rules, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "update", WebhookConfigName)},
		{"ClusterRole writes no other admission object", !manifests.Allows(cr.Rules, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "create") &&
			!manifests.Allows(cr.Rules, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch") &&
			!manifests.Allows(cr.Rules, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "delete") &&
			!manifests.Allows(cr.Rules, "admissionregistration.k8s.io", "validatingadmissionpolicies", "update")},
		{"ClusterRole reviews metrics tokens", manifests.Allows(cr.Rules, "authentication.k8s.io", "tokenreviews", "create") && manifests.Allows(cr.Rules, "authorization.k8s.io", "subjectaccessreviews", "create")},
		{"labeler ClusterRole reviews metrics tokens", manifests.Allows(labelerRole.Rules, "authentication.k8s.io", "tokenreviews", "create") && manifests.Allows(labelerRole.Rules, "authorization.k8s.io", "subjectaccessreviews", "create")},
		{"metrics-reader may GET /metrics", slices.ContainsFunc(reader.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.NonResourceURLs, "/metrics") && slices.Contains(r.Verbs, "get")
		})},
		{"Role maintains the certificate secret", role.Namespace == args.namespace && manifests.Allows(role.Rules, "", "secrets", "get", "list", "watch", "update")},
		{"Role reads and updates only the certificate secret", manifests.OnlyNamed(role.Rules, "", "secrets", "get", CertSecretName) && manifests.OnlyNamed(role.Rules, "", "secrets", "update", CertSecretName)},
		{"Role creates no secrets", !manifests.Allows(role.Rules, "", "secrets", "create")},
		{"metrics served securely", args.metricsSecure},
		{"policy matches the webhook's ServiceAccount", len(vap.Spec.MatchConditions) == 1 && strings.Contains(vap.Spec.MatchConditions[0].Expression, webhookUser)},
		{"policy fails closed", vap.Spec.FailurePolicy != nil && *vap.Spec.FailurePolicy == admissionregistrationv1.Fail},
		{"policy bound with Deny", vapb.Spec.PolicyName == vap.Name && slices.Equal(vapb.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny})},
		{"gate controller on, leader-elected", args.gateController && args.leaderElect && args.resolve != "sync"},
		{"ClusterRole reads and patches pods", manifests.Allows(cr.Rules, "", "pods", "get", "list", "watch", "patch")},
		{"ClusterRole never updates, creates or deletes pods", !manifests.Allows(cr.Rules, "", "pods", "update") && !manifests.Allows(cr.Rules, "", "pods", "create") && !manifests.Allows(cr.Rules, "", "pods", "delete")},
		{"ClusterRole records events", manifests.Allows(cr.Rules, "events.k8s.io", "events", "create")},
		{"Role creates the Lease", manifests.Allows(role.Rules, "coordination.k8s.io", "leases", "create")},
		{"Role reads and renews only the Lease " + leaseName, manifests.OnlyNamed(role.Rules, "coordination.k8s.io", "leases", "get", leaseName) && manifests.OnlyNamed(role.Rules, "coordination.k8s.io", "leases", "update", leaseName)},
		{"pod policy matches the webhook's ServiceAccount", len(podVAP.Spec.MatchConditions) == 1 && strings.Contains(podVAP.Spec.MatchConditions[0].Expression, webhookUser)},
		{"pod policy names the gate and the decision annotations", strings.Contains(podVAPText, "'"+isa.ResolveGate+"'") &&
			strings.Contains(podVAPText, "'"+isa.DecisionAnnotation+"'") && strings.Contains(podVAPText, "'"+isa.DecisionCountsAnnotation+"'")},
		{"pod policy matches pod updates", len(podVAP.Spec.MatchConstraints.ResourceRules) == 1 &&
			slices.Equal(podVAP.Spec.MatchConstraints.ResourceRules[0].Resources, []string{"pods"}) &&
			slices.Equal(podVAP.Spec.MatchConstraints.ResourceRules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Update})},
		{"pod policy fails closed", podVAP.Spec.FailurePolicy != nil && *podVAP.Spec.FailurePolicy == admissionregistrationv1.Fail},
		{"pod policy bound with Deny", podVAPB.Spec.PolicyName == podVAP.Name && slices.Equal(podVAPB.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny})},
	}...)
	for _, ck := range checks {
		if !ck.ok {
			t.Errorf("rendered config: %s: not so", ck.name)
		}
	}
}

// TestComponentsRender renders config with the optional NetworkPolicy
// components and checks that each policy selects the pods it is written for
// and names ports they have.
func TestComponentsRender(t *testing.T) {
	objs := renderWithComponents(t, "ingress-networkpolicy", "egress-networkpolicy")
	dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
	ds := find(t, objs, "isamatch-labeler", func(d *appsv1.DaemonSet) string { return d.Name })
	tests := []struct {
		policy    string
		namespace string
		pod       corev1.PodTemplateSpec
		kind      networkingv1.PolicyType
		toPorts   []string
	}{
		{policy: "isamatch-webhook-ingress", namespace: dep.Namespace, pod: dep.Spec.Template, kind: networkingv1.PolicyTypeIngress, toPorts: []string{"webhook", "metrics"}},
		{policy: "isamatch-labeler-ingress", namespace: ds.Namespace, pod: ds.Spec.Template, kind: networkingv1.PolicyTypeIngress, toPorts: []string{"8080"}},
		{policy: "isamatch-webhook-egress", namespace: dep.Namespace, pod: dep.Spec.Template, kind: networkingv1.PolicyTypeEgress},
		{policy: "isamatch-labeler-egress", namespace: ds.Namespace, pod: ds.Spec.Template, kind: networkingv1.PolicyTypeEgress},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			np := find(t, objs, tc.policy, func(p *networkingv1.NetworkPolicy) string { return p.Name })
			if np.Namespace != tc.namespace {
				t.Errorf("namespace = %q, want the pods' %q", np.Namespace, tc.namespace)
			}
			if !selects(np.Spec.PodSelector.MatchLabels, tc.pod.Labels) {
				t.Errorf("podSelector %v does not select pod labels %v", np.Spec.PodSelector.MatchLabels, tc.pod.Labels)
			}
			if diff := cmp.Diff([]networkingv1.PolicyType{tc.kind}, np.Spec.PolicyTypes); diff != "" {
				t.Errorf("policyTypes (-want +got):\n%s", diff)
			}
			var got []string
			for _, r := range np.Spec.Ingress {
				for _, p := range r.Ports {
					port := p.Port.String()
					if !hasPort(tc.pod.Spec, port) {
						t.Errorf("ingress port %s is no container port of the pods", port)
					}
					got = append(got, port)
				}
			}
			if diff := cmp.Diff(tc.toPorts, got); diff != "" {
				t.Errorf("ingress ports (-want +got):\n%s", diff)
			}
		})
	}
}

// hasPort reports whether a container of spec has a port named or numbered port.
func hasPort(spec corev1.PodSpec, port string) bool {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port {
				return true
			}
		}
	}
	return false
}

// TestOptInComponent checks that the opt-in component makes the webhook
// require isa.EnabledLabel=true on a namespace, keeping the opt-out rules.
func TestOptInComponent(t *testing.T) {
	for _, tc := range []struct {
		components []string
		want       []metav1.LabelSelectorRequirement
	}{
		{nil, []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
			{Key: isa.IgnoreLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}},
		}},
		{[]string{"opt-in"}, []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
			{Key: isa.IgnoreLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}},
			{Key: isa.EnabledLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"true"}},
		}},
	} {
		t.Run(fmt.Sprint(tc.components), func(t *testing.T) {
			objs := renderWithComponents(t, tc.components...)
			mwc := find(t, objs, WebhookConfigName, func(c *admissionregistrationv1.MutatingWebhookConfiguration) string { return c.Name })
			if len(mwc.Webhooks) != 1 || mwc.Webhooks[0].NamespaceSelector == nil {
				t.Fatalf("webhooks = %+v, want one with a namespaceSelector", mwc.Webhooks)
			}
			if diff := cmp.Diff(tc.want, mwc.Webhooks[0].NamespaceSelector.MatchExpressions); diff != "" {
				t.Errorf("namespaceSelector (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCriticalPodsHaveQuota: every pod template with a priority class has a
// ResourceQuota in its namespace whose PriorityClass scope covers that
// class, so clusters that limit critical classes to namespaces with such a
// quota (GKE) admit the pods.
func TestCriticalPodsHaveQuota(t *testing.T) {
	objs := renderConfig(t)
	covered := map[[2]string]bool{} // namespace, class
	for _, o := range objs {
		q, ok := o.(*corev1.ResourceQuota)
		if !ok || q.Spec.ScopeSelector == nil {
			continue
		}
		for _, e := range q.Spec.ScopeSelector.MatchExpressions {
			if e.ScopeName == corev1.ResourceQuotaScopePriorityClass && e.Operator == corev1.ScopeSelectorOpIn {
				for _, v := range e.Values {
					covered[[2]string{q.Namespace, v}] = true
				}
			}
		}
	}
	checked := 0
	for _, o := range objs {
		var ns, name string
		var spec corev1.PodSpec
		switch w := o.(type) {
		case *appsv1.Deployment:
			ns, name, spec = w.Namespace, w.Name, w.Spec.Template.Spec
		case *appsv1.DaemonSet:
			ns, name, spec = w.Namespace, w.Name, w.Spec.Template.Spec
		default:
			continue
		}
		if spec.PriorityClassName == "" {
			continue
		}
		checked++
		if !covered[[2]string{ns, spec.PriorityClassName}] {
			t.Errorf("%s/%s uses priority class %s with no ResourceQuota scoped to it in its namespace", ns, name, spec.PriorityClassName)
		}
	}
	if checked != 2 {
		t.Errorf("checked %d workloads with a priority class, want 2 (the labeler and the webhook)", checked)
	}
}

// TestPullSecretsComponent checks that the pull-secrets component turns on
// --pull-secrets and grants exactly what it needs: get, by name, on secrets
// and serviceaccounts, bound to the webhook's ServiceAccount.
func TestPullSecretsComponent(t *testing.T) {
	objs := renderWithComponents(t, "pull-secrets")
	dep := find(t, objs, ServiceName, func(d *appsv1.Deployment) string { return d.Name })
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	args, err := parseArgs(fs, shippedArgs(t, objs, dep))
	if err != nil {
		t.Fatalf("Deployment args do not parse: %v", err)
	}
	cr := find(t, objs, ServiceName+"-pull-secrets", func(r *rbacv1.ClusterRole) string { return r.Name })
	crb := find(t, objs, ServiceName+"-pull-secrets", func(b *rbacv1.ClusterRoleBinding) string { return b.Name })
	for _, ck := range []struct {
		name string
		ok   bool
	}{
		{"--pull-secrets on", args.pullSecrets},
		{"gets secrets and serviceaccounts", manifests.Allows(cr.Rules, "", "secrets", "get") && manifests.Allows(cr.Rules, "", "serviceaccounts", "get")},
		{"never lists or watches secrets", !manifests.Allows(cr.Rules, "", "secrets", "list") && !manifests.Allows(cr.Rules, "", "secrets", "watch")},
		{"bound to the webhook's ServiceAccount", crb.RoleRef.Name == cr.Name && len(crb.Subjects) == 1 &&
			crb.Subjects[0].Name == dep.Spec.Template.Spec.ServiceAccountName && crb.Subjects[0].Namespace == args.namespace},
	} {
		if !ck.ok {
			t.Errorf("config with components/pull-secrets: %s: not so", ck.name)
		}
	}
}
