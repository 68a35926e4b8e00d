package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate"
	"github.com/isamatch/isamatch/pkg/registry"
)

// TestAffinityIsWhatTheWebhookWrites admits a pod with the request through
// the real PodMutator and compares the required node affinity it writes
// with isactl affinity's output, byte for byte.
func TestAffinityIsWhatTheWebhookWrites(t *testing.T) {
	tests := []struct {
		name     string
		request  string
		emulated bool
	}{
		{name: "x86 level", request: "x86-64-v3"},
		{name: "plain architectures", request: "amd64 | arm64"},
		{name: "alternatives across architectures", request: "rv64gcv | x86-64-v3 | arm64+sve"},
		{name: "redundant alternative", request: "rv64gc | rv64gcv"},
		{name: "profile", request: "rva23u64"},
		{name: "emulated", request: "rv64imfdv", emulated: true},
	}
	noImages := mutate.ImageResolverFunc(func(context.Context, string, registry.PullAuth) ([]registry.Platform, error) {
		t.Error("the pod names no image, yet one was resolved")
		return nil, nil
	})
	handler := mutate.NewPodMutator(noImages, inventory.NewStatic(nil), mutate.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := isa.BareRequestAnnotation
			args := []string{"affinity", tc.request}
			if tc.emulated {
				key = isa.BareQEMUAnnotation
				args = []string{"affinity", "--emulated", tc.request}
			}
			pod := &corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team", Annotations: map[string]string{key: tc.request}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
			}
			raw, err := json.Marshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			resp := handler.Admit(t.Context(), &admissionv1.AdmissionRequest{
				UID: "uid", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "team",
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw},
			})
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result.Message)
			}
			patch, err := jsonpatch.DecodePatch(resp.Patch)
			if err != nil {
				t.Fatal(err)
			}
			patched, err := patch.Apply(raw)
			if err != nil {
				t.Fatal(err)
			}
			var got corev1.Pod
			if err := json.Unmarshal(patched, &got); err != nil {
				t.Fatal(err)
			}
			written, err := yaml.Marshal(corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: got.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			}})
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := run(args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if diff := cmp.Diff(string(written), stdout.String()); diff != "" {
				t.Errorf("isactl affinity differs from the webhook's (-webhook +isactl):\n%s", diff)
			}
		})
	}
}
