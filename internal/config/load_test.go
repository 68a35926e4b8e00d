package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

const webhookHeader = "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n"

func TestLoadWebhook(t *testing.T) {
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
			got, err := LoadWebhook([]byte(tc.file))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadWebhook() error = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadWebhook(): %v", err)
			}
			want := DefaultWebhook()
			tc.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("LoadWebhook() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadLabeler(t *testing.T) {
	header := "apiVersion: config.isamatch.io/v1alpha1\nkind: LabelerConfiguration\n"
	got, err := LoadLabeler([]byte(header + "interval: 5m\ncommands:\n  uid: 1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultLabeler()
	want.Interval.Duration, want.Commands.UID = 5*time.Minute, 1000
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadLabeler() (-want +got):\n%s", diff)
	}
	if _, err := LoadLabeler([]byte(header + "nodeName: n1\n")); err == nil || !strings.Contains(err.Error(), `unknown field "nodeName"`) {
		t.Errorf("LoadLabeler(nodeName) error = %v, want unknown field \"nodeName\"", err)
	}
	if _, err := LoadLabeler([]byte(webhookHeader)); err == nil || !strings.Contains(err.Error(), `kind "WebhookConfiguration": want LabelerConfiguration`) {
		t.Errorf("LoadLabeler(a WebhookConfiguration) error = %v, want the kind named", err)
	}
}

func TestReadFileBound(t *testing.T) {
	path := t.TempDir() + "/big.yaml"
	if err := os.WriteFile(path, []byte(strings.Repeat("#", MaxFileBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("ReadFile(%d bytes) error = %v, want the bound named", MaxFileBytes+1, err)
	}
}
