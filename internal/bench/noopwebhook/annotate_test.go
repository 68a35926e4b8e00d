package main

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The annotate path's patch, applied to the pod, adds the one annotation
// whatever the pod's annotations were, and changes nothing else.
func TestAnnotateAddsOneAnnotation(t *testing.T) {
	a, err := newAnnotator()
	if err != nil {
		t.Fatal(err)
	}
	spec := `"spec":{"containers":[{"name":"c","image":"img"}]}`
	for _, tc := range []struct {
		name, pod, want string
	}{
		{"no annotations", `{"metadata":{"name":"p"},` + spec + `}`,
			`{"metadata":{"name":"p","annotations":{"bench.isamatch.io/m":"1"}},` + spec + `}`},
		{"null annotations", `{"metadata":{"name":"p","annotations":null},` + spec + `}`,
			`{"metadata":{"name":"p","annotations":{"bench.isamatch.io/m":"1"}},` + spec + `}`},
		{"empty annotations", `{"metadata":{"name":"p","annotations":{}},` + spec + `}`,
			`{"metadata":{"name":"p","annotations":{"bench.isamatch.io/m":"1"}},` + spec + `}`},
		{"other annotations", `{"metadata":{"name":"p","annotations":{"isa.request":"rv64gc"}},` + spec + `}`,
			`{"metadata":{"name":"p","annotations":{"isa.request":"rv64gc","bench.isamatch.io/m":"1"}},` + spec + `}`},
		{"annotation already there", `{"metadata":{"name":"p","annotations":{"bench.isamatch.io/m":"0"}},` + spec + `}`,
			`{"metadata":{"name":"p","annotations":{"bench.isamatch.io/m":"1"}},` + spec + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "u", Object: runtime.RawExtension{Raw: []byte(tc.pod)}}}
			resp := a.Handle(t.Context(), req)
			if err := resp.Complete(req); err != nil {
				t.Fatal(err)
			}
			if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
				t.Fatalf("response %+v: want allowed with a JSON patch", resp.AdmissionResponse)
			}
			p, err := jsonpatch.DecodePatch(resp.Patch)
			if err != nil {
				t.Fatalf("decode %s: %v", resp.Patch, err)
			}
			out, err := p.Apply([]byte(tc.pod))
			if err != nil {
				t.Fatalf("apply %s: %v", resp.Patch, err)
			}
			var got, want any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patched pod (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnnotateRejectsABadPod(t *testing.T) {
	a, err := newAnnotator()
	if err != nil {
		t.Fatal(err)
	}
	resp := a.Handle(t.Context(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Object: runtime.RawExtension{Raw: []byte(`[1]`)}}})
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 400 {
		t.Errorf("response %+v: want an error 400", resp.AdmissionResponse)
	}
}
