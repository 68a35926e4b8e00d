package bench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// The start-up check passes a pod with the one annotation added, whatever
// its annotations were, and fails one that lacks it or carries more.
func TestAnnotateDiff(t *testing.T) {
	bare := LoadPod("ns", "p", "reg/img:v1", Unscheduled, 0)
	withRequest := LoadPod("ns", "p", "reg/img:v1", Unscheduled, 1)
	if len(bare.Annotations) != 0 || withRequest.Annotations[isa.BareRequestAnnotation] == "" {
		t.Fatalf("the mix's first two pods should have no annotations and a request: %v, %v", bare.Annotations, withRequest.Annotations)
	}
	annotated := func(p *corev1.Pod, extra map[string]string) *corev1.Pod {
		p = p.DeepCopy()
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[AnnotateKey] = AnnotateValue
		for k, v := range extra {
			p.Annotations[k] = v
		}
		return p
	}
	withAffinity := annotated(withRequest, nil)
	withAffinity.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	for _, tc := range []struct {
		name       string
		plain, got *corev1.Pod
		wantSame   bool
	}{
		{"no annotations, one added", bare, annotated(bare, nil), true},
		{"a request, one added", withRequest, annotated(withRequest, nil), true},
		{"nothing added", withRequest, withRequest, false},
		{"another value", bare, annotated(bare, map[string]string{AnnotateKey: "2"}), false},
		{"more added", bare, annotated(bare, map[string]string{"x": "y"}), false},
		{"affinity added", withRequest, withAffinity, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := annotateDiff(tc.plain, tc.got); (d == "") != tc.wantSame {
				t.Errorf("annotateDiff = %q, want same: %v", d, tc.wantSame)
			}
			if tc.plain.Annotations[AnnotateKey] != "" {
				t.Error("annotateDiff changed the plain pod")
			}
		})
	}
}
