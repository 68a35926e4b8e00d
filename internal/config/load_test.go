package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const webhookHeader = "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n"

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
