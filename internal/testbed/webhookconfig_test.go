package testbed

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/isamatch/isamatch/internal/memlimit"
)

// TestShippedWebhookConfiguration reads the repository's own file, so a
// change to config/webhook that the loader cannot take fails here.
func TestShippedWebhookConfiguration(t *testing.T) {
	root := filepath.Join("..", "..")
	shipped, err := ShippedWebhookConfiguration(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("/mutate-v1-pod", *shipped.Webhooks[0].ClientConfig.Service.Path); diff != "" {
		t.Errorf("shipped path (-want +got):\n%s", diff)
	}
	env, err := EnvtestWebhookConfiguration(root)
	if err != nil {
		t.Fatal(err)
	}
	w := env.Webhooks[0]
	if diff := cmp.Diff("mutate-v1-pod", *w.ClientConfig.Service.Path); diff != "" {
		t.Errorf("envtest path, leading slash dropped for envtest's installer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(admissionregistrationv1.Ignore, *w.FailurePolicy); diff != "" {
		t.Errorf("failurePolicy kept (-want +got):\n%s", diff)
	}
	if len(w.Rules) != 1 || w.Rules[0].Resources[0] != "pods" {
		t.Errorf("rules = %+v, want the pods rule", w.Rules)
	}
}

func TestShippedWebhookConfigurationErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string // absent when empty
		wantErr string
	}{
		{"missing file", "", "does not exist: run from a checkout"},
		{"unknown field", "kind: MutatingWebhookConfiguration\nwebhookz: []\n", "unknown field"},
		{"wrong kind", "kind: Service\n", `kind "Service"`},
		{"no webhooks", "kind: MutatingWebhookConfiguration\nwebhooks: []\n", "has no webhooks"},
		{"no path", "kind: MutatingWebhookConfiguration\nwebhooks:\n- name: a\n  clientConfig:\n    url: https://x\n", "webhook a in"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.file != "" {
				path := filepath.Join(root, WebhookConfigFile)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ShippedWebhookConfiguration(root)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ShippedWebhookConfiguration error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestShippedWebhookEnv(t *testing.T) {
	root := filepath.Join("..", "..")
	env, err := ShippedWebhookEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	// The memory request, in bytes, resolved as the kubelet would.
	if !slices.ContainsFunc(env, func(kv string) bool {
		v, ok := strings.CutPrefix(kv, memlimit.RequestEnv+"=")
		n, err := strconv.ParseInt(v, 10, 64)
		return ok && err == nil && n > 0
	}) {
		t.Errorf("ShippedWebhookEnv() = %q, want ISAMATCH_MEMORY_REQUEST with a number of bytes", env)
	}
	if _, err := ShippedWebhookEnv(t.TempDir()); err == nil || !strings.Contains(err.Error(), "run from a checkout") {
		t.Errorf("ShippedWebhookEnv(empty dir) error = %v, want one saying to run from a checkout", err)
	}
}
