package democluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestWebhookConfiguration(t *testing.T) {
	const shipped = `apiVersion: v1
kind: Service
metadata:
  name: isamatch-webhook
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: isamatch
webhooks:
- name: pods.isamatch.io
  clientConfig:
    service:
      name: isamatch-webhook
      namespace: isamatch-system
      path: /mutate-v1-pod
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
`
	tests := []struct {
		name        string
		files       map[string]string
		wantSource  string
		wantFailure admissionregistrationv1.FailurePolicyType
		wantErr     bool
	}{
		{"no config dir: built-in copy", nil, "the built-in copy (no MutatingWebhookConfiguration under config/webhook)", admissionregistrationv1.Ignore, false},
		{"shipped file wins", map[string]string{"webhook.yaml": shipped}, "config/webhook", admissionregistrationv1.Fail, false},
		{"no path", map[string]string{"w.yaml": "kind: MutatingWebhookConfiguration\nwebhooks:\n- name: a\n  clientConfig:\n    url: https://x\n"}, "", "", true},
		{"empty webhooks", map[string]string{"w.yaml": "kind: MutatingWebhookConfiguration\nwebhooks: []\n"}, "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.files != nil {
				dir := filepath.Join(root, WebhookConfigDir)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, data := range tc.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg, source, err := WebhookConfiguration(root)
			if (err != nil) != tc.wantErr {
				t.Fatalf("WebhookConfiguration error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.wantSource, source); diff != "" {
				t.Errorf("source (-want +got):\n%s", diff)
			}
			w := cfg.Webhooks[0]
			if diff := cmp.Diff("mutate-v1-pod", *w.ClientConfig.Service.Path); diff != "" {
				t.Errorf("path, leading slash dropped for envtest's installer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFailure, *w.FailurePolicy); diff != "" {
				t.Errorf("failurePolicy kept (-want +got):\n%s", diff)
			}
			if len(w.Rules) != 1 || w.Rules[0].Resources[0] != "pods" {
				t.Errorf("rules = %+v, want the pods rule", w.Rules)
			}
		})
	}
}
