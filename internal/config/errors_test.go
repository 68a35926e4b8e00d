package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestErrors: an error about a field a file set names that file, the last
// that set it; one about a default names none.
func TestErrors(t *testing.T) {
	layers := []Layer{
		{Path: "config.yaml", Data: []byte(webhookHeader + "gate:\n  timeout: -1s\nregistry:\n  mirrors: [a]\n")},
		{Path: "10-x.yaml", Data: []byte(webhookHeader + "gate:\n  workers: 0\n")},
	}
	errs := field.ErrorList{
		field.Invalid(field.NewPath("gate", "timeout"), "-1s", "must be positive"),
		field.Invalid(field.NewPath("gate", "workers"), 0, "want 1..256"),
		field.Invalid(field.NewPath("registry", "mirrors").Index(0), "a", "want REGISTRY=MIRROR"),
		field.Invalid(field.NewPath("server", "port"), 0, "want 1..65535"),
	}
	want := []string{
		`config.yaml: gate.timeout: Invalid value: "-1s": must be positive`,
		"10-x.yaml: gate.workers: Invalid value: 0: want 1..256",
		`config.yaml: registry.mirrors[0]: Invalid value: "a": want REGISTRY=MIRROR`,
		"server.port: Invalid value: 0: want 1..65535",
	}
	err := Errors(errs, layers)
	if err == nil {
		t.Fatal("Errors() = nil")
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("Errors() (-want +got):\n%s", diff)
	}
	if err := Errors(nil, layers); err != nil {
		t.Errorf("Errors(nil) = %v, want nil", err)
	}
}
