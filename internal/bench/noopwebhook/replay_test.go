package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func writeFile(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "patches.json")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReplayAnswersTheRecordedPatch(t *testing.T) {
	r, err := loadReplayer(writeFile(t, `{
		"": [{"op": "add", "path": "/metadata/annotations", "value": {"a": "none"}}],
		"rv64gc": [{"op": "add", "path": "/metadata/annotations/a", "value": "gc"}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pod, want string
	}{
		{"no request", `{"metadata":{"name":"p"}}`, `[{"op":"add","path":"/metadata/annotations","value":{"a":"none"}}]`},
		{"recorded request", `{"metadata":{"annotations":{"isa.request":"rv64gc"}}}`, `[{"op":"add","path":"/metadata/annotations/a","value":"gc"}]`},
		{"request with nothing recorded", `{"metadata":{"annotations":{"isa.request":"rv64imfd"}}}`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "u", Object: runtime.RawExtension{Raw: []byte(tc.pod)}}}
			resp := r.Handle(t.Context(), req)
			if err := resp.Complete(req); err != nil {
				t.Fatal(err)
			}
			if !resp.Allowed {
				t.Fatalf("not allowed: %+v", resp.Result)
			}
			if string(resp.Patch) != tc.want {
				t.Errorf("patch = %s, want %s", resp.Patch, tc.want)
			}
			if (tc.want != "") != (resp.PatchType != nil) {
				t.Errorf("patch type = %v with patch %q", resp.PatchType, resp.Patch)
			}
		})
	}
}

func TestReplayRejectsBadFiles(t *testing.T) {
	for _, tc := range []struct{ name, body, wantErr string }{
		{"not an object", `[1]`, "want a JSON object of isa.request values to JSON patches"},
		{"patch not an array", `{"": {"op": "add"}}`, "want a JSON object"},
		{"too big", `{"": [` + strings.Repeat(`{"op":"test","path":"/x","value":1},`, 40000) + `{}]}`, "is over 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadReplayer(writeFile(t, tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := loadReplayer(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "open the replay patches") {
		t.Errorf("missing file: error = %v", err)
	}
}
