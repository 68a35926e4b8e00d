package webhookconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

const webhookHeader = "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n"

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    func(c *v1alpha1.WebhookConfiguration)
		wantErr string
	}{
		{name: "header only: the defaults", file: webhookHeader, want: func(*v1alpha1.WebhookConfiguration) {}},
		{name: "fields over the defaults", file: webhookHeader + "gate:\n  timeout: 45s\nregistry:\n  mirrors: [docker.io=mirror.local:5000]\nserver:\n  certRotation: false\n",
			want: func(c *v1alpha1.WebhookConfiguration) {
				c.Gate.Timeout = metav1.Duration{Duration: 45 * time.Second}
				c.Registry.Mirrors = []string{"docker.io=mirror.local:5000"}
				f := false
				c.Server.CertRotation = &f
			}},
		{name: "a default bool turned off", file: webhookHeader + "gate:\n  controller: false\n", want: func(c *v1alpha1.WebhookConfiguration) { c.Gate.Controller = false }},
		{name: "JSON", file: `{"apiVersion":"config.isamatch.io/v1alpha1","kind":"WebhookConfiguration","admission":{"enforcement":"warn"}}`,
			want: func(c *v1alpha1.WebhookConfiguration) { c.Admission.Enforcement = "warn" }},
		{name: "unknown field names its path", file: webhookHeader + "gate:\n  timout: 45s\n", wantErr: `unknown field "gate.timout"`},
		{name: "field names are case-sensitive", file: webhookHeader + "server:\n  Port: 1\n", wantErr: `unknown field "server.Port"`},
		{name: "duplicate field", file: webhookHeader + "gate:\n  timeout: 45s\n  timeout: 50s\n", wantErr: `"timeout"`},
		{name: "wrong type", file: webhookHeader + "server:\n  port: high\n", wantErr: "server.port"},
		{name: "wrong apiVersion", file: "apiVersion: config.isamatch.io/v1\nkind: WebhookConfiguration\n",
			wantErr: `apiVersion "config.isamatch.io/v1": want config.isamatch.io/v1alpha1`},
		{name: "no apiVersion", file: "kind: WebhookConfiguration\n", wantErr: `apiVersion "": want config.isamatch.io/v1alpha1`},
		{name: "the labeler's kind", file: "apiVersion: config.isamatch.io/v1alpha1\nkind: LabelerConfiguration\n",
			wantErr: `kind "LabelerConfiguration": want WebhookConfiguration`},
		{name: "not YAML", file: "gate: [", wantErr: "not a WebhookConfiguration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load([]byte(tc.file))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load() error = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load(): %v", err)
			}
			want := Default()
			tc.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadLayers: each layer changes only the fields it names; a
// list is replaced whole; an error names the layer.
func TestLoadLayers(t *testing.T) {
	layers := []config.Layer{
		{Path: "config.yaml", Data: []byte(webhookHeader + "gate:\n  timeout: 45s\n  workers: 3\nregistry:\n  mirrors: [a=m1, b=m2]\n")},
		{Path: "10-x.yaml", Data: []byte(webhookHeader + "gate:\n  timeout: 50s\n")},
		{Path: "20-y.yaml", Data: []byte(webhookHeader + "registry:\n  mirrors: [c=m3]\n  pullSecrets: true\n")},
	}
	got, err := LoadLayers(layers)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Gate.Timeout = metav1.Duration{Duration: 50 * time.Second}
	want.Gate.Workers = 3
	want.Registry.Mirrors = []string{"c=m3"}
	want.Registry.PullSecrets = true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadLayers() (-want +got):\n%s", diff)
	}

	bad := append(layers, config.Layer{Path: "30-z.yaml", Data: []byte(webhookHeader + "gate:\n  workrs: 1\n")})
	if _, err := LoadLayers(bad); err == nil || !strings.HasPrefix(err.Error(), `30-z.yaml: decode WebhookConfiguration: unknown field "gate.workrs"`) {
		t.Errorf("LoadLayers(bad) error = %v, want one naming 30-z.yaml and the field", err)
	}
}
