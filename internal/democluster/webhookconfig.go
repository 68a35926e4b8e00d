package democluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// WebhookConfigDir is where the shipped MutatingWebhookConfiguration lives,
// relative to the repository root.
const WebhookConfigDir = "config/webhook"

// WebhookConfiguration returns the MutatingWebhookConfiguration the demo
// installs: the one under config/webhook (rules, failurePolicy,
// namespaceSelector kept) when the repository has it, else a built-in copy
// of its specification; source says which. The service reference stays: the
// envtest installer turns it into a URL on 127.0.0.1 with its own CA (the
// path loses its leading slash because the installer adds one).
func WebhookConfiguration(repoRoot string) (cfg *admissionregistrationv1.MutatingWebhookConfiguration, source string, err error) {
	dir := filepath.Join(repoRoot, WebhookConfigDir)
	cfg, err = loadMutatingConfig(dir)
	switch {
	case err != nil:
		return nil, "", err
	case cfg == nil:
		cfg, source = builtinMutatingConfig(), "the built-in copy (no MutatingWebhookConfiguration under "+WebhookConfigDir+")"
	default:
		source = WebhookConfigDir
	}
	for i := range cfg.Webhooks {
		cc := &cfg.Webhooks[i].ClientConfig
		if cc.Service == nil || cc.Service.Path == nil {
			return nil, "", fmt.Errorf("webhook %s in %s has no service path: the demo needs clientConfig.service.path", cfg.Webhooks[i].Name, source)
		}
		p := strings.TrimPrefix(*cc.Service.Path, "/")
		cc.Service.Path = &p
		cc.URL = nil
	}
	return cfg, source, nil
}

// loadMutatingConfig returns the first MutatingWebhookConfiguration in the
// YAML files of dir, or nil if there is none (or no dir).
func loadMutatingConfig(dir string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		for _, doc := range splitYAML(data) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				return nil, fmt.Errorf("decode %s: %w", f, err)
			}
			if tm.Kind != "MutatingWebhookConfiguration" {
				continue
			}
			var cfg admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.Unmarshal(doc, &cfg); err != nil {
				return nil, fmt.Errorf("decode MutatingWebhookConfiguration in %s: %w", f, err)
			}
			if len(cfg.Webhooks) == 0 {
				return nil, errors.New("MutatingWebhookConfiguration in " + f + " has no webhooks")
			}
			return &cfg, nil
		}
	}
	return nil, nil
}

// splitYAML splits a multi-document YAML file at "---" lines.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), data...), []byte("\n---")) {
		if len(bytes.TrimSpace(d)) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

// builtinMutatingConfig is config/webhook's MutatingWebhookConfiguration as
// issue 4 specifies it.
func builtinMutatingConfig() *admissionregistrationv1.MutatingWebhookConfiguration {
	path := "mutate-v1-pod"
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	never := admissionregistrationv1.NeverReinvocationPolicy
	timeout := int32(10)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "isamatch"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "pods.isamatch.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{Namespace: "isamatch-system", Name: "isamatch-webhook", Path: &path},
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      &never,
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "isamatch-system"}},
				{Key: "isa.isamatch.io/ignore", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}},
			}},
		}},
	}
}
