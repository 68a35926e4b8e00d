// Package audittest holds the nodes, pods and webhook selectors the audit's
// tests and its scanner's share.
package audittest

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Labelled returns the labels the labeler writes for an ISA s on a node
// of architecture arch.
func Labelled(t testing.TB, s, arch string) map[string]string {
	t.Helper()
	native, err := isa.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	l := isa.NodeLabels(native, nil)
	l[isa.KubeArchLabel] = arch
	return l
}

// Nodes are three nodes by name: an x86-64-v3 and an rv64gc node labelled
// by the labeler, and an amd64 node without isamatch's labels.
func Nodes(t testing.TB) map[string]map[string]string {
	return map[string]map[string]string{
		"x86":  Labelled(t, "x86-64-v3", "amd64"),
		"rv":   Labelled(t, "rv64gc", "riscv64"),
		"bare": {isa.KubeArchLabel: "amd64"},
	}
}

// Pod is a running pod of one image on node, changed by opts.
func Pod(name, ns, node string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "reg/app:v1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Annotate sets annotation k to v.
func Annotate(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

// ShippedSelectors are config/webhook's selectors with the opt-in
// component.
func ShippedSelectors() *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "isamatch"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "pods.isa.isamatch.io", NamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "isamatch-system"}},
				{Key: isa.IgnoreLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}},
				{Key: isa.EnabledLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"true"}},
			}}}}}
}
