package release

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
)

// gatedPod carries isamatch's gate and another controller's.
func gatedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "7"},
		Spec:       corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "other.example/gate"}, {Name: isa.ResolveGate}}},
	}
}

// released is pod as the releaser leaves it: gate removed, affinity set.
func released(pod *corev1.Pod) *corev1.Pod {
	next := pod.DeepCopy()
	next.Spec.SchedulingGates = next.Spec.SchedulingGates[:1]
	next.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	return next
}

func TestWrite(t *testing.T) {
	podGK := schema.GroupKind{Kind: "Pod"}
	invalid := apierrors.NewInvalid(podGK, "p", field.ErrorList{field.Forbidden(field.NewPath("spec", "affinity"), "no")})
	tests := []struct {
		name    string
		rel     mutate.GateRelease
		errs    []error // what the patcher answers, call by call
		patches int
		event   string
		counted string
		wantErr bool
	}{
		{name: "resolved", rel: mutate.GateRelease{Reason: mutate.ReleaseResolved, Message: "images resolved"},
			errs: []error{nil}, patches: 1, event: "Normal IsamatchReleased images resolved", counted: mutate.ReleaseResolved},
		{name: "timeout", rel: mutate.GateRelease{Reason: mutate.ReleaseTimeout, Warning: true, Message: "past the bound"},
			errs: []error{nil}, patches: 1, event: "Warning IsamatchGateTimeout past the bound", counted: mutate.ReleaseTimeout},
		{name: "narrowed", rel: mutate.GateRelease{Reason: mutate.ReleaseResolved, Warning: true, Message: "narrowed"},
			errs: []error{nil}, patches: 1, event: "Warning IsamatchNarrowed narrowed", counted: mutate.ReleaseResolved},
		{name: "denied", rel: mutate.GateRelease{Reason: mutate.ReleaseDenied, Warning: true, Message: "no"},
			errs: []error{nil}, patches: 1, event: "Warning IsamatchDenied no", counted: mutate.ReleaseDenied},
		{name: "deleted meanwhile", rel: mutate.GateRelease{Reason: mutate.ReleaseResolved},
			errs: []error{apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p")}, patches: 1},
		{name: "changed meanwhile: the caller reads it again", rel: mutate.GateRelease{Reason: mutate.ReleaseResolved},
			errs: []error{apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("changed"))}, patches: 1, wantErr: true},
		{name: "affinity refused: released with the gate removed only", rel: mutate.GateRelease{Reason: mutate.ReleaseResolved},
			errs: []error{invalid, nil}, patches: 2, event: "Warning IsamatchRefused released without isamatch's affinity", counted: ReleaseRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := gatedPod()
			var last *corev1.Pod
			calls := 0
			rec := events.NewFakeRecorder(4)
			counted := ""
			w := Writer{
				Patch: func(_ context.Context, from, next *corev1.Pod) error {
					if from.ResourceVersion != "7" {
						t.Errorf("patch from resourceVersion %q, want the pod as read", from.ResourceVersion)
					}
					last = next
					calls++
					return tc.errs[calls-1]
				},
				Recorder: rec,
				Released: func(reason string, _ float64) { counted = reason },
			}
			err := w.Write(t.Context(), pod, released(pod), tc.rel)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Write: %v, want error %v", err, tc.wantErr)
			}
			if calls != tc.patches {
				t.Errorf("%d patches, want %d", calls, tc.patches)
			}
			if counted != tc.counted {
				t.Errorf("counted %q, want %q", counted, tc.counted)
			}
			got := ""
			select {
			case got = <-rec.Events:
			default:
			}
			if len(got) < len(tc.event) || got[:len(tc.event)] != tc.event {
				t.Errorf("event %q, want it to start with %q", got, tc.event)
			}
			if tc.counted != ReleaseRefused {
				return
			}
			if last.Spec.Affinity != nil || len(last.Spec.SchedulingGates) != 1 || last.Spec.SchedulingGates[0].Name != "other.example/gate" {
				t.Errorf("refused release wrote affinity %v, gates %v; want no affinity and the other gate kept", last.Spec.Affinity, last.Spec.SchedulingGates)
			}
			c, err := contract.ParseDecision(last.Annotations)
			if err != nil || c.Gate != contract.GateRefused {
				t.Errorf("refused release's decision %+v (%v), want gate %q", c, err, contract.GateRefused)
			}
		})
	}
}
