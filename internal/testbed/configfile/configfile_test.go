package configfile

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	componentconfig "github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/internal/config/webhookconfig"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// TestWebhook: the file holds the defaults with the caller's
// changes, zero values and empty lists included, as the webhook loads it.
func TestWebhook(t *testing.T) {
	no := false
	configure := func(c *v1alpha1.WebhookConfiguration) {
		c.Server.CertRotation = &no
		c.Gate.Controller = false
		c.Admission.NamespaceEnforcement = nil
		c.Registry.AllowRegistries = []string{"127.0.0.1:5000"}
		c.Gate.Timeout = metav1.Duration{Duration: 3 * time.Second}
	}
	path, err := Webhook(t.TempDir(), configure)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := webhookconfig.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	want := webhookconfig.Default()
	configure(&want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Webhook() read back (-want +got):\n%s", diff)
	}
	if errs := webhookconfig.Validate(&got); len(errs) > 0 {
		t.Errorf("webhookconfig.Validate() = %v", errs)
	}
}

// TestLabeler is TestWebhook for the labeler.
func TestLabeler(t *testing.T) {
	configure := func(c *v1alpha1.LabelerConfiguration) {
		c.HostRoot, c.Commands.Exec, c.HWProbe = "/roots/visionfive2", v1alpha1.ExecDirect, false
	}
	path, err := Labeler(t.TempDir(), configure)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := componentconfig.LoadLabeler(data)
	if err != nil {
		t.Fatal(err)
	}
	want := componentconfig.DefaultLabeler()
	configure(&want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Labeler() read back (-want +got):\n%s", diff)
	}
}
