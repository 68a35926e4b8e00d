package unresolved

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestReleaseAllUnresolved(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pod := func(name, node string, gates ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Annotations: map[string]string{"keep": "me"}},
			Spec: corev1.PodSpec{NodeName: node}}
		for _, g := range gates {
			p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: g})
		}
		return p
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).
		WithObjects(
			pod("gated", "", isa.ResolveGate),
			pod("two-gates", "", "example.com/quota", isa.ResolveGate, "example.com/last"),
			pod("other-gate", "", "example.com/quota"),
			pod("running", "n1"),
		).Build()

	released, err := ReleaseAll(t.Context(), c, "isamatch was uninstalled")
	if err != nil {
		t.Fatal(err)
	}
	want := []client.ObjectKey{{Namespace: "team", Name: "gated"}, {Namespace: "team", Name: "two-gates"}}
	if diff := cmp.Diff(want, released); diff != "" {
		t.Errorf("released (-want +got):\n%s", diff)
	}
	tests := []struct {
		name       string
		wantGates  []string
		wantReason bool
	}{
		{"gated", nil, true},
		{"two-gates", []string{"example.com/quota", "example.com/last"}, true},
		{"other-gate", []string{"example.com/quota"}, false},
		{"running", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got corev1.Pod
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "team", Name: tc.name}, &got); err != nil {
				t.Fatal(err)
			}
			var gates []string
			for _, g := range got.Spec.SchedulingGates {
				gates = append(gates, g.Name)
			}
			if diff := cmp.Diff(tc.wantGates, gates); diff != "" {
				t.Errorf("gates (-want +got):\n%s", diff)
			}
			decision, ok := got.Annotations[isa.DecisionAnnotation]
			if ok != tc.wantReason || (ok && decision != Decision+"isamatch was uninstalled") {
				t.Errorf("decision annotation %q (set %v), want it set: %v", decision, ok, tc.wantReason)
			}
			if got.Annotations["keep"] != "me" {
				t.Errorf("the pod's own annotation is gone: %v", got.Annotations)
			}
		})
	}
	again, err := ReleaseAll(t.Context(), c, "again")
	if err != nil || len(again) != 0 {
		t.Errorf("a second pass released %v (%v), want nothing", again, err)
	}
}
